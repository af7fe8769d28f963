package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// WaitInput is a wait_for_messages call (§6).
type WaitInput struct {
	Cursor   *string       // nil or "": none given, start at the latest
	Timeout  time.Duration // 0..55 s
	Instance string
}

// WaitResult is what a wait hands over.
type WaitResult struct {
	Events   []*Event
	Cursor   string
	TimedOut bool
	// Superseded: the same named session started a newer wait, which ended
	// this one with nothing consumed.
	Superseded bool
	// Addressing tells, for a wait with a session name, how each
	// message.new stands for that session (keyed by event id).
	Addressing map[int64]Addressing
}

// eventsPerWait caps one hand-over; the next wait continues at once.
const eventsPerWait = 100

// Wait returns every event of the caller's stream after the cursor, or
// parks until a commit publishes one, the timeout passes (TimedOut), ctx ends
// (the client hung up), the same named session starts a new wait
// (Superseded), or the hub shuts down (TimedOut). An agent holds at most
// Settings.WaitsPerAgent waits; past that the error is too_many_waits with
// retry_after_s. It is StartWait driven to its end; its reads run off the
// caller's goroutine (OffStack).
func (h *Hub) Wait(ctx context.Context, c *Caller, in WaitInput) (*WaitResult, error) {
	var w *Waiting
	var err error
	OffStack(func() { w, err = h.StartWait(ctx, c, in) })
	if err != nil {
		return nil, err
	}
	return w.drive()
}

// WaitPerson is Wait on a person's own stream (§6): contact requests,
// inbound asks, grant and project requests, held messages, questions,
// pauses, and messages of the conversations they take part in. A person
// holds at most Settings.WaitsPerPerson waits (a dashboard tab holds one).
// A cursor "" is none, as for an agent's wait (parseCursor): the stream
// starts at the latest.
func (h *Hub) WaitPerson(ctx context.Context, u *User, cursor string, timeout time.Duration) (*WaitResult, error) {
	var w *Waiting
	var err error
	OffStack(func() {
		w, err = h.startWait(ctx, u.ID, "", resyncPerson, &cursor, timeout, h.settings.WaitsPerPerson, "across your scripts and dashboard tabs")
	})
	if err != nil {
		return nil, err
	}
	return w.drive()
}

// Stopping is closed when the hub shuts down: long-lived streams end.
func (h *Hub) Stopping() <-chan struct{} { return h.stop }

// Events held back (Pos: committed, but after a transaction still running)
// come out when the transactions before them end. A wait that sees events
// held back waits for them, once, so that it hands over together every
// event committed before it looked (a wait of timeout 0 included): it asks
// again whenever a commit is published — whoever its recipients — and, for
// transactions that publish nothing, after heldRetry, doubling up to
// heldRetryMax. Events held back past those, committed after it looked,
// come with the next wait. After heldPatience it stops waiting, and the
// recheck (§13) wakes it once they come out.
const (
	heldRetry    = time.Millisecond
	heldRetryMax = 64 * time.Millisecond
	heldPatience = 2 * time.Second
)

// heldBack is what a wait knows of its events held back.
type heldBack struct {
	waker   Waker
	now     func() time.Time // the real time: patience, like the retries, waits for other transactions, whatever the hub's clock says (a test's may stand still)
	target  int64            // the newest transaction held back when first seen; 0: waiting for none
	since   time.Time
	waited  bool // it has waited for events held back: never again
	backoff time.Duration
	retry   *time.Timer
	commits <-chan struct{} // every commit's publication, once subscribed
	cancel  func()
}

// waiting reports whether the wait waits for events held back, given the
// newest transaction held back in its last look and the position of the
// last event it saw (the zero Pos when it saw none: the cursor it looked
// from may stand inside the transaction held back, as a webhook's does,
// and says nothing of what came out).
func (b *heldBack) waiting(heldTx int64, seen Pos) bool {
	switch {
	case b.target != 0 && (seen.Tx >= b.target || b.now().Sub(b.since) >= heldPatience):
		b.target, b.waited = 0, true // what was held back has come out, or patience ran out
	case b.target == 0 && heldTx != 0 && !b.waited:
		b.target, b.since, b.backoff = heldTx, b.now(), heldRetry
	}
	return b.target != 0
}

// ask returns when to look again while waiting.
func (b *heldBack) ask() (<-chan struct{}, <-chan time.Time) {
	if b.retry == nil {
		b.retry = time.NewTimer(b.backoff)
		b.commits, b.cancel = b.waker.Subscribe(AnyRecipient)
	}
	b.retry.Reset(b.backoff)
	b.backoff = min(2*b.backoff, heldRetryMax)
	return b.commits, b.retry.C
}

