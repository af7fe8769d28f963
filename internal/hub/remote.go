package hub

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Remote A2A agents (§18, "Out"): an owner adds an agent that lives
// elsewhere by its Agent Card's URL, and it becomes an agent of that
// owner — a participant like any, a sibling of the owner's agents, who
// may open conversations with it at once (adding it is the owner's
// consent), reached by other owners' agents only through a grant. A
// message to it goes out over A2A from a durable outbox (remote_outbox.go);
// its answer comes back into the conversation as its message, with the
// card's URL in its provenance, untrusted like every message. The hub
// decides what is sent when; a RemoteCaller (internal/a2aclient) only
// calls.

// RemoteAgent is a remote A2A agent as its owner sees it.
type RemoteAgent struct {
	AgentID     string
	Handle      string // owner/slug: how the owner's agents name it
	Slug        string
	CardURL     string
	Name        string // the card's
	Description string
	Provider    string
	Skills      []string
	Endpoint    string // the JSON-RPC interface called
	Version     string // its A2A revision, "1.0" or "0.3"
	// HasCredential says a credential is presented; the credential itself
	// is never shown back.
	HasCredential bool
	CreatedAt     time.Time
	FetchedAt     time.Time // when the card was last read
	// The latest delivery: when, and what went wrong ("" when it went
	// through); Pending is how many messages wait to go out or be answered.
	LastAt    time.Time
	LastError string
	Pending   int
}

// RemoteCard is what a RemoteCaller read of a card.
type RemoteCard struct {
	Name, Description, Provider string
	Skills                      []string
	Endpoint, Version           string
}

// RemoteReply is what a remote agent answered a call with: a message
// (State RemoteMessage) or a task in its state, with the words it carries.
type RemoteReply struct {
	TaskID    string
	State     string
	Text      string // the message's words, or the task's status's
	Artifacts []RemoteArtifact
}

// RemoteArtifact is an output of a remote task: its text parts' words and
// its data parts, each a JSON value.
type RemoteArtifact struct {
	ID, Name string
	Text     string
	Data     []json.RawMessage
}

// The states of a RemoteReply: A2A's task states, and a plain message.
const (
	RemoteMessage       = "message"
	RemoteSubmitted     = "submitted"
	RemoteWorking       = "working"
	RemoteCompleted     = "completed"
	RemoteInputRequired = "input-required"
	RemoteAuthRequired  = "auth-required"
)

// RemoteCaller calls remote A2A agents, connecting only where allow lets
// it (internal/a2aclient).
type RemoteCaller interface {
	// FetchCard reads and checks the card at cardURL.
	FetchCard(ctx context.Context, cardURL, credential string, allow func(host string, ip netip.Addr) bool) (*RemoteCard, error)
	// Call sends the call's message, or, once the remote made a task for
	// it (c.TaskID), asks after that task. A refusal the same call would
	// meet again is a *RemoteRefusal.
	Call(ctx context.Context, c *RemoteCall, allow func(host string, ip netip.Addr) bool) (*RemoteReply, error)
}

// RemoteRefusal is an error a remote answered a call with that trying
// again would not change (a JSON-RPC error).
type RemoteRefusal struct{ Msg string }

func (e *RemoteRefusal) Error() string { return e.Msg }

// RemoteAgentInput is what an owner adds a remote agent with.
type RemoteAgentInput struct {
	Slug    string // its name among the owner's agents
	CardURL string
	// Credential is presented on every call, as an Authorization header
	// ("Bearer …" when it names no scheme); "" for none.
	Credential string
}

// The remote agents' numbers (§18).
const (
	MaxRemoteCredential = 4096
	MaxRemoteURL        = 2048
	remoteError         = 300 // code points of a delivery's error kept
)

// RemoteReads are the queries of remote agents (Reader embeds them).
type RemoteReads interface {
	// RemoteAgents lists the owner's remote agents not removed, oldest
	// first.
	RemoteAgents(ctx context.Context, ownerID string) ([]*RemoteAgent, error)
	// RemoteAgentIDs lists the agent ids of every remote agent not
	// removed.
	RemoteAgentIDs(ctx context.Context) ([]string, error)
	// StaleRemoteCards lists the remote agents not removed whose card was
	// last read before before, the longest unread first, with where their
	// card is and the credential to present.
	StaleRemoteCards(ctx context.Context, before time.Time) ([]*RemoteCall, error)
	// DueRemotes lists the remote agents with calls due at now, the one
	// whose call has waited longest first.
	DueRemotes(ctx context.Context, now time.Time) ([]string, error)
}

