package hub

import (
	"context"
	"time"
)

// Remote A2A agents (§18, "Out"): an owner adds an agent that lives
// elsewhere by its Agent Card's URL, and it becomes an agent of that
// owner — a participant like any, a sibling of the owner's agents, who
// may open conversations with it at once (adding it is the owner's
// consent), reached by other owners' agents only through a grant. A
// message to it goes out over A2A from a durable outbox, queued with the
// send (queue.go); its answer comes back into the conversation as its
// message, with the card's URL in its provenance, untrusted like every
// message. The hub keeps the records and queues the calls;
// internal/a2aclient adds and removes remote agents and makes the calls.

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

// RemoteCall is a call in the remote outbox: one message to one remote.
type RemoteCall struct {
	ID             string // rmc_…: the A2A messageId, the same on every retry
	AgentID        string // the remote agent's
	ConversationID string // also the A2A contextId
	MessageID      string
	SenderHandle   string // who wrote the message: an error post mentions them
	Body           string
	TaskID         string // the remote's task for it, once it made one
	TaskStatus     string // what the task last said while it worked, posted as a task event post
	CreatedAt      time.Time
	DueAt          time.Time
	Attempts       int
	LastError      string
	// Filled by ClaimRemoteCalls: where and how it goes, and the task of
	// the conversation the remote asked for input in, which this message
	// answers ("" for none).
	CardURL, Endpoint, Version, Credential string
	Continues                              string
}

// The outbox's view of a call (outbox.Row).
func (c *RemoteCall) Target() string    { return c.AgentID }
func (c *RemoteCall) Queued() time.Time { return c.CreatedAt }
func (c *RemoteCall) Failed() int       { return c.Attempts }

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