func (b *heldBack) stop() {
	if b.retry != nil {
		b.retry.Stop()
		b.cancel()
	}
}

// namedWait is a named session's live wait, which its next one ends.
type namedWait struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

var errSuperseded = fmt.Errorf("a newer wait of the same session started")

// acquireWait takes one of the principal's wait slots (at most limit; across
// names where the waits are, for the refusal),
// ending the same named session's earlier wait. The returned context ends
// when that session starts another wait. A wait whose context is done —
// its client hung up, or a newer wait of its session ended it — holds no
// slot from that moment, though it may not have returned yet: a client
// that hangs up and waits again is never told to retry.
func (h *Hub) acquireWait(ctx context.Context, principalID, instance string, limit int, across string) (context.Context, func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := principalID + "\x00" + instance
	if prev, ok := h.named[key]; instance != "" && ok {
		prev.cancel(errSuperseded)
	}
	live := 0
	for _, w := range h.waits[principalID] {
		if w.Err() == nil {
			live++
		}
	}
	if live >= limit {
		return nil, nil, &Error{Kind: KindRateLimited, Code: "too_many_waits",
			Msg:     fmt.Sprintf("%d waits are held already (%s); end one or retry after retry_after_s seconds", limit, across),
			Details: map[string]any{"retry_after_s": 5}}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	h.waits[principalID] = append(h.waits[principalID], ctx)
	if instance != "" {
		h.named[key] = namedWait{ctx, cancel}
	}
	release := func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		cancel(nil)
		if h.named[key].ctx == ctx {
			delete(h.named, key) // unless a newer wait of the session has it
		}
		ws := slices.DeleteFunc(h.waits[principalID], func(w context.Context) bool { return w == ctx })
		if len(ws) == 0 {
			delete(h.waits, principalID)
		} else {
			h.waits[principalID] = ws
		}
	}
	return ctx, release, nil
}

// visibleEvents returns the recipient's events after from that it may still
// see, the last position looked at, and the newest transaction among the
// events held back after them (Store.EventsAfter). Access is checked at hand-over (§6): events of
// conversations closed or left since are skipped.
func (h *Hub) visibleEvents(ctx context.Context, recipientID string, from Pos) ([]*Event, Pos, int64, error) {
	events, heldTx, err := h.store.EventsAfter(ctx, recipientID, from, eventsPerWait)
	if err != nil {
		return nil, from, 0, AsError(err)
	}
	allowed := map[string]bool{}
	out := events[:0]
	size := 0
	for _, e := range events {
		if e.Message != nil {
			if size += messageSize(e.Message); size > pageBytes && len(out) > 0 {
				heldTx = 0 // a full page: the rest, held or not, comes with the next wait
				break
			}
		}
		from = e.Pos()
		// Only message.new carries others' words from a conversation; the
		// other events tell the recipient of its own affairs (an answer, a
		// decision, the close itself) and are handed over as they are, as
		// are one's own words (a person who wrote in without taking part).
		if e.Type == EventMessageNew && (e.Message == nil || e.Message.SenderID != recipientID) {
			ok, seen := allowed[e.ConversationID]
			if !seen {
				var err error
				if ok, err = h.store.TakesPart(ctx, e.ConversationID, recipientID); err != nil {
					return nil, from, 0, AsError(err)
				}
				allowed[e.ConversationID] = ok
			}
			if !ok {
				continue
			}
		}
		out = append(out, e)
	}
	return out, from, heldTx, nil
}

// addressEvents tells how each message.new stands for the session.
func (h *Hub) addressEvents(ctx context.Context, agentID, instance string, events []*Event) (map[int64]Addressing, error) {
	holders, err := h.liveHolders(ctx, h.store, agentID)
	if err != nil {
		return nil, AsError(err)
	}
	out := map[int64]Addressing{}
	for _, e := range events {
		switch {
		case e.Type == EventOwnerAnswer || e.Type == EventPermissionDecided:
			// The answer is for the session that asked (§9, §19).
			var d struct{ Instance string }
			json.Unmarshal(e.Data, &d)
			out[e.ID] = Addressing{ForYou: d.Instance == "" || d.Instance == instance}
		case e.Message != nil:
			out[e.ID] = address(e.Message, agentID, instance, holders)
		}
	}
	return out, nil
}

// PruneEvents deletes events older than the retention period and remembers
// the highest id deleted, so older cursors get cursor_expired (§6); the
// owner notifications done with that are as old go with them (§19).
func (h *Hub) PruneEvents(ctx context.Context) error {
	err := h.store.Update(ctx, func(tx Tx) error {
		before := h.now().Add(-h.settings.EventRetention)
		if _, err := tx.PruneEvents(ctx, before); err != nil {
			return err
		}
		return tx.PruneNotifications(ctx, before)
	})
	if err != nil {
		return AsError(err)
	}
	return nil
}

