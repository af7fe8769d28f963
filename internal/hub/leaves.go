package hub

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/palaverhq/palaver/internal/outbox"
)

// What the hub offers the packages carved out of it (internal/oauth,
// internal/webhook, internal/a2aclient, internal/push, internal/export,
// internal/a2a/tasks, internal/search, internal/overview,
// internal/projects, internal/reach, internal/rooms,
// internal/permissions): the leaves that manage what
// the core barely calls. They read through a consumer-sized interface of the store, write
// through Commit, send through the hub's own send path, and make their
// refusals with the hub's own constructors, so a face renders them like
// any other.

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

// NotifyKick is rung after each commit that queued owner notifications:
// the dispatcher of internal/push steps on it.
func (h *Hub) NotifyKick() outbox.Kick { return h.notifyKick }

// LoadLocation is the time zone named, an IANA name ("" is UTC), or an
// invalid Error saying how to name one: what a person's TimeZone may be.
func LoadLocation(name string) (*time.Location, error) { return location(name) }

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

// WithOriginals fills OriginalBody in each of msgs that u may see the
// agent's own words of: only the owner who edited a message (§7).
func (h *Hub) WithOriginals(ctx context.Context, u *User, msgs []*Message) error {
	return withOriginals(ctx, h.store, u, msgs)
}

// ItemWithHistory is an item of a project its caller has already read,
// with its thread and every change.
func (h *Hub) ItemWithHistory(ctx context.Context, it *Item) (*ItemView, error) {
	return itemView(ctx, h.store, it)
}

// IDKind is the kind of an id, its prefix (IDUser, IDAgent, …); "" for a
// string with none.
func IDKind(id string) string { return idKind(id) }

// SendA2ARequest is SendMessage of an A2A request to agentID: the message
// is noted as one in the transaction that sends it (§18).
func (h *Hub) SendA2ARequest(ctx context.Context, c *Caller, agentID string, in SendInput) (*SendResult, error) {
	in.a2aAgent = agentID
	return h.SendMessage(ctx, c, in)
}

// PostA2ARequestAsPerson is a person's text message that is an A2A request
// to agentID, as PostAsPerson writes it (§4, §18).
func (h *Hub) PostA2ARequestAsPerson(ctx context.Context, u *User, agentID string, in SendInput) (*SendResult, error) {
	in.a2aAgent = agentID
	return h.postAsPerson(ctx, u, in)
}

// TaskChanged is the a2a.task event for the caller of the A2A request
// messageID, whose processing changed; none when it is no A2A request.
func TaskChanged(ctx context.Context, tx Tx, messageID string, now time.Time) ([]*Event, error) {
	return taskChanged(ctx, tx, messageID, now)
}

// A2AExposure is the agent's A2A setting (not exposed, no skills when never
// set).
func (h *Hub) A2AExposure(ctx context.Context, agentID string) (*A2AExposure, error) {
	return exposureOf(ctx, h.store, agentID)
}

// AgentProject is a project the agent was brought into and may see (§8):
// another is not_found, one whose agents are off denied with off.
func (h *Hub) AgentProject(ctx context.Context, c *Caller, projectID string) (*Project, error) {
	p, _, _, err := agentProject(ctx, h.store, c.Agent, projectID)
	return p, err
}

// MemberProject is a project the person is a member of; another is
// not_found, like one that does not exist.
func (h *Hub) MemberProject(ctx context.Context, u *User, projectID string) (*Project, error) {
	return memberProject(ctx, h.store, u, projectID)
}

// Observer is who the hub tells what it does (§14); never nil.
func (h *Hub) Observer() Observer { return h.observer }

// Check is the limit a caller asked for (0: the page's Default), or
// invalid past the page's Max.
func (p Page) Check(limit int) (int, error) { return p.check(limit) }

// InboxChanged wakes the agents' inbox streams (WatchInbox), which look
// again: a leaf's change to what their tokens may do (internal/oauth's
// revocations) ends them at once.
func (h *Hub) InboxChanged(agentIDs ...string) { h.inboxChanged(agentIDs...) }

// LatestEvent is the position LatestCursor encodes: after every event
// committed before the call.
func (h *Hub) LatestEvent(ctx context.Context) (Pos, error) { return h.latestEvent(ctx) }

// CursorAt encodes position p as a cursor of readerID, the agent's or
// person's id.
func (h *Hub) CursorAt(readerID string, p Pos) string { return h.cursor(readerID, p) }

// SeeInstance is the session a caller names, as the hub records it with a
// change (seeInstance).
func (h *Hub) SeeInstance(ctx context.Context, c *Caller, raw string) (string, error) {
	return h.seeInstance(ctx, c, raw)
}

// HomeOnFirstUse makes the owner's home project when projectID is it and it
// is not made yet.
func (h *Hub) HomeOnFirstUse(ctx context.Context, ownerID, projectID string) error {
	return h.homeOnFirstUse(ctx, ownerID, projectID)
}

// MemberProjectIn is MemberProject read through r (a transaction).
func MemberProjectIn(ctx context.Context, r Reader, u *User, projectID string) (*Project, error) {
	return memberProject(ctx, r, u, projectID)
}

// SpeakInProject is a project the agent may speak in, read through r; one
// it may only listen in is denied with listen, why saying what it may not
// do there.
func SpeakInProject(ctx context.Context, r Reader, a *Agent, projectID, why string) (*Project, error) {
	p, _, access, err := agentProject(ctx, r, a, projectID)
	if err != nil {
		return nil, err
	}
	if access != AccessSpeak {
		return nil, deny(AccessListen, "%s: %s", listenWhy(p), escapeBraces(why))
	}
	return p, nil
}

