package hub

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Cursors (§6) are opaque to clients: base64url of the event id (a uvarint)
// and a tag, the first cursorTag bytes of HMAC-SHA256 keyed with the
// database's epoch over the reader's id, the generation and the event id.
// The tag binds a cursor to its reader and its database: another
// principal's cursor, or one from another database, fails it. The epoch
// itself never leaves the database. The tag is a check, not a secret's
// guard: a wait only ever hands over the authenticated reader's own events.
//
// A restore (palaver restore) starts a new generation and records where
// the backup's log ended; a cursor of an earlier generation is honoured up
// to that point and is cursor_invalid past it for ever, so a cursor issued
// after the backup is never silently reused once the log regrows (§6, §13).

// cursorTag is how many bytes of the MAC a cursor carries.
const cursorTag = 6

// Generation is a span of the event log that cursors were issued in. A
// restore ends the one its backup was taken in at Through, the last event
// id the backup holds.
type Generation struct {
	ID      string `json:"generation"`
	Through int64  `json:"through"`
}

// Meta keys of generations: MetaGeneration is the current one's id ("" for
// a database never restored), MetaGenerations the JSON list of the
// generations before it.
const (
	MetaGeneration  = "generation"
	MetaGenerations = "generations"
)

// cursorTagOf is the tag of event id for reader in generation gen.
func (h *Hub) cursorTagOf(readerID, gen string, id int64) []byte {
	m := hmac.New(sha256.New, h.cursorKey)
	m.Write([]byte(readerID))
	m.Write([]byte{0})
	m.Write([]byte(gen))
	m.Write([]byte{0})
	var b [binary.MaxVarintLen64]byte
	m.Write(b[:binary.PutUvarint(b[:], uint64(id))])
	return m.Sum(nil)[:cursorTag]
}

