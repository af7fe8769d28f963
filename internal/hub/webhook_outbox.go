package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"sync"
	"time"

	"github.com/palaverhq/palaver/internal/outbox"
)

// The webhook outbox (§18): calls queued with the events that make them,
// made by an outbox dispatcher (internal/outbox) with each endpoint as
// its own target, retried on the backoff schedule.

// waiting reports whether a wait of the principal is parked in this
// process.
func (h *Hub) waiting(principalID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.waits[principalID] {
		if w.Err() == nil {
			return true
		}
	}
	return false
}

// ownDoing reports whether an event tells its agent of what it did itself
// — its own words coming back, its send being held — which no call wakes
// it for (or an agent woken to send would wake itself again).
func ownDoing(e *Event) bool {
	return e.Type == EventMessagePending || (e.Type == EventMessageNew && e.Message != nil && e.Message.SenderID == e.RecipientID)
}

// queueWebhooks puts into the outbox, in the transaction that stores the
// events, a call to each enabled endpoint of every agent an event is for
// that has no wait parked in this process, unless the event is its own
// doing. It reports whether it queued any. A wait parked on another replica
// cannot be seen from here: that agent is called anyway, at worst once
// more than it needed.
func (h *Hub) queueWebhooks(ctx context.Context, tx Tx, events []*Event) (bool, error) {
	var calls []*WebhookCall
	var hooks map[string][]*Webhook
	var hooked map[string]bool
	now := h.now()
	for _, e := range events {
		if idKind(e.RecipientID) != IDAgent || ownDoing(e) || h.waiting(e.RecipientID) {
			continue
		}
		if hooked == nil {
			var err error
			if hooked, err = h.hooked.agents(ctx, now, tx.WebhookAgents); err != nil {
				return false, err
			}
		}
		if !hooked[e.RecipientID] {
			continue
		}
		ws, seen := hooks[e.RecipientID]
		if !seen {
			all, err := tx.Webhooks(ctx, e.RecipientID)
			if err != nil {
				return false, err
			}
			for _, w := range all {
				if w.Enabled() {
					ws = append(ws, w)
				}
			}
			if hooks == nil {
				hooks = map[string][]*Webhook{}
			}
			hooks[e.RecipientID] = ws
		}
		if len(ws) == 0 {
			continue
		}
		payload, err := json.Marshal(WebhookPayload{Type: e.Type, Timestamp: FormatTime(now), Data: WebhookData{
			Agent: ws[0].AgentHandle, ConversationID: e.ConversationID, MessageID: e.MessageID, Cursor: h.cursor(e.RecipientID, Pos{e.Tx, e.ID - 1})}})
		if err != nil {
			return false, err
		}
		for _, w := range ws {
			calls = append(calls, &WebhookCall{ID: NewID(IDWebhookCall, now), WebhookID: w.ID, EventID: e.ID, Type: e.Type,
				Payload: payload, CreatedAt: now, DueAt: now})
		}
	}
	if len(calls) == 0 {
		return false, nil
	}
	return true, tx.InsertWebhookCalls(ctx, calls)
}

// kickWebhooks asks for a delivery step now rather than at the next tick.
func (h *Hub) kickWebhooks() { h.hooks.Wake() }

// The outbox's view of a call (outbox.Row): its endpoint is its target.
func (c *WebhookCall) Target() string    { return c.WebhookID }
func (c *WebhookCall) Queued() time.Time { return c.CreatedAt }
func (c *WebhookCall) Failed() int       { return c.Attempts }

// webhookLimits are what each endpoint is given (§18).
var webhookLimits = outbox.Limits{Concurrency: WebhookConcurrency, Rate: WebhookRate, Burst: WebhookBurst,
	Lease: webhookLease, Batch: webhookBatch, Retry: WebhookRetry}

// webhookOutbox dispatches the hub's webhook calls (internal/outbox),
// each endpoint a target with its own calls in flight and rate.
type webhookOutbox = outbox.Dispatcher[*WebhookCall, WebhookAttempt]

