package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/outbox"
)

// The webhooks' numbers (§18), declared once: the faces and docs read them.
const (
	MaxPerAgent = 5                // endpoints per agent
	Rate        = 5                // calls started a second to one endpoint, by each server process
	Burst       = 10               // calls started at once to an endpoint that was quiet, within Rate
	Concurrency = 10               // calls to one endpoint in flight at once, in each server process
	LogSize     = 20               // attempts kept in each endpoint's delivery log
	Timeout     = 10 * time.Second // one call, from connecting to the answer's last byte

	lease = 2 * time.Minute // a claim: well over Timeout
	batch = 100             // calls claimed in one step, across endpoints
)

// SecretPrefix starts every endpoint's signing secret.
const SecretPrefix = "whsec_"

// Retry is how a failing webhook call is retried (§18): after about 10 s,
// 20 s, 40 s … and then every 2 h, for 24 h; then its endpoint is
// disabled and the owner told.
var Retry = outbox.Backoff{First: 10 * time.Second, Max: 2 * time.Hour, Jitter: 0.2, For: 24 * time.Hour}

// What became of a call's attempt: the values of
// palaver_webhook_deliveries_total{outcome}.
const (
	Delivered = outbox.Delivered // a 2xx answer: the call leaves the outbox
	Failed    = outbox.Failed    // no 2xx answer: it is retried later
	GaveUp    = outbox.GaveUp    // failed for Retry.For: its endpoint is disabled
)

// Outcomes lists every outcome.
var Outcomes = []string{Delivered, Failed, GaveUp}

// Store is what Hooks reads and writes.
type Store interface {
	hub.WebhookReads
	Update(ctx context.Context, fn func(tx hub.Tx) error) error
}

// Hooks are the agents' webhooks over the hub and its store: the faces
// decode, call one of its methods, and render; palaver serve runs its
// outbox (Run).
type Hooks struct {
	hub    *hub.Hub // its clock, its egress policy, the person's agents, its commits
	store  Store
	sender *Sender // nil: calls are queued but none is made here
	log    *slog.Logger
	outbox *outbox.Dispatcher[*hub.WebhookCall, hub.WebhookAttempt]
}

// HooksOptions configure NewHooks.
type HooksOptions struct {
	Hub   *hub.Hub
	Store Store // the hub's store
	// Sender makes the calls; nil: the hub queues them but these Hooks
	// make none (an admin command; the server makes them).
	Sender *Sender
	Logger *slog.Logger
}

// NewHooks returns the webhooks of the hub's agents.
func NewHooks(o HooksOptions) *Hooks {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	k := &Hooks{hub: o.Hub, store: o.Store, sender: o.Sender, log: o.Logger}
	k.outbox = k.newOutbox()
	return k
}

// checkURL returns an endpoint's URL as it is kept, or says what is wrong
// with it (hub.CheckOutboundURL).
func (k *Hooks) checkURL(ctx context.Context, raw string) (string, error) {
	return k.hub.CheckOutboundURL(ctx, raw, hub.Outbound{What: "webhook", Example: "https://example.com/palaver", Sent: "webhooks are sent",
		UserInfo: "put no credentials in it (calls are signed with the endpoint's secret)", Reach: "webhooks call only"})
}

// newSecret is a fresh signing secret: whsec_ and 32 random bytes in
// base64, as Standard Webhooks' libraries take it.
func newSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// Add gives one of the person's agents an endpoint (§18) and returns it
// with its signing secret, which is shown this once. The URL is https and
// its host resolves only to public addresses (or is one the admin let
// through); an agent has at most MaxPerAgent. An archived agent gets none.
func (k *Hooks) Add(ctx context.Context, u *hub.User, slug, rawURL string) (*hub.Webhook, string, error) {
	a, err := k.hub.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, "", err
	}
	if a.Archived() {
		return nil, "", hub.Invalid("", "%s is archived; bring it back before giving it a webhook", a.Handle())
	}
	endpoint, err := k.checkURL(ctx, rawURL)
	if err != nil {
		return nil, "", err
	}
	now := k.hub.Now()
	w := &hub.Webhook{ID: hub.NewID(hub.IDWebhook, now), AgentID: a.ID, AgentHandle: a.Handle(), URL: endpoint, CreatedAt: now}
	secret := newSecret()
	err = k.store.Update(ctx, func(tx hub.Tx) error {
		ws, err := tx.Webhooks(ctx, a.ID)
		if err != nil {
			return err
		}
		if len(ws) >= MaxPerAgent {
			return hub.Invalid("", "%s has %d webhooks already, the most an agent may have; remove one first", a.Handle(), MaxPerAgent)
		}
		return tx.InsertWebhook(ctx, w, secret)
	})
	k.hub.ForgetWebhookAgents()
	if err != nil {
		return nil, "", hub.AsError(err)
	}
	return w, secret, nil
}

// View is an endpoint with its delivery log, newest first.
type View struct {
	*hub.Webhook
	Attempts []hub.WebhookAttempt
}

// List lists the person's agent's endpoints, oldest first, each with its
// latest LogSize attempts.
func (k *Hooks) List(ctx context.Context, u *hub.User, slug string) ([]View, error) {
	a, err := k.hub.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	return k.Of(ctx, a)
}

// Of lists the agent's endpoints, as List does: the agent's page shows
// them beside its hub.AgentDetail.
func (k *Hooks) Of(ctx context.Context, a *hub.Agent) ([]View, error) {
	ws, err := k.store.Webhooks(ctx, a.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	out := make([]View, 0, len(ws))
	for _, w := range ws {
		v := View{Webhook: w}
		if v.Attempts, err = k.store.WebhookAttempts(ctx, w.ID, LogSize); err != nil {
			return nil, hub.AsError(err)
		}
		out = append(out, v)
	}
	return out, nil
}

// own is the endpoint with this id of the person's agent; any other is
// not_found.
func (k *Hooks) own(ctx context.Context, u *hub.User, slug, id string) (*hub.Webhook, error) {
	a, err := k.hub.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	w, err := k.store.Webhook(ctx, id)
	if err == nil && w.AgentID != a.ID {
		err = hub.ErrNoRows
	}
	if err != nil {
		return nil, hub.LookupErr(err, "%s has no webhook %q", a.Handle(), hub.Echo(id))
	}
	return w, nil
}

// Remove deletes one of the person's agent's endpoints, with the calls it
// still had to make and its log.
func (k *Hooks) Remove(ctx context.Context, u *hub.User, slug, id string) (*hub.Webhook, error) {
	w, err := k.own(ctx, u, slug, id)
	if err != nil {
		return nil, err
	}
	if err := k.store.Update(ctx, func(tx hub.Tx) error { return tx.DeleteWebhook(ctx, w.ID) }); err != nil {
		return nil, hub.AsError(err)
	}
	return w, nil
}

// Enable switches a disabled endpoint on again, its URL checked again as
// when it was saved; the events that arrive from now on are called.
// Enabling one that is on is not an error.
func (k *Hooks) Enable(ctx context.Context, u *hub.User, slug, id string) (*hub.Webhook, error) {
	w, err := k.own(ctx, u, slug, id)
	if err != nil || w.Enabled() {
		return w, err
	}
	if _, err := k.checkURL(ctx, w.URL); err != nil {
		return nil, err
	}
	if err := k.store.Update(ctx, func(tx hub.Tx) error { return tx.SetWebhookDisabled(ctx, w.ID, time.Time{}, "") }); err != nil {
		return nil, hub.AsError(err)
	}
	k.hub.ForgetWebhookAgents()
	w.DisabledAt, w.DisabledReason = time.Time{}, ""
	return w, nil
}
