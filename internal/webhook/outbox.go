package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/outbox"
)

// The webhook outbox (§18): calls the hub queued with the events that make
// them, made by an outbox dispatcher (internal/outbox) with each endpoint
// as its own target, retried on the backoff schedule.

// limits are what each endpoint is given (§18).
var limits = outbox.Limits{Concurrency: Concurrency, Rate: Rate, Burst: Burst, Lease: lease, Batch: batch, Retry: Retry}

// newOutbox is the dispatcher of the hooks' calls, stepping when the hub
// rings its WebhookKick.
func (k *Hooks) newOutbox() *outbox.Dispatcher[*hub.WebhookCall, hub.WebhookAttempt] {
	o := &outbox.Dispatcher[*hub.WebhookCall, hub.WebhookAttempt]{Name: "webhooks", Limits: limits, Now: k.hub.Now, Log: k.log,
		Kick: k.hub.WebhookKick()}
	o.Due = func(ctx context.Context, now time.Time) ([]string, error) {
		ids, err := k.store.DueWebhooks(ctx, now)
		if err != nil {
			return nil, hub.AsError(err)
		}
		return ids, nil
	}
	o.Claim = func(ctx context.Context, now, until time.Time, want map[string]int) ([]*hub.WebhookCall, error) {
		return hub.ClaimEach(ctx, k.store, want, func(tx hub.Tx, webhookID string, n int) ([]*hub.WebhookCall, error) {
			return tx.ClaimWebhookCalls(ctx, webhookID, now, until, n)
		})
	}
	o.Send = k.send
	o.Record = k.record
	return o
}

// Deliver is one delivery step (§18), for tests and tools: it claims the
// calls that are due — for each endpoint as many as it has room
// (Concurrency in flight) and rate (Rate) for now — makes them, and
// returns once they ended. A call answered 2xx leaves the outbox; any
// other is retried on Retry's schedule with the same webhook-id, and one
// that has failed for Retry.For disables its endpoint, dropping its calls,
// and tells the owner (webhook.disabled). Calls beyond an endpoint's room
// and rate stay in the outbox for a later step. Hooks with no Sender send
// nothing. palaver serve runs Run instead, which waits for no call before
// starting another.
func (k *Hooks) Deliver(ctx context.Context) (hub.Pass, error) {
	if k.sender == nil {
		return hub.Pass{Outcomes: map[string]int{}}, nil
	}
	return hub.DeliverOnce(ctx, k.outbox.Dispatch)
}

// send makes one claimed call at at, within Timeout, and says how it
// went; it connects only to addresses the hub's AllowFetch lets through
// for the endpoint's host.
func (k *Hooks) send(ctx context.Context, c *hub.WebhookCall, at time.Time) hub.WebhookAttempt {
	host := ""
	if u, err := url.Parse(c.URL); err == nil {
		host = u.Hostname()
	}
	sctx, cancel := context.WithTimeout(ctx, Timeout)
	res := k.sender.Send(sctx, c, at, func(ip netip.Addr) bool { return k.hub.AllowFetch(host, ip) })
	cancel()
	a := hub.WebhookAttempt{ID: hub.NewID(hub.IDWebhookAttempt, at), WebhookID: c.WebhookID, CallID: c.ID, Type: c.Type, At: at,
		Status: res.Status, Duration: res.Duration}
	if res.Err != nil {
		a.Status, a.Error = 0, hub.Preview(hub.CleanText(res.Err.Error()), hub.CallError)
	}
	return a
}

// record logs a call's attempt and does what its outcome says, in one
// transaction: delivered, the call leaves the outbox; failed, it is due
// again at retry; given up, its endpoint is disabled (its calls dropped)
// and the owner hears webhook.disabled — once, though several of the
// endpoint's calls in flight may give up side by side.
func (k *Hooks) record(ctx context.Context, c *hub.WebhookCall, a hub.WebhookAttempt, outcome string, retry time.Time) error {
	now := k.hub.Now()
	disabled := false
	err := k.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		disabled = false
		if err := tx.InsertWebhookAttempt(ctx, &a, LogSize); err != nil {
			return nil, err
		}
		switch outcome {
		case Delivered:
			return nil, tx.DeleteWebhookCall(ctx, c.ID)
		case Failed:
			r := *c
			r.Attempts, r.DueAt = c.Attempts+1, retry
			return nil, tx.RescheduleWebhookCall(ctx, &r)
		}
		w, err := tx.Webhook(ctx, c.WebhookID)
		if errors.Is(err, hub.ErrNoRows) || (err == nil && !w.Enabled()) {
			return nil, nil // removed, or turned off by another of its calls
		}
		if err != nil {
			return nil, err
		}
		reason := fmt.Sprintf("its calls failed for %d hours; the last: %s", int(Retry.For.Hours()), a.Problem())
		if err := tx.SetWebhookDisabled(ctx, c.WebhookID, now, reason); err != nil {
			return nil, err
		}
		data, err := json.Marshal(map[string]string{"agent": c.AgentHandle, "webhook_id": c.WebhookID, "url": c.URL, "reason": reason})
		if err != nil {
			return nil, err
		}
		disabled = true
		return []*hub.Event{{RecipientID: c.OwnerID, Type: hub.EventWebhookDisabled, Data: data, CreatedAt: now}}, nil
	})
	if err != nil {
		return err
	}
	if disabled {
		k.log.Warn("webhook disabled", "agent", c.AgentHandle, "webhook", c.WebhookID, "url", c.URL, "last", a.Problem())
	}
	return nil
}

// Run delivers webhook calls until ctx ends (palaver serve runs it), then
// waits for the calls in flight, which ctx stops (their claims lapse and
// they are made again). Each endpoint has Concurrency calls in flight at
// most and starts Rate a second, and no endpoint waits for another's
// calls. Steps come at once when a change of the hub queued calls here or
// an endpoint may have more due, and every period otherwise (calls queued
// by other replicas, retries falling due). count, when not nil, hears
// each call's outcome, from the calls' own goroutines.
func (k *Hooks) Run(ctx context.Context, period time.Duration, count func(outcome string, n int)) {
	if k.sender == nil {
		<-ctx.Done()
		return
	}
	var told func(string)
	if count != nil {
		told = func(outcome string) { count(outcome, 1) }
	}
	k.outbox.Run(ctx, period, told)
}