// RemoteWrites are the writes of remote agents (Tx embeds them).
type RemoteWrites interface {
	InsertRemoteAgent(ctx context.Context, r *RemoteAgent, credential string) error
	// RemoveRemoteAgent marks it removed at, forgets its credential and
	// drops its calls.
	RemoveRemoteAgent(ctx context.Context, agentID string, at time.Time) error
	InsertRemoteCalls(ctx context.Context, calls []*RemoteCall) error
	// ClaimRemoteCalls takes up to limit due calls of a remote agent, as
	// ClaimWebhookCalls does, with where and how to call it.
	ClaimRemoteCalls(ctx context.Context, agentID string, now, until time.Time, limit int) ([]*RemoteCall, error)
	// RescheduleRemoteCall saves a call's attempts, due time, task and
	// last error.
	RescheduleRemoteCall(ctx context.Context, c *RemoteCall) error
	DeleteRemoteCall(ctx context.Context, id string) error
	// UpdateRemoteCard saves what a card read again says (r's card fields
	// and FetchedAt), and its description as the agent's.
	UpdateRemoteCard(ctx context.Context, r *RemoteAgent) error
	// SetRemoteTask records that the remote's task in the conversation
	// asks for input: its next message there continues it.
	SetRemoteTask(ctx context.Context, agentID, conversationID, taskID string) error
	// ClearRemoteTask forgets that taskID asks for input.
	ClearRemoteTask(ctx context.Context, agentID, conversationID, taskID string) error
	// SetRemoteDelivery records the remote's latest delivery.
	SetRemoteDelivery(ctx context.Context, agentID string, at time.Time, problem string) error
}

// AddRemoteAgent adds a remote A2A agent for the person (§18): its card is
// fetched (through the egress guard) and checked first, and nothing is
// made when it cannot be. It becomes the agent u/slug.
func (h *Hub) AddRemoteAgent(ctx context.Context, u *User, in RemoteAgentInput) (*RemoteAgent, error) {
	slug := strings.TrimSpace(in.Slug)
	if !slugRE.MatchString(slug) {
		return nil, invalid("", "a remote agent's name is 1–40 of a-z, 0-9 and - (like weather), its {handle} then %s/NAME; got %q", u.Handle, echo(in.Slug))
	}
	cardURL := strings.TrimSpace(in.CardURL)
	if p, err := url.Parse(cardURL); err != nil || p.Scheme != "https" || p.Host == "" || p.User != nil || len(cardURL) > MaxRemoteURL {
		return nil, invalid("", "the card URL must be an https URL of at most %d characters, like https://agent.example/.well-known/agent-card.json; got %q", MaxRemoteURL, echo(in.CardURL))
	}
	cred := strings.TrimSpace(in.Credential)
	if len(cred) > MaxRemoteCredential || strings.ContainsAny(cred, "\r\n") {
		return nil, invalid("", "the credential must be one line of at most %d bytes", MaxRemoteCredential)
	}
	if cred != "" && !strings.Contains(cred, " ") {
		cred = "Bearer " + cred
	}
	if h.remote == nil {
		return nil, &Error{Kind: KindInternal, Msg: "this server calls no remote agents"}
	}
	fctx, cancel := context.WithTimeout(ctx, RemoteTimeout)
	card, err := h.remote.FetchCard(fctx, cardURL, cred, h.AllowFetch)
	cancel()
	if err != nil {
		return nil, invalid("", "the agent card at %s could not be used: %s; nothing was added", escapeBraces(cardURL), escapeBraces(Preview(cleanText(err.Error()), remoteError)))
	}
	now := h.now()
	r := &RemoteAgent{CardURL: cardURL, HasCredential: cred != "", CreatedAt: now}
	r.setCard(card, now)
	a := &Agent{ID: NewID(IDAgent, now), OwnerID: u.ID, OwnerHandle: u.Handle, Slug: slug,
		Description: r.Description, Mode: ModeActive, CreatedAt: now}
	r.AgentID, r.Handle = a.ID, a.Handle()
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.InsertAgent(ctx, a); err != nil {
			return nil, err
		}
		return nil, tx.InsertRemoteAgent(ctx, r, cred)
	})
	if errors.Is(err, ErrDuplicate) {
		return nil, &Error{Kind: KindConflict, Msg: "you already have an agent named " + a.Handle() + " (archived agents keep their {handle}); pick another name"}
	}
	if err != nil {
		return nil, err
	}
	h.remotes.forget()
	return r, nil
}