// newWebhookOutbox is the hub's webhookOutbox.
func (h *Hub) newWebhookOutbox() *webhookOutbox {
	o := &webhookOutbox{Name: "webhooks", Limits: webhookLimits, Now: h.now, Log: h.log}
	o.Due = func(ctx context.Context, now time.Time) ([]string, error) {
		ids, err := h.store.DueWebhooks(ctx, now)
		if err != nil {
			return nil, AsError(err)
		}
		return ids, nil
	}
	o.Claim = func(ctx context.Context, now, until time.Time, want map[string]int) ([]*WebhookCall, error) {
		var calls []*WebhookCall // what the last run of the transaction claimed
		err := h.store.Update(ctx, func(tx Tx) error {
			calls = nil
			for id, n := range want {
				cs, err := tx.ClaimWebhookCalls(ctx, id, now, until, n)
				if err != nil {
					return err
				}
				calls = append(calls, cs...)
			}
			return nil
		})
		if err != nil {
			return nil, AsError(err)
		}
		return calls, nil
	}
	o.Send = h.sendWebhook
	o.Record = h.recordWebhook
	return o
}

// Pass is what one step of an outbox did (DeliverWebhooks, DeliverRemotes,
// DeliverNotifications): how many it claimed, and how many of them ended
// with each outcome (those stopped by ctx count as none: they are made
// again).
type Pass struct {
	Claimed  int
	Outcomes map[string]int
}

// deliverOnce is one step of an outbox: it claims what is due, makes it,
// and returns once each ended.
func deliverOnce(ctx context.Context, dispatch func(context.Context, func(string)) (*outbox.Pass, error)) (Pass, error) {
	pass, err := dispatch(ctx, nil)
	outcomes, werr := pass.Wait()
	return Pass{Claimed: pass.Claimed, Outcomes: outcomes}, errors.Join(err, werr)
}

// DeliverWebhooks is one delivery step (§18), for tests and tools: it
// claims the calls that are due — for each endpoint as many as it has
// room (WebhookConcurrency in flight) and rate (WebhookRate) for now —
// makes them, and returns once they ended. A call answered 2xx leaves the
// outbox; any other is retried on WebhookRetry's schedule with the same
// webhook-id, and one that has failed for WebhookRetry.For disables its
// endpoint, dropping its calls, and tells the owner (webhook.disabled).
// Calls beyond an endpoint's room and rate stay in the outbox for a later
// step. A hub with no WebhookSender sends nothing. palaver serve runs
// RunWebhooks instead, which waits for no call before starting another.
func (h *Hub) DeliverWebhooks(ctx context.Context) (Pass, error) {
	if h.webhooks == nil {
		return Pass{Outcomes: map[string]int{}}, nil
	}
	return deliverOnce(ctx, h.hooks.Dispatch)
}

// sendWebhook makes one claimed call at at, within WebhookTimeout, and
// says how it went; it connects only to addresses AllowFetch lets through
// for the endpoint's host.
func (h *Hub) sendWebhook(ctx context.Context, c *WebhookCall, at time.Time) WebhookAttempt {
	host := ""
	if u, err := url.Parse(c.URL); err == nil {
		host = u.Hostname()
	}
	sctx, cancel := context.WithTimeout(ctx, WebhookTimeout)
	res := h.webhooks.Send(sctx, c, at, func(ip netip.Addr) bool { return h.AllowFetch(host, ip) })
	cancel()
	a := WebhookAttempt{ID: NewID(IDWebhookAttempt, at), WebhookID: c.WebhookID, CallID: c.ID, Type: c.Type, At: at,
		Status: res.Status, Duration: res.Duration}
	if res.Err != nil {
		a.Status, a.Error = 0, Preview(cleanText(res.Err.Error()), webhookError)
	}
	return a
}

