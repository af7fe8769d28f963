package hub

import (
	"context"
	"log/slog"
)

// What the hub offers the packages carved out of it (internal/oauth,
// internal/webhook, internal/a2aclient, internal/push, internal/export,
// internal/a2a, internal/overview): the leaves that manage what the core barely calls. They
// read through a consumer-sized interface of the store, write through
// Commit, and make their refusals with the hub's own constructors, so a
// face renders them like any other.

// Commit runs fn in a write transaction the way every change of the hub
// is made (update): the events fn returns are stored in it, with the
// outbound calls they queue, and published once it committed. A store may
// run fn more than once; only the last run's events count.
func (h *Hub) Commit(ctx context.Context, fn func(tx Tx) ([]*Event, error)) error {
	return h.update(ctx, fn)
}

// Log is the hub's logger.
func (h *Hub) Log() *slog.Logger { return h.log }

// Invalid is a refusal of bad input: code names what was wrong (the
// field's code, see the Code* constants), the message says what to do
// instead.
func Invalid(code, format string, args ...any) *Error { return invalid(code, format, args...) }

// NotFound is the error of something asked for that does not exist, or
// that the caller may not see.
func NotFound(format string, args ...any) *Error { return notFound(format, args...) }

// CleanText replaces each invalid UTF-8 byte, and each NUL, with U+FFFD:
// the one rule of text the hub keeps (§4).
func CleanText(s string) string { return cleanText(s) }

// LatestEvent is the position LatestCursor encodes: after every event
// committed before the call.
func (h *Hub) LatestEvent(ctx context.Context) (Pos, error) { return h.latestEvent(ctx) }

// CursorAt encodes position p as a cursor of readerID, the agent's or
// person's id.
func (h *Hub) CursorAt(readerID string, p Pos) string { return h.cursor(readerID, p) }
