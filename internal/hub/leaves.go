package hub

import (
	"context"
	"log/slog"

	"github.com/palaverhq/palaver/internal/outbox"
)

// What the hub offers the packages carved out of it (internal/oauth,
// internal/webhook, internal/a2aclient, internal/push, internal/export,
// internal/a2a): the leaves that manage what the core barely calls. They
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

// CheckOutboundURL is checkOutboundURL: a URL the server will call out to
// as it is kept, or what is wrong with it, in k's words.
func (h *Hub) CheckOutboundURL(ctx context.Context, raw string, k Outbound) (string, error) {
	return h.checkOutboundURL(ctx, raw, k)
}

// WebhookKick is rung after each commit that queued webhook calls: the
// dispatcher of internal/webhook steps on it.
func (h *Hub) WebhookKick() outbox.Kick { return h.hookKick }

// RemoteKick is rung after each commit that queued calls to remote
// agents: the dispatcher of internal/a2aclient steps on it.
func (h *Hub) RemoteKick() outbox.Kick { return h.remoteKick }

// ForgetWebhookAgents makes the next commit read again which agents have
// an enabled endpoint: one saved or enabled here counts at once.
func (h *Hub) ForgetWebhookAgents() { h.hooked.forget() }

// ForgetRemoteAgents makes the next commit read again which agents are
// remote: one added or removed here counts at once.
func (h *Hub) ForgetRemoteAgents() { h.remotes.forget() }

// DeliverOnce is one step of an outbox: it claims what is due, makes it,
// and returns once each ended.
func DeliverOnce(ctx context.Context, dispatch func(context.Context, func(string)) (*outbox.Pass, error)) (Pass, error) {
	return deliverOnce(ctx, dispatch)
}

// SendFromRemote is SendMessage as the answer of the remote A2A agent
// whose card is at cardURL: its provenance says so (§18).
func (h *Hub) SendFromRemote(ctx context.Context, c *Caller, in SendInput, cardURL string) (*SendResult, error) {
	in.remoteURL = cardURL
	return h.SendMessage(ctx, c, in)
}

// ValidSlug reports whether slug is an agent's name: 1–40 of a-z, 0-9
// and -, starting with a letter or digit.
func ValidSlug(slug string) bool { return slugRE.MatchString(slug) }

// EscapeBraces doubles each {, so that words from outside are never taken
// for a placeholder a face names.
func EscapeBraces(s string) string { return escapeBraces(s) }

// LookupErr turns ErrNoRows into a not_found Error with the message, and
// any other error into an internal one.
func LookupErr(err error, format string, args ...any) error { return lookupErr(err, format, args...) }