// cursor encodes event id as a cursor of readerID in the current
// generation.
func (h *Hub) cursor(readerID string, id int64) string {
	b := make([]byte, 0, binary.MaxVarintLen64+cursorTag)
	b = binary.AppendUvarint(b, uint64(id))
	b = append(b, h.cursorTagOf(readerID, h.generation, id)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Cursor is the cursor that resumes after event e, for e's recipient.
func (h *Hub) Cursor(e *Event) string { return h.cursor(e.RecipientID, e.ID) }

// LatestCursor is where a new reader starts: after every event committed so
// far (§6 whoami.latest_cursor). It is bound to readerID, the agent's or
// person's id.
func (h *Hub) LatestCursor(ctx context.Context, readerID string) (string, error) {
	id, err := h.store.LatestEventID(ctx)
	if err != nil {
		return "", AsError(err)
	}
	return h.cursor(readerID, id), nil
}

// What a refused cursor's reader does next: an agent resyncs with its
// inbox, a person (the REST events route, the dashboard) starts again.
const (
	resyncAgent  = "resync with check_inbox and continue from latest_cursor"
	resyncPerson = "start again from latest_cursor (and reload what you show)"
)

// parseCursor returns the event id a cursor of readerID names; nil means
// none was given, which starts at the latest. An empty, malformed,
// foreign (another reader's or another database's), after-the-backup or
// ahead-of-the-log cursor is cursor_invalid; one older than the kept events
// is cursor_expired; both carry latest_cursor.
func (h *Hub) parseCursor(ctx context.Context, readerID, resync string, cursor *string) (int64, error) {
	latest, err := h.store.LatestEventID(ctx)
	if err != nil {
		return 0, AsError(err)
	}
	if cursor == nil {
		return latest, nil
	}
	fail := func(code, msg string) error {
		return &Error{Kind: KindInvalid, Code: code, Msg: msg, Details: map[string]any{"latest_cursor": h.cursor(readerID, latest)}}
	}
	if *cursor == "" {
		return 0, fail("cursor_invalid", "cursor is empty; pass back a cursor exactly as the server gave it, or leave cursor out to start from now")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(*cursor)
	n := len(raw) - cursorTag
	var u uint64
	var used int
	if err == nil && n > 0 {
		u, used = binary.Uvarint(raw[:n])
	}
	// One encoding per id: a cursor is compared by value, so no second
	// spelling of it is accepted.
	if err != nil || n <= 0 || used != n || u > math.MaxInt64 || len(binary.AppendUvarint(nil, u)) != n {
		return 0, fail("cursor_invalid", "this cursor is malformed; pass back a cursor exactly as the server gave it, or "+resync)
	}
	id, tag := int64(u), raw[n:]
	through := int64(math.MaxInt64) // how far the cursor's generation reaches
	if !hmac.Equal(tag, h.cursorTagOf(readerID, h.generation, id)) {
		found := false
		for _, g := range h.generations {
			if hmac.Equal(tag, h.cursorTagOf(readerID, g.ID, id)) {
				found, through = true, g.Through
				break
			}
		}
		if !found {
			return 0, fail("cursor_invalid", "this cursor was not issued to you by this database (it is another reader's, or another database's); pass back only the cursors you received, or "+resync)
		}
	}
	switch {
	case id > through:
		return 0, fail("cursor_invalid", "this cursor was issued after the backup this database was restored from, and the events it follows are gone; "+resync)
	case id > latest:
		return 0, fail("cursor_invalid", "this cursor is ahead of the event log; "+resync)
	}
	pruned, err := h.store.Meta(ctx, MetaPrunedThrough)
	if err != nil {
		return 0, AsError(err)
	}
	if p, _ := strconv.ParseInt(pruned, 10, 64); id < p {
		return 0, fail("cursor_expired", fmt.Sprintf("events older than %d days are gone, and this cursor is older; %s", int(h.settings.EventRetention.Hours()/24), resync))
	}
	return id, nil
}

// loadGenerations reads the current generation and the ones before it.
func loadGenerations(ctx context.Context, r Reader) (string, []Generation, error) {
	gen, err := r.Meta(ctx, MetaGeneration)
	if err != nil {
		return "", nil, err
	}
	text, err := r.Meta(ctx, MetaGenerations)
	if err != nil || text == "" {
		return gen, nil, err
	}
	var gs []Generation
	if err := json.Unmarshal([]byte(text), &gs); err != nil {
		return "", nil, fmt.Errorf("meta %s: %w", MetaGenerations, err)
	}
	return gen, gs, nil
}

// MarkRestored starts a new generation of the database's event log (§6,
// §13): the current one ends at the last event id the database holds, so
// its cursors up to there keep working and every cursor issued past it is
// cursor_invalid for ever. palaver restore calls it on the restored copy;
// after restoring PostgreSQL by other means, run palaver restore --mark
// before any server starts. It returns the generation that ended.
func MarkRestored(ctx context.Context, s Store) (Generation, error) {
	var ended Generation
	err := s.Update(ctx, func(tx Tx) error {
		gen, gs, err := loadGenerations(ctx, tx)
		if err != nil {
			return err
		}
		through, err := tx.LatestEventID(ctx)
		if err != nil {
			return err
		}
		ended = Generation{ID: gen, Through: through}
		text, err := json.Marshal(append(gs, ended))
		if err != nil {
			return err
		}
		if err := tx.SetMeta(ctx, MetaGenerations, string(text)); err != nil {
			return err
		}
		var b [8]byte
		rand.Read(b[:])
		return tx.SetMeta(ctx, MetaGeneration, hex.EncodeToString(b[:]))
	})
	if err != nil {
		return Generation{}, AsError(err)
	}
	return ended, nil
}

// WaitInput is a wait_for_messages call (§6).
type WaitInput struct {
	Cursor   *string       // nil: none given, start at the latest
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
// retry_after_s.
func (h *Hub) Wait(ctx context.Context, c *Caller, in WaitInput) (*WaitResult, error) {
	if err := checkWait(int64(in.Timeout / time.Second)); err != nil {
		return nil, err
	}
	instance, err := h.seeInstance(ctx, c, in.Instance)
	if err != nil {
		return nil, err
	}
	from, err := h.parseCursor(ctx, c.Agent.ID, resyncAgent, in.Cursor)
	if err != nil {
		return nil, err
	}
	ctx, release, err := h.acquireWait(ctx, c.Agent.ID, instance, h.settings.WaitsPerAgent, "across your sessions")
	if err != nil {
		return nil, err
	}
	defer release()
	r, err := h.park(ctx, c.Agent.ID, from, in.Timeout)
	if err != nil || instance == "" || len(r.Events) == 0 {
		return r, err
	}
	if r.Addressing, err = h.addressEvents(ctx, c.Agent.ID, instance, r.Events); err != nil {
		return nil, err
	}
	return r, nil
}

// WaitPerson is Wait on a person's own stream (§6): contact requests,
// inbound asks, grant and project requests, held messages, questions,
// pauses, and messages of the conversations they take part in. A person
// holds at most Settings.WaitsPerPerson waits (a dashboard tab holds one).
// A cursor "" is none (an empty query parameter or Last-Event-ID): the
// stream starts at the latest.
func (h *Hub) WaitPerson(ctx context.Context, u *User, cursor string, timeout time.Duration) (*WaitResult, error) {
	if err := checkWait(int64(timeout / time.Second)); err != nil {
		return nil, err
	}
	var given *string
	if cursor != "" {
		given = &cursor
	}
	from, err := h.parseCursor(ctx, u.ID, resyncPerson, given)
	if err != nil {
		return nil, err
	}
	ctx, release, err := h.acquireWait(ctx, u.ID, "", h.settings.WaitsPerPerson, "across your scripts and dashboard tabs")
	if err != nil {
		return nil, err
	}
	defer release()
	return h.park(ctx, u.ID, from, timeout)
}

// Stopping is closed when the hub shuts down: long-lived streams end.
func (h *Hub) Stopping() <-chan struct{} { return h.stop }

// park hands over the recipient's events after from, or waits for one.
func (h *Hub) park(ctx context.Context, recipientID string, from int64, timeout time.Duration) (*WaitResult, error) {
	// Subscribe before the first query: a commit after this point wakes us,
	// and one before it is seen by the query (§13).
	wake, cancel := h.waker.Subscribe(recipientID)
	defer cancel()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		queried := h.commits.now()
		events, last, err := h.visibleEvents(ctx, recipientID, from)
		if err != nil && context.Cause(ctx) == errSuperseded {
			return &WaitResult{Cursor: h.cursor(recipientID, from), Superseded: true}, nil
		}
		if err != nil {
			return nil, err
		}
		from = last
		if len(events) > 0 {
			return &WaitResult{Events: events, Cursor: h.cursor(recipientID, from)}, nil
		}
		switch h.sleep(ctx, recipientID, queried, wake, timer.C) {
		case wokeByTimeout, wokeByShutdown:
			return &WaitResult{Cursor: h.cursor(recipientID, from), TimedOut: true}, nil
		case wokeByDone:
			if context.Cause(ctx) == errSuperseded {
				return &WaitResult{Cursor: h.cursor(recipientID, from), Superseded: true}, nil
			}
			return nil, ctx.Err()
		}
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
// see, and the last event id looked at. Access is checked at hand-over (§6):
// events of conversations closed or left since are skipped.
func (h *Hub) visibleEvents(ctx context.Context, recipientID string, from int64) ([]*Event, int64, error) {
	events, err := h.store.EventsAfter(ctx, recipientID, from, eventsPerWait)
	if err != nil {
		return nil, from, AsError(err)
	}
	allowed := map[string]bool{}
	out := events[:0]
	size := 0
	for _, e := range events {
		if e.Message != nil {
			if size += messageSize(e.Message); size > pageBytes && len(out) > 0 {
				break // the rest comes with the next wait, at once
			}
		}
		from = e.ID
		// Only message.new carries others' words from a conversation; the
		// other events tell the recipient of its own affairs (an answer, a
		// decision, the close itself) and are handed over as they are.
		if e.Type == EventMessageNew {
			ok, seen := allowed[e.ConversationID]
			if !seen {
				var err error
				if ok, err = h.store.TakesPart(ctx, e.ConversationID, recipientID); err != nil {
					return nil, from, AsError(err)
				}
				allowed[e.ConversationID] = ok
			}
			if !ok {
				continue
			}
		}
		out = append(out, e)
	}
	return out, from, nil
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
		case e.Type == EventOwnerAnswer:
			// The answer is for the session that asked (§9).
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
// the highest id deleted, so older cursors get cursor_expired (§6).
func (h *Hub) PruneEvents(ctx context.Context) error {
	err := h.store.Update(ctx, func(tx Tx) error {
		_, err := tx.PruneEvents(ctx, h.now().Add(-h.settings.EventRetention))
		return err
	})
	if err != nil {
		return AsError(err)
	}
	return nil
}

// RecheckEvery runs Recheck every period until ctx ends, logging failures.
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
		}
	}
}

// Recheck is the safety net under wake-ups (§13): it wakes the waiters of
// every recipient of the events committed since the last recheck, so a
// wake-up missed — from another process on the same database, such as an
// admin command, or a lost notification between replicas — delays, never
// loses. The server calls it every second or so.
func (h *Hub) Recheck(ctx context.Context) error {
	latest, err := h.store.LatestEventID(ctx)
	if err != nil {
		return AsError(err)
	}
	h.mu.Lock()
	from := h.rechecked
	h.mu.Unlock()
	if latest <= from {
		return nil
	}
	ids, err := h.store.EventRecipients(ctx, from, latest)
	if err != nil {
		return AsError(err)
	}
	h.waker.Publish(ids)
	h.mu.Lock()
	h.rechecked = max(h.rechecked, latest)
	h.mu.Unlock()
	return nil
}
