package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/webhook"
)

// Webhooks (§18): an agent's endpoints and their delivery logs.

// webhookView is an endpoint with its delivery log, newest first.
type webhookView struct {
	ID             string               `json:"id"`
	URL            string               `json:"url"`
	Enabled        bool                 `json:"enabled"`
	CreatedAt      string               `json:"created_at"`
	DisabledAt     string               `json:"disabled_at"`
	DisabledReason string               `json:"disabled_reason"`
	Pending        int                  `json:"pending"`
	Attempts       []webhookAttemptView `json:"attempts"`
}

// webhookAttemptView is one call made, and how it went.
type webhookAttemptView struct {
	At         string `json:"at"`
	WebhookID  string `json:"webhook_id"` // the webhook-id header sent
	Type       string `json:"type"`
	OK         bool   `json:"ok"`
	Status     int    `json:"status"`
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
}

func newWebhookView(v webhook.View) webhookView {
	out := webhookView{ID: v.ID, URL: v.URL, Enabled: v.Enabled(), CreatedAt: timeText(v.CreatedAt),
		DisabledAt: timeText(v.DisabledAt), DisabledReason: v.DisabledReason, Pending: v.Pending,
		Attempts: viewsOf(v.Attempts, func(a hub.WebhookAttempt) webhookAttemptView {
			return webhookAttemptView{At: timeText(a.At), WebhookID: a.CallID, Type: a.Type, OK: a.OK(),
				Status: a.Status, Error: a.Error, DurationMS: a.Duration.Milliseconds()}
		})}
	return out
}

type webhooksView struct {
	Webhooks []webhookView `json:"webhooks"`
}

// addedWebhookView is an endpoint just added, with its signing secret,
// shown this once.
type addedWebhookView struct {
	webhookView
	Secret string `json:"secret"`
}

// removedWebhookView says an endpoint is gone.
type removedWebhookView struct {
	ID      string `json:"id"`
	Removed bool   `json:"removed"`
}

func (a *API) webhooks(ctx context.Context, r *request) (any, error) {
	vs, err := a.hooks.List(ctx, r.user, r.PathValue("slug"))
	if err != nil {
		return nil, err
	}
	return webhooksView{Webhooks: viewsOf(vs, newWebhookView)}, nil
}

// addWebhook answers with the endpoint and its signing secret, shown this
// once.
func (a *API) addWebhook(ctx context.Context, r *request) (any, error) {
	var in struct {
		URL string `json:"url"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	w, secret, err := a.hooks.Add(ctx, r.user, r.PathValue("slug"), in.URL)
	if err != nil {
		return nil, err
	}
	return addedWebhookView{webhookView: newWebhookView(webhook.View{Webhook: w}), Secret: secret}, nil
}

func (a *API) removeWebhook(ctx context.Context, r *request) (any, error) {
	w, err := a.hooks.Remove(ctx, r.user, r.PathValue("slug"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return removedWebhookView{ID: w.ID, Removed: true}, nil
}

func (a *API) enableWebhook(ctx context.Context, r *request) (any, error) {
	w, err := a.hooks.Enable(ctx, r.user, r.PathValue("slug"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return newWebhookView(webhook.View{Webhook: w}), nil
}