// CheckProject checks and cleans a project's name and description.
func CheckProject(name, description string) (string, string, error) {
	return checkProject(name, description)
}

// AsOutcome is an error as the hub answers it: a refusal or Error as it
// is, anything else an internal Error.
func AsOutcome(err error) error { return asOutcome(err) }

// RetryDuplicate runs update again when it failed on a duplicate key,
// another writer having made the same row first.
func RetryDuplicate(update func() error) error { return retryDuplicate(update) }

// An Updater runs a write transaction: the store, as a leaf asks for it.
type Updater interface {
	Update(ctx context.Context, fn func(tx Tx) error) error
}

// ClaimEach is one outbox step's claim (internal/webhook, a2aclient,
// push): in one write transaction, up to want[target] due calls of each
// target, as claim takes them.
func ClaimEach[R any](ctx context.Context, s Updater, want map[string]int, claim func(tx Tx, target string, n int) ([]R, error)) ([]R, error) {
	var out []R // what the last run of the transaction claimed
	err := s.Update(ctx, func(tx Tx) error {
		out = nil
		for target, n := range want {
			got, err := claim(tx, target, n)
			if err != nil {
				return err
			}
			out = append(out, got...)
		}
		return nil
	})
	if err != nil {
		return nil, AsError(err)
	}
	return out, nil
}

// Settings are the hub's settings, as the server started it.
func (h *Hub) Settings() Settings { return h.settings }

// LastListened is when the session last had a wait parked, any replica's,
// as of now (now itself when one is): zero when none did that presence
// still knows of.
func (h *Hub) LastListened(ctx context.Context, r Reader, principalID, instance string) (time.Time, error) {
	return h.lastListened(ctx, r, principalID, instance)
}

// ApprovalDecided is the event that tells the person who decided that an
// approval of kind no longer waits (§9).
func ApprovalDecided(u *User, kind, id, decision string, now time.Time) *Event {
	return decided(u, kind, id, decision, now)
}

// CommitThen, returned by a Commit's fn, commits what fn wrote and the
// events it returned, and then returns err.
func CommitThen(err error) error { return &commitThen{err} }

// MayAnswer is the rule of reach (§3), once, for the leaves that list
// what a send would meet (internal/reach): whether agent from may speak
// to principal to, read through r; nil, or the Refusal a send gets.
func MayAnswer(ctx context.Context, r Reader, from *Agent, to *Principal) (string, error) {
	return mayAnswer(ctx, r, from, to)
}

// AgentPrincipal is a as a principal of reach.
func AgentPrincipal(a *Agent) *Principal { return agentPrincipal(a) }

// IsPending reports a pending_approval refusal.
func IsPending(err error) bool { return isPending(err) }

// Refused reports a contract outcome of a rule: a Refusal, one committed
// after its side effects, or an Error that is not internal.
func Refused(err error) bool { return refused(err) }

// Resolve finds the principal a handle (or a principal's id) names,
// read through r; archived agents and unknown handles are not_found alike.
func Resolve(ctx context.Context, r Reader, handle string) (*Principal, error) {
	return resolve(ctx, r, handle)
}

// AtHandle is a handle as people write it, perhaps after an "@", without it.
func AtHandle(s string) string { return atHandle(s) }

// CheckLine checks an optional value that names or sums up something: a
// blank one is none; otherwise it is cleaned and checked as every text is.
func CheckLine(name, s string, max int) (string, error) { return checkLine(name, s, max) }

// PersonMayAdd is nil when person u may bring the principal handle names
// into a room — whom internal/reach's PersonPeers lists — or the refusal
// saying what to do instead.
func (h *Hub) PersonMayAdd(ctx context.Context, u *User, handle string) error {
	p, err := resolve(ctx, h.store, handle)
	if err != nil {
		return err
	}
	return personMayAdd(ctx, h.store, u, p)
}

// Window checks a Paging against the listing's page and returns the rows
// to skip and the page's size.
func (p Page) Window(pg Paging) (offset, size int, err error) { return p.window(pg) }

// Listings adds to each conversation its participants, how many messages
// wait unread past the reader's place, and the last message.
func (h *Hub) Listings(ctx context.Context, convs []*Conversation, readerID string) ([]ConversationListing, error) {
	return h.listings(ctx, convs, readerID)
}

// EndContact ends the accepted contact c between u and other in tx (§3),
// and the consent that stood on it with it: the events to store.
func (h *Hub) EndContact(ctx context.Context, tx Tx, u, other *User, c *Contact) ([]*Event, error) {
	return h.endContact(ctx, tx, u, other, c)
}

// ContactEvents are the events of typ that tell each of two people about
// their contact with the other.
func ContactEvents(typ string, a, b *User, now time.Time) []*Event {
	return contactEvents(typ, a, b, now)
}

// GrantViews lists the agent's grants with the handles.
func (h *Hub) GrantViews(ctx context.Context, a *Agent) ([]GrantView, error) {
	return grantViews(ctx, h.store, a)
}

// Home is the owner's home project, made on first use.
func (h *Hub) Home(ctx context.Context, ownerID string) (*Project, error) {
	return h.home(ctx, ownerID)
}

// EffectiveAccess is an agent's access in p, its project row pa and the
// project's cap both counted.
func EffectiveAccess(p *Project, pa *ProjectAgent) string { return effectiveAccess(p, pa) }

// PersonRead is a person reading res in v, a conversation PersonRoom
// gave: their place moves where they take part.
func (h *Hub) PersonRead(ctx context.Context, u *User, v *ConversationView, res *ReadResult) error {
	return h.personRead(ctx, u, v, slices.ContainsFunc(v.Participants, func(p Participant) bool { return p.PrincipalID == u.ID }), res)
}
