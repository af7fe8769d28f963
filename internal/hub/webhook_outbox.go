package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/netip"
	"net/url"
	"sync"
	"time"
)

// The webhook outbox (§18): calls queued with the events that make them,
// claimed and sent by the delivery loop, retried on the backoff schedule.

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
			if hooked, err = h.hooked.agents(ctx, tx, now); err != nil {
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

// kickWebhooks starts a delivery pass now rather than at the next tick.
func (h *Hub) kickWebhooks() {
	select {
	case h.hookKick <- struct{}{}:
	default:
	}
}

// WebhookPass is what one DeliverWebhooks did: how many calls it claimed,
// and how many of them ended with each outcome (the rest wait for their
// endpoint's rate, or for a server that is stopping, and are sent later).
type WebhookPass struct {
	Claimed  int
	Outcomes map[string]int
}

// DeliverWebhooks makes the webhook calls that are due (§18): it claims up
// to a batch of them, so no other replica sends them meanwhile, and calls
// each endpoint's in turn, the endpoints at once. A call answered 2xx
// leaves the outbox; any other is retried on WebhookRetry's schedule with
// the same webhook-id, and one that has failed for WebhookRetry.For
// disables its endpoint, dropping its calls, and tells the owner
// (webhook.disabled). Calls beyond an endpoint's WebhookRate wait their
// turn, uncounted. A hub with no WebhookSender sends nothing.
func (h *Hub) DeliverWebhooks(ctx context.Context) (WebhookPass, error) {
	pass := WebhookPass{Outcomes: map[string]int{}}
	if h.webhooks == nil {
		return pass, nil
	}
	now := h.now()
	next, err := h.store.NextWebhookCall(ctx)
	if err != nil {
		return pass, AsError(err)
	}
	if next.IsZero() || next.After(now) {
		return pass, nil
	}
	var calls []*WebhookCall
	err = h.store.Update(ctx, func(tx Tx) error {
		var err error
		calls, err = tx.ClaimWebhookCalls(ctx, now, now.Add(webhookLease), webhookBatch)
		return err
	})
	if err != nil {
		return pass, AsError(err)
	}
	pass.Claimed = len(calls)
	byHook := map[string][]*WebhookCall{}
	var order []string
	for _, c := range calls {
		if byHook[c.WebhookID] == nil {
			order = append(order, c.WebhookID)
		}
		byHook[c.WebhookID] = append(byHook[c.WebhookID], c)
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, id := range order {
		wg.Go(func() {
			for _, c := range byHook[id] {
				outcome, err := h.callWebhook(ctx, c)
				mu.Lock()
				if outcome != "" {
					pass.Outcomes[outcome]++
				}
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if outcome == WebhookGaveUp {
					return // the endpoint is off, its other calls dropped
				}
			}
		})
	}
	wg.Wait()
	return pass, errors.Join(errs...)
}

// callWebhook makes one claimed call and records how it went; it returns
// the outcome, or "" when the call was not made (over its endpoint's rate,
// or the server is stopping: the claim lapses and it is made again).
func (h *Hub) callWebhook(ctx context.Context, c *WebhookCall) (string, error) {
	now := h.now()
	if wait := h.hookRate.take(now, c.WebhookID, 1, WebhookRate, WebhookBurst); wait > 0 {
		c.DueAt = now.Add(wait)
		if err := h.store.Update(ctx, func(tx Tx) error { return tx.RescheduleWebhookCall(ctx, c) }); err != nil {
			return "", AsError(err)
		}
		return "", nil
	}
	host := ""
	if u, err := url.Parse(c.URL); err == nil {
		host = u.Hostname()
	}
	sctx, cancel := context.WithTimeout(ctx, WebhookTimeout)
	res := h.webhooks.Send(sctx, c, now, func(ip netip.Addr) bool { return h.AllowFetch(host, ip) })
	cancel()
	if ctx.Err() != nil {
		return "", nil
	}
	a := &WebhookAttempt{ID: NewID(IDWebhookAttempt, now), WebhookID: c.WebhookID, CallID: c.ID, Type: c.Type, At: now,
		Status: res.Status, Duration: res.Duration}
	if res.Err != nil {
		a.Status, a.Error = 0, Preview(cleanText(res.Err.Error()), webhookError)
	}
	var outcome string
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.InsertWebhookAttempt(ctx, a, WebhookLog); err != nil {
			return nil, err
		}
		if a.OK() {
			outcome = WebhookDelivered
			return nil, tx.DeleteWebhookCall(ctx, c.ID)
		}
		next, retry := WebhookRetry.next(c.CreatedAt, now, c.Attempts+1, mrand.Float64())
		if retry {
			outcome = WebhookFailed
			r := *c
			r.Attempts, r.DueAt = c.Attempts+1, next
			return nil, tx.RescheduleWebhookCall(ctx, &r)
		}
		outcome = WebhookGaveUp
		reason := fmt.Sprintf("its calls failed for %d hours; the last: %s", int(WebhookRetry.For.Hours()), a.Problem())
		if err := tx.SetWebhookDisabled(ctx, c.WebhookID, now, reason); err != nil {
			return nil, err
		}
		data, err := json.Marshal(map[string]string{"agent": c.AgentHandle, "webhook_id": c.WebhookID, "url": c.URL, "reason": reason})
		if err != nil {
			return nil, err
		}
		return []*Event{{RecipientID: c.OwnerID, Type: EventWebhookDisabled, Data: data, CreatedAt: now}}, nil
	})
	if err != nil {
		return "", err
	}
	if outcome == WebhookGaveUp {
		h.log.Warn("webhook disabled", "agent", c.AgentHandle, "webhook", c.WebhookID, "url", c.URL, "last", a.Problem())
	}
	return outcome, nil
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
// it): at once when a change here queued some, and every period otherwise
// (calls queued by other replicas and retries falling due), again at once
// while passes claim full batches. count, when not nil, hears each pass's
// outcomes.
func (h *Hub) RunWebhooks(ctx context.Context, period time.Duration, count func(outcome string, n int)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		pass, err := h.DeliverWebhooks(ctx)
		if err != nil && ctx.Err() == nil {
			h.log.Warn("delivering webhooks", "err", err)
		}
		if count != nil {
			for o, n := range pass.Outcomes {
				count(o, n)
			}
		}
		if pass.Claimed == webhookBatch && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-h.hookKick:
		}
	}
}

// hookedAgents is which agents have an enabled endpoint, as this process
// last read it, so that an event for an agent with none — nearly every
// send's — costs the outbox no look-up. It is read again at most every
// hookedFor: an endpoint made on another replica is called for from then
// on; one made here, at once.
type hookedAgents struct {
	mu   sync.Mutex
	ids  map[string]bool
	read time.Time // zero: to be read
}

// hookedFor is how long hookedAgents trusts what it read.
const hookedFor = time.Second

// agents is the set of agents with an enabled endpoint, read through r
// when what was read is older than hookedFor.
func (k *hookedAgents) agents(ctx context.Context, r Reader, now time.Time) (map[string]bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.read.IsZero() && now.Sub(k.read) < hookedFor && !now.Before(k.read) {
		return k.ids, nil
	}
	ids, err := r.WebhookAgents(ctx)
	if err != nil {
		return nil, err
	}
	k.ids, k.read = make(map[string]bool, len(ids)), now
	for _, id := range ids {
		k.ids[id] = true
	}
	return k.ids, nil
}

// forget makes the next event read the set again.
func (k *hookedAgents) forget() {
	k.mu.Lock()
	k.read = time.Time{}
	k.mu.Unlock()
}
