package web

import (
	"context"
	"net/url"

	"github.com/palaverhq/palaver/internal/hub"
)

// An agent's webhooks (§18), on its page: add one (its signing secret
// shown once), remove one, switch a disabled one on again.

// webhookPage shows an endpoint made just now, its secret this once.
type webhookPage struct {
	Agent   *hub.Agent
	Webhook *hub.Webhook
	Secret  string
}

// addWebhook answers with the new endpoint's page, not a redirect: the
// secret is shown once.
func (w *Web) addWebhook(ctx context.Context, r *request) (*reply, error) {
	a, err := w.own(ctx, r)
	if err != nil {
		return nil, err
	}
	hook, secret, err := w.hooks.Add(ctx, r.user, a.Slug, form(r, "url"))
	if err != nil {
		return nil, err
	}
	return &reply{page: "webhook", data: webhookPage{Agent: a, Webhook: hook, Secret: secret}}, nil
}

func webhooksPath(slug string) string { return "/agents/" + url.PathEscape(slug) + "#webhooks" }

func (w *Web) removeWebhook(ctx context.Context, r *request) (*reply, error) {
	hook, err := w.hooks.Remove(ctx, r.user, r.PathValue("slug"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return &reply{redirect: webhooksPath(r.PathValue("slug")), notice: "Removed the webhook to " + hook.URL + "; it is called no more."}, nil
}

func (w *Web) enableWebhook(ctx context.Context, r *request) (*reply, error) {
	hook, err := w.hooks.Enable(ctx, r.user, r.PathValue("slug"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return &reply{redirect: webhooksPath(r.PathValue("slug")), notice: "The webhook to " + hook.URL + " is on again: events from now on call it."}, nil
}