// RemoteAgents lists the person's remote agents.
func (h *Hub) RemoteAgents(ctx context.Context, u *User) ([]*RemoteAgent, error) {
	rs, err := h.store.RemoteAgents(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	return rs, nil
}

// RemoveRemoteAgent removes the person's remote agent u/slug: it is
// archived (it leaves every conversation, its handle stays taken), its
// credential forgotten and its messages still to go out dropped.
func (h *Hub) RemoveRemoteAgent(ctx context.Context, u *User, slug string) error {
	var found *RemoteAgent
	rs, err := h.RemoteAgents(ctx, u)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Handle == u.Handle+"/"+strings.TrimSpace(slug) {
			found = r
		}
	}
	if found == nil {
		return notFound("you have no remote agent named %q; list your remote agents to see their names", echo(slug))
	}
	now := h.now()
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.RemoveRemoteAgent(ctx, found.AgentID, now); err != nil {
			return nil, err
		}
		if err := tx.SetAgentArchived(ctx, found.AgentID, now); err != nil {
			return nil, err
		}
		return nil, tx.RevokeAgentTokens(ctx, found.AgentID, now)
	})
	h.remotes.forget()
	return err
}

// setCard keeps what card says, cleaned and cut to size, as read at.
func (r *RemoteAgent) setCard(card *RemoteCard, at time.Time) {
	r.Name, r.Description = Preview(cleanText(card.Name), 200), Preview(cleanText(card.Description), MaxDescription)
	r.Provider, r.Endpoint, r.Version, r.FetchedAt = Preview(cleanText(card.Provider), 200), card.Endpoint, card.Version, at
	r.Skills = nil
	for _, s := range card.Skills {
		r.Skills = append(r.Skills, Preview(cleanText(strings.ReplaceAll(s, "\n", " ")), 100))
	}
}

// RemoteCardAge is how old a remote agent's card may grow before it is
// read again (§18: refreshed daily).
const RemoteCardAge = 24 * time.Hour

// RefreshRemoteCards reads again, through the egress guard, the card of
// every remote agent read more than RemoteCardAge ago, and keeps what it
// now says: its name, description, provider, skills and the interface
// called. A card that cannot be read or used now is kept as it was and
// tried again at the next sweep. It returns how many were read again;
// the server sweeps every hour.
func (h *Hub) RefreshRemoteCards(ctx context.Context) (int, error) {
	if h.remote == nil {
		return 0, nil
	}
	stale, err := h.store.StaleRemoteCards(ctx, h.now().Add(-RemoteCardAge))
	if err != nil {
		return 0, AsError(err)
	}
	refreshed := 0
	var errs []error
	for _, c := range stale {
		fctx, cancel := context.WithTimeout(ctx, RemoteTimeout)
		card, err := h.remote.FetchCard(fctx, c.CardURL, c.Credential, h.AllowFetch)
		cancel()
		if ctx.Err() != nil {
			return refreshed, ctx.Err()
		}
		if err != nil {
			h.log.Warn("a remote agent's card could not be read again; it is kept as it was", "agent", c.AgentID, "card", c.CardURL, "err", err)
			continue
		}
		r := &RemoteAgent{AgentID: c.AgentID}
		r.setCard(card, h.now())
		if err := h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.UpdateRemoteCard(ctx, r) }); err != nil {
			errs = append(errs, err)
			continue
		}
		refreshed++
	}
	return refreshed, errors.Join(errs...)
}