// RecheckEvery runs Recheck and SweepPresence every period until ctx
// ends, logging failures.
func (h *Hub) RecheckEvery(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := h.Recheck(ctx); err != nil && ctx.Err() == nil {
				h.log.Warn("rechecking for events", "err", err)
			}
			h.SweepPresence(ctx)
		}
	}
}

// Recheck is the safety net under wake-ups (§13): it wakes the waiters of
// every recipient of the events committed since the last recheck, so a
// wake-up missed — from another process on the same database, such as an
// admin command, or a lost notification between replicas — delays, never
// loses. The server calls it every second or so.
func (h *Hub) Recheck(ctx context.Context) error {
	latest, _, err := h.store.LatestEvent(ctx)
	if err != nil {
		return AsError(err)
	}
	h.mu.Lock()
	from := h.rechecked
	h.mu.Unlock()
	if latest.Compare(from) <= 0 {
		return nil
	}
	ids, err := h.store.EventRecipients(ctx, from, latest)
	if err != nil {
		return AsError(err)
	}
	h.waker.Publish(ids)
	h.mu.Lock()
	if latest.Compare(h.rechecked) > 0 {
		h.rechecked = latest
	}
	h.mu.Unlock()
	return nil
}

// EventReads are the queries of events (Reader embeds them).
type EventReads interface {
	// EventsAfter returns up to limit of the recipient's events after
	// position after, in order, each message.new with its Message. heldTx
	// is the newest transaction among the recipient's committed events
	// past those (within limit), held back until the transactions before
	// them end (PostgreSQL, Pos); 0 if none.
	EventsAfter(ctx context.Context, recipientID string, after Pos, limit int) (events []*Event, heldTx int64, err error)
	// RecentEvents returns up to limit of the recipient's events of these
	// types (at least one) at or before position upTo, newest first, each
	// message event with its Message.
	RecentEvents(ctx context.Context, recipientID string, upTo Pos, types []string, limit int) ([]*Event, error)
	// LatestEvent is the position of the last event readable so far: no
	// event committed later can stand at or before it. heldTx is the
	// newest transaction of the events committed but held back past it
	// (0 if none; PostgreSQL, Pos): once latest.Tx reaches heldTx, every
	// event committed before this call is at or before latest.
	LatestEvent(ctx context.Context) (latest Pos, heldTx int64, err error)
	// EventRecipients lists the distinct recipients of the events with
	// positions after after, up to upTo.
	EventRecipients(ctx context.Context, after, upTo Pos) ([]string, error)
}

// EventWrites are the writes of events (Tx embeds them).
type EventWrites interface {
	// InsertEvents appends events (ids assigned by the store, in order).
	InsertEvents(ctx context.Context, events []*Event) error
	// PruneEvents deletes events created before t, up to a last one of
	// them (and any before it: after the clock stepped back, some newer
	// than t by no more than the step; some older may wait for the next
	// prune), records the last position deleted under
	// MetaPrunedThrough, and returns it (zero when none). A new event's
	// position is still past every one given before.
	PruneEvents(ctx context.Context, before time.Time) (Pos, error)
}

// Watch calls look now, then again after each commit that wakes
// principalID (an agent's id, or a person's when person), until look
// reports done or fails, timeout passes (0: none), ctx ends (its error)
// or the hub shuts down (§6, §18 message/stream). It holds one of the
// principal's waits meanwhile (past Settings.WaitsPerAgent, or
// WaitsPerPerson, too_many_waits with retry_after_s; across says where
// the waits are), and waits on the principal's event stream, never by
// polling. look reads with the ctx it is given, which ends with the wait.
func (h *Hub) Watch(ctx context.Context, principalID string, person bool, across string, timeout time.Duration, look func(ctx context.Context) (done bool, err error)) error {
	limit := h.settings.WaitsPerAgent
	if person {
		limit = h.settings.WaitsPerPerson
	}
	ctx, release, err := h.acquireWait(ctx, principalID, "", limit, across)
	if err != nil {
		return err
	}
	defer release()
	// Subscribe before the first look: a commit after this point wakes
	// us, and one before it is seen by the look (§13).
	wake, cancel := h.waker.Subscribe(principalID)
	defer cancel()
	var deadline <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		deadline = timer.C
	}
	for {
		queried := h.commits.now()
		if done, err := look(ctx); done || err != nil {
			return err
		}
		switch h.sleep(ctx, principalID, queried, wake, nil, nil, deadline) {
		case wokeByTimeout, wokeByShutdown:
			return nil
		case wokeByDone:
			return ctx.Err()
		}
	}
}
