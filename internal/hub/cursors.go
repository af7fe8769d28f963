package hub

import (
	"cmp"
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
	"strings"
	"time"
)

// Pos is a place in the event log (§6, §13). Events are read in Pos order,
// and a reader who has been handed an event is never later handed one
// before it: an event becomes readable only once every transaction that
// could still add one before it has ended.
//
// On SQLite Tx is always 0: the one writer commits in id order. On
// PostgreSQL Tx is the id of the transaction that inserted the event, and
// events are read only below the oldest transaction still running, so
// replicas commit without taking turns and a cursor never skips an event
// whose transaction committed late. Events stored before PostgreSQL kept
// transaction ids have Tx 0, so a cursor issued then still means the
// same.
type Pos struct{ Tx, ID int64 }

// Compare orders positions: by Tx, then by ID.
func (p Pos) Compare(q Pos) int {
	if c := cmp.Compare(p.Tx, q.Tx); c != 0 {
		return c
	}
	return cmp.Compare(p.ID, q.ID)
}

// String is how a position is kept in the meta table: "ID", or "Tx.ID".
func (p Pos) String() string {
	if p.Tx == 0 {
		return strconv.FormatInt(p.ID, 10)
	}
	return strconv.FormatInt(p.Tx, 10) + "." + strconv.FormatInt(p.ID, 10)
}

// ParsePos reads a String; "" is the start of the log.
func ParsePos(s string) (Pos, error) {
	if s == "" {
		return Pos{}, nil
	}
	tx, id, dotted := strings.Cut(s, ".")
	if !dotted {
		tx, id = "0", s
	}
	t, err1 := strconv.ParseInt(tx, 10, 64)
	i, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil || t < 0 || i < 0 {
		return Pos{}, fmt.Errorf("event position %q is not ID or TX.ID", s)
	}
	return Pos{t, i}, nil
}

// Pos is where e stands in the log.
func (e *Event) Pos() Pos { return Pos{e.Tx, e.ID} }

// Cursors (§6) are opaque to clients: base64url of the event id (a uvarint),
// then the transaction id (another uvarint, only when it is not 0), and a
// tag, the first cursorTag bytes of HMAC-SHA256 keyed with the database's
// epoch over the reader's id, the generation and the position. The tag
// binds a cursor to its reader and its database: another principal's
// cursor, or one from another database, fails it. The epoch itself never
// leaves the database. The tag is a check, not a secret's guard: a wait
// only ever hands over the authenticated reader's own events. A cursor of
// a position with Tx 0 is spelled as cursors were before positions had a
// Tx, so those stay valid.
//
// A restore (palaver restore) starts a new generation and records where
// the backup's log ended; a cursor of an earlier generation is honoured up
// to that point and is cursor_invalid past it for ever, so a cursor issued
// after the backup is never silently reused once the log regrows (§6, §13).

// cursorTag is how many bytes of the MAC a cursor carries.
const cursorTag = 6

// Generation is a span of the event log that cursors were issued in. A
// restore ends the one its backup was taken in at Through (and ThroughTx),
// the last position the backup holds.
type Generation struct {
	ID        string `json:"generation"`
	Through   int64  `json:"through"`
	ThroughTx int64  `json:"through_tx,omitempty"`
}

// End is the last position of the generation.
func (g Generation) End() Pos { return Pos{g.ThroughTx, g.Through} }

// Meta keys of generations: MetaGeneration is the current one's id ("" for
// a database never restored), MetaGenerations the JSON list of the
// generations before it.
const (
	MetaGeneration  = "generation"
	MetaGenerations = "generations"
)

// appendPos spells p as a cursor's first bytes.
func appendPos(b []byte, p Pos) []byte {
	b = binary.AppendUvarint(b, uint64(p.ID))
	if p.Tx != 0 {
		b = binary.AppendUvarint(b, uint64(p.Tx))
	}
	return b
}

// cursorTagOf is the tag of position p for reader in generation gen.
func (h *Hub) cursorTagOf(readerID, gen string, p Pos) []byte {
	m := hmac.New(sha256.New, h.cursorKey)
	m.Write([]byte(readerID))
	m.Write([]byte{0})
	m.Write([]byte(gen))
	m.Write([]byte{0})
	var b [2 * binary.MaxVarintLen64]byte
	m.Write(appendPos(b[:0], p))
	return m.Sum(nil)[:cursorTag]
}