// recordWebhook logs a call's attempt and does what its outcome says, in
// one transaction: delivered, the call leaves the outbox; failed, it is
// due again at retry; given up, its endpoint is disabled (its calls
// dropped) and the owner hears webhook.disabled — once, though several of
// the endpoint's calls in flight may give up side by side.
func (h *Hub) recordWebhook(ctx context.Context, c *WebhookCall, a WebhookAttempt, outcome string, retry time.Time) error {
	now := h.now()
	disabled := false
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		disabled = false
		if err := tx.InsertWebhookAttempt(ctx, &a, WebhookLog); err != nil {
			return nil, err
		}
		switch outcome {
		case WebhookDelivered:
			return nil, tx.DeleteWebhookCall(ctx, c.ID)
		case WebhookFailed:
			r := *c
			r.Attempts, r.DueAt = c.Attempts+1, retry
			return nil, tx.RescheduleWebhookCall(ctx, &r)
		}
		w, err := tx.Webhook(ctx, c.WebhookID)
		if errors.Is(err, ErrNoRows) || (err == nil && !w.Enabled()) {
			return nil, nil // removed, or turned off by another of its calls
		}
		if err != nil {
			return nil, err
		}
		reason := fmt.Sprintf("its calls failed for %d hours; the last: %s", int(WebhookRetry.For.Hours()), a.Problem())
		if err := tx.SetWebhookDisabled(ctx, c.WebhookID, now, reason); err != nil {
			return nil, err
		}
		data, err := json.Marshal(map[string]string{"agent": c.AgentHandle, "webhook_id": c.WebhookID, "url": c.URL, "reason": reason})
		if err != nil {
			return nil, err
		}
		disabled = true
		return []*Event{{RecipientID: c.OwnerID, Type: EventWebhookDisabled, Data: data, CreatedAt: now}}, nil
	})
	if err != nil {
		return err
	}
	if disabled {
		h.log.Warn("webhook disabled", "agent", c.AgentHandle, "webhook", c.WebhookID, "url", c.URL, "last", a.Problem())
	}
	return nil
}

// Problem says what went wrong with an attempt: its error, or the status
// it was answered with ("" for one that delivered).
func (a WebhookAttempt) Problem() string {
	switch {
	case a.OK():
		return ""
	case a.Error != "":
		return a.Error
	}
	return fmt.Sprintf("it was answered %d", a.Status)
}

// RunWebhooks delivers webhook calls until ctx ends (palaver serve runs
// it), then waits for the calls in flight, which ctx stops (their claims
// lapse and they are made again). Each endpoint has WebhookConcurrency
// calls in flight at most and starts WebhookRate a second, and no endpoint
// waits for another's calls. Steps come at once when a change here queued
// calls or an endpoint may have more due, and every period otherwise
// (calls queued by other replicas, retries falling due). count, when not
// nil, hears each call's outcome, from the calls' own goroutines.
func (h *Hub) RunWebhooks(ctx context.Context, period time.Duration, count func(outcome string, n int)) {
	if h.webhooks == nil {
		<-ctx.Done()
		return
	}
	var told func(string)
	if count != nil {
		told = func(outcome string) { count(outcome, 1) }
	}
	h.hooks.Run(ctx, period, told)
}

// agentSet is a set of agents as this process last read it — those with
// an enabled webhook endpoint, the remote ones — so that an event for an
// agent outside it, nearly every send's, costs no look-up. It is read
// again at most every setFor: one added on another replica counts from
// then on; one added here, at once (forget).
type agentSet struct {
	mu   sync.Mutex
	ids  map[string]bool
	read time.Time // zero: to be read
}

// setFor is how long an agentSet trusts what it read.
const setFor = time.Second

// agents is the set, read with list when what was read is older than
// setFor.
func (k *agentSet) agents(ctx context.Context, now time.Time, list func(context.Context) ([]string, error)) (map[string]bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.read.IsZero() && now.Sub(k.read) < setFor && !now.Before(k.read) {
		return k.ids, nil
	}
	ids, err := list(ctx)
	if err != nil {
		return nil, err
	}
	k.ids, k.read = make(map[string]bool, len(ids)), now
	for _, id := range ids {
		k.ids[id] = true
	}
	return k.ids, nil
}

// forget makes the next read of the set read it again.
func (k *agentSet) forget() {
	k.mu.Lock()
	k.read = time.Time{}
	k.mu.Unlock()
}
