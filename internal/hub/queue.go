package hub

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/palaverhq/palaver/internal/outbox"
)

// The outboxes of outbound calls (§18, §19): the webhook calls, the calls
// to remote A2A agents and the owner notifications that events make are
// queued here, in the transaction that stores the events (update), by
// every hub — the command line's too — whether or not it makes them.
// internal/webhook, internal/a2aclient and internal/push make them, each
// with an outbox dispatcher the hub wakes (WebhookKick, RemoteKick,
// NotifyKick) after a commit that queued some.

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

// queueRemotes puts into the remote outbox, in the transaction that
// stores the events, a call for each text message a remote agent is told
// of by another. It reports whether it queued any.
func (h *Hub) queueRemotes(ctx context.Context, tx Tx, events []*Event) (bool, error) {
	var calls []*RemoteCall
	var ids map[string]bool
	now := h.now()
	for _, e := range events {
		if e.Type != EventMessageNew || e.Message == nil || e.Message.SenderID == e.RecipientID || e.Message.Kind != MessageText ||
			idKind(e.RecipientID) != IDAgent {
			continue
		}
		if ids == nil {
			var err error
			if ids, err = h.remotes.agents(ctx, now, tx.RemoteAgentIDs); err != nil {
				return false, err
			}
		}
		if !ids[e.RecipientID] {
			continue
		}
		calls = append(calls, &RemoteCall{ID: NewID(IDRemoteCall, now), AgentID: e.RecipientID, ConversationID: e.ConversationID,
			MessageID: e.Message.ID, SenderHandle: e.Message.SenderHandle, Body: e.Message.Body, CreatedAt: now, DueAt: now})
	}
	if len(calls) == 0 {
		return false, nil
	}
	return true, tx.InsertRemoteCalls(ctx, calls)
}

// queueNotifications puts into the outbox, in the transaction that stores
// the events, a notification to each target of every person an event tells
// of something they chose to hear of there: due when their quiet hours end, at
// most one per item and target, and — past NotifyDigestAfter in the last
// minute — one digest for the rest of that minute. It reports whether it
// queued any.
func (h *Hub) queueNotifications(ctx context.Context, tx Tx, events []*Event) (bool, error) {
	var out []*Notification
	now := h.now()
	type person struct {
		prefs   NotifyPrefs
		loc     *time.Location
		targets []*NotifyTarget
		recent  int
	}
	people := map[string]*person{}
	for _, e := range events {
		if idKind(e.RecipientID) != IDUser {
			continue
		}
		str := eventStrings(e)
		kind, item := notifyKind(e, str)
		if kind == "" || item == "" {
			continue
		}
		p := people[e.RecipientID]
		if p == nil {
			p = &person{}
			people[e.RecipientID] = p
			ts, err := tx.NotifyTargets(ctx, e.RecipientID)
			if err != nil {
				return false, err
			}
			p.targets = ts
			if len(ts) > 0 {
				if p.prefs, err = tx.NotifyPrefs(ctx, e.RecipientID); errors.Is(err, ErrNoRows) {
					p.prefs = NotifyPrefs{} // no quiet hours
				} else if err != nil {
					return false, err
				}
				u, err := tx.UserByID(ctx, e.RecipientID)
				if err != nil {
					return false, err
				}
				p.loc = u.Location()
				if p.recent, err = tx.RecentNotifications(ctx, e.RecipientID, now.Add(-time.Minute)); err != nil {
					return false, err
				}
			}
		}
		var to []*NotifyTarget
		for _, t := range p.targets {
			if t.Wants(kind) {
				to = append(to, t)
			}
		}
		if len(to) == 0 {
			continue
		}
		payload := notifyPayload(kind, e, str)
		item = kind + ":" + item
		if p.recent >= NotifyDigestAfter {
			kind, item = NotifyDigest, NotifyDigest+":"+now.Truncate(time.Minute).Format("2006-01-02T15:04")
			payload = NotifyPayload{Title: "More waits for you", Summary: "Several things came in within a minute; see them on the dashboard.", Path: "/approvals", Tags: []string{"bell"}}
		}
		p.recent++
		due := now
		if p.prefs.Quiet(now, p.loc, kind) {
			due = p.prefs.QuietEnd(now, p.loc)
		}
		for _, t := range to {
			out = append(out, &Notification{ID: NewID(IDNotification, now), TargetID: t.ID, UserID: e.RecipientID, Kind: kind, Item: item,
				Payload: payload, CreatedAt: now, DueAt: due})
		}
	}
	if len(out) == 0 {
		return false, nil
	}
	return true, tx.InsertNotifications(ctx, out)
}

// Pass is what one step of an outbox did (the Deliver of internal/webhook,
// internal/a2aclient and internal/push): how many it claimed, and how many
// of them ended with each outcome (those stopped by ctx count as none: they are made
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