// cursor encodes position p as a cursor of readerID in the current
// generation.
func (h *Hub) cursor(readerID string, p Pos) string {
	b := make([]byte, 0, 2*binary.MaxVarintLen64+cursorTag)
	b = appendPos(b, p)
	b = append(b, h.cursorTagOf(readerID, h.generation, p)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Cursor is the cursor that resumes after event e, for e's recipient.
func (h *Hub) Cursor(e *Event) string { return h.cursor(e.RecipientID, e.Pos()) }

// LatestCursor is where a new reader starts: after every event committed so
// far (§6 whoami.latest_cursor). It is bound to readerID, the agent's or
// person's id.
func (h *Hub) LatestCursor(ctx context.Context, readerID string) (string, error) {
	p, err := h.latestEvent(ctx)
	if err != nil {
		return "", err
	}
	return h.cursor(readerID, p), nil
}

// latestEvent is the store's LatestEvent once every event committed before
// the call is readable, so that a reader starting there gets only what
// comes later. Events held back (Pos) come out as soon as the transactions
// before them end; past heldPatience the position stands where it is, and
// the reader is handed those events as new.
func (h *Hub) latestEvent(ctx context.Context) (Pos, error) {
	held := &heldBack{waker: h.waker, now: time.Now}
	defer held.stop()
	for {
		latest, heldTx, err := h.store.LatestEvent(ctx)
		if err != nil {
			return Pos{}, AsError(err)
		}
		if !held.waiting(heldTx, latest) {
			return latest, nil
		}
		commits, again := held.ask()
		select {
		case <-ctx.Done():
			return Pos{}, AsError(ctx.Err())
		case <-commits:
		case <-again:
		}
	}
}

// What a refused cursor's reader does next: an agent resyncs with its
// inbox, a person (the REST events route, the dashboard) starts again.
const (
	resyncAgent  = "resync with check_inbox and continue from latest_cursor"
	resyncPerson = "start again from latest_cursor (and reload what you show)"
)

// decodePos reads the position a cursor's bytes before its tag spell; ok is
// false unless they are exactly one position's one spelling.
func decodePos(raw []byte) (Pos, bool) {
	id, n := binary.Uvarint(raw)
	if n <= 0 || id > math.MaxInt64 {
		return Pos{}, false
	}
	p := Pos{ID: int64(id)}
	if rest := raw[n:]; len(rest) > 0 {
		tx, m := binary.Uvarint(rest)
		if m != len(rest) || tx == 0 || tx > math.MaxInt64 {
			return Pos{}, false
		}
		p.Tx = int64(tx)
	}
	// One encoding per position: a cursor is compared by value, so no
	// second spelling of it is accepted.
	return p, string(appendPos(nil, p)) == string(raw)
}

// parseCursor returns the position a cursor of readerID names. None given
// — nil, or "": an empty query parameter, an empty argument, a client's
// empty state — starts at the latest (§6: a wait without a cursor starts
// there), on every face alike. A malformed, foreign (another reader's or
// another database's), after-the-backup or ahead-of-the-log cursor is
// cursor_invalid; one older than the kept events is cursor_expired; both
// carry latest_cursor.
func (h *Hub) parseCursor(ctx context.Context, readerID, resync string, cursor *string) (Pos, error) {
	if cursor == nil || *cursor == "" {
		return h.latestEvent(ctx)
	}
	latest, _, err := h.store.LatestEvent(ctx)
	if err != nil {
		return Pos{}, AsError(err)
	}
	fail := func(code, msg string) error {
		return &Error{Kind: KindInvalid, Code: code, Msg: msg, Details: map[string]any{"latest_cursor": h.cursor(readerID, latest)}}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(*cursor)
	n := len(raw) - cursorTag
	var p Pos
	ok := err == nil && n > 0
	if ok {
		p, ok = decodePos(raw[:n])
	}
	if !ok {
		return Pos{}, fail("cursor_invalid", "this cursor is malformed; pass back a cursor exactly as the server gave it, or "+resync)
	}
	text, err := h.store.Meta(ctx, MetaPrunedThrough)
	if err != nil {
		return Pos{}, AsError(err)
	}
	pruned, _ := ParsePos(text)
	expired := func() error {
		return fail("cursor_expired", fmt.Sprintf("events older than %d days are gone, and this cursor is older; %s", int(h.settings.EventRetention.Hours()/24), resync))
	}
	tag := raw[n:]
	through := Pos{math.MaxInt64, math.MaxInt64} // how far the cursor's generation reaches
	if !hmac.Equal(tag, h.cursorTagOf(readerID, h.generation, p)) {
		found := false
		// Newest first: after a restart, waiting readers hold the last
		// generation's cursors.
		for _, g := range slices.Backward(h.generations) {
			if hmac.Equal(tag, h.cursorTagOf(readerID, g.ID, p)) {
				found, through = true, g.End()
				break
			}
		}
		switch {
		// Generations that ended before the kept events are forgotten
		// (MarkRestored); their cursors are simply old.
		case !found && p.Compare(pruned) < 0:
			return Pos{}, expired()
		case !found:
			return Pos{}, fail("cursor_invalid", "this cursor was not issued to you by this database (it is another reader's, or another database's); pass back only the cursors you received, or "+resync)
		}
	}
	switch {
	case p.Compare(through) > 0:
		return Pos{}, fail("cursor_invalid", "this cursor was issued after the backup this database was restored from, and the events it follows are gone; "+resync)
	// A position with a transaction id (PostgreSQL) may be a webhook's,
	// written before its transaction committed and given out after, while
	// an older transaction still holds the horizon below it: reading after
	// it is safe, since events past the horizon are held back.
	case p.Tx == 0 && p.Compare(latest) > 0:
		return Pos{}, fail("cursor_invalid", "this cursor is ahead of the event log; "+resync)
	}
	if p.Compare(pruned) < 0 {
		return Pos{}, expired()
	}
	return p, nil
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
// §13): the current one ends at the last position the database holds, so
// its cursors up to there keep working and every cursor issued past it is
// cursor_invalid for ever. palaver restore calls it on the restored copy,
// and a SQLite server at each start (Options.Alone); after restoring
// PostgreSQL by other means, run palaver restore --mark before any server
// starts. Generations that ended before the kept events are forgotten:
// their cursors are expired anyway. It returns the generation that ended.
func MarkRestored(ctx context.Context, s Store) (Generation, error) {
	var ended Generation
	err := s.Update(ctx, func(tx Tx) error {
		gen, gs, err := loadGenerations(ctx, tx)
		if err != nil {
			return err
		}
		through, _, err := tx.LatestEvent(ctx)
		if err != nil {
			return err
		}
		prunedText, err := tx.Meta(ctx, MetaPrunedThrough)
		if err != nil {
			return err
		}
		pruned, _ := ParsePos(prunedText)
		gs = slices.DeleteFunc(gs, func(g Generation) bool { return g.End().Compare(pruned) < 0 })
		ended = Generation{ID: gen, Through: through.ID, ThroughTx: through.Tx}
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
