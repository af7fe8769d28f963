// Package tasks is A2A in the hub's terms (DESIGN.md §18), beside the A2A
// face (internal/a2a) and the owner's settings in the other faces that
// call it: which agents an owner exposes, with the skills their cards list
// (exposure.go), and tasks. A task is a conversation's message: message/
// send stores the request in the direct conversation between the caller
// and the agent (the A2A contextId) through the hub's own send, with its
// consent, brakes, review and provenance, and the task's id is that
// message's id. Nothing about a task is kept beyond the message, its
// delivery to the agent (§5) and the agent's replies; its state is read
// from them whenever it is asked for (state).
package tasks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// Task states, in A2A's words.
const (
	Submitted     = "submitted"
	Working       = "working"
	InputRequired = "input-required"
	Completed     = "completed"
	Failed        = "failed"
	Canceled      = "canceled"
	Rejected      = "rejected"
)

// MaxReplies is the most replies a task carries; older ones stay in the
// conversation.
const MaxReplies = 50

// reader is what reading a task takes, of the store or of a transaction.
type reader interface {
	Message(ctx context.Context, id string) (*hub.Message, error)
	Messages(ctx context.Context, conversationID string, afterSeq int64, limit int) ([]*hub.Message, error)
	Delivery(ctx context.Context, agentID, messageID string) (*hub.Delivery, error)
	HeldMessages(ctx context.Context, ownerID string) ([]*hub.Message, error)
	A2ARequest(ctx context.Context, messageID string) (*hub.A2ARequest, error)
}

// Store is what the Tasks read and write of the hub's store.
type Store interface {
	reader
	Update(ctx context.Context, fn func(tx hub.Tx) error) error
	ExposedAgents(ctx context.Context, ownerID string) ([]*hub.Agent, error)
	A2ARequestsFrom(ctx context.Context, callerID, agentID, conversationID string, before *hub.A2ARequest, limit int) ([]*hub.A2ARequest, int, error)
	UserByHandle(ctx context.Context, handle string) (*hub.User, error)
	AgentByHandle(ctx context.Context, owner, slug string) (*hub.Agent, error)
}

// Tasks is A2A's exposure and tasks over the hub and its store; the faces
// decode, call one of its methods, and render.
type Tasks struct {
	hub   *hub.Hub // sends, waits, the person's agents, the clock
	store Store
}

// New returns the Tasks over h and its store.
func New(h *hub.Hub, s Store) *Tasks { return &Tasks{hub: h, store: s} }

// Caller is who calls an agent over A2A: an agent by its token (Agent) or
// a person by theirs (Person). Exactly one is set.
type Caller struct {
	Agent  *hub.Caller
	Person *hub.User
}

func (c Caller) principalID() string {
	if c.Agent != nil {
		return c.Agent.Agent.ID
	}
	return c.Person.ID
}

// require is the agent token's scope check; a person's token has every one.
func (c Caller) require(scope string) error {
	if c.Agent == nil {
		return nil
	}
	return c.Agent.Require(scope)
}

// Message is a message/send: the text of the A2A message and what its
// metadata and ids say.
type Message struct {
	ContextID   string // a conversation id; "" opens or reuses the direct one
	TaskID      string // a task of the caller's this message follows up; ""
	Body        string
	Summary     string // metadata.summary
	ClientMsgID string // the A2A messageId: a retry returns the task made before
}

// Task is an A2A task as the hub's records say it stands (§18).
type Task struct {
	ID             string // the request message's id
	ConversationID string
	Agent          *hub.Agent
	Request        *hub.Message
	State          string
	Note           string         // why it stands where it does, in Palaver's words
	Replies        []*hub.Message // the agent's text replies to it, oldest first
	Attempts       int
}

// Final reports whether the state ends a stream: nothing changes it until
// someone acts (input-required: the caller; failed: the agent trying again).
func (t *Task) Final() bool {
	switch t.State {
	case Submitted, Working:
		return false
	}
	return true
}

// asks reports whether a reply asks the caller something: its words end
// with a question mark and it was not sent as a notice (no_reply, §7).
func asks(m *hub.Message) bool {
	return !m.NoReply && strings.HasSuffix(strings.TrimSpace(m.Body), "?")
}

// state is the rule by which a task follows the agent's processing of the
// request (§5, §18):
//   - held for review by the caller's owner: submitted; rejected: rejected;
//   - waiting in the agent's inbox: submitted; an attempt running: working;
//   - the last attempt failed and none started since: failed (it becomes
//     working again when the agent retries);
//   - withdrawn (canceled, or the agent lost the conversation): canceled;
//   - acknowledged: working while a reply of the agent's waits for its
//     owner's review; else input-required when the last reply asks
//     something (asks), else completed.
func state(req *hub.Message, d *hub.Delivery, replies []*hub.Message, heldReplies int) (state, note string) {
	switch {
	case req.Status == hub.MessageHeld:
		return Submitted, "held for review by your owner; it reaches the agent once they approve it"
	case req.Status == hub.MessageRejected:
		return Rejected, "your owner rejected this message; it never reached the agent"
	case d == nil:
		return Submitted, "waiting in the agent's inbox"
	}
	switch d.State {
	case hub.DeliveryProcessing:
		return Working, fmt.Sprintf("the agent is working on it (attempt %d)", d.Attempts)
	case hub.DeliveryFailed:
		return Failed, fmt.Sprintf("attempt %d failed: %s", d.Attempts, d.Error)
	case hub.DeliveryWithdrawn:
		return Canceled, "withdrawn: it left the agent's inbox unprocessed"
	case hub.DeliveryDone:
		switch {
		case heldReplies > 0:
			return Working, "the agent's reply waits for its owner's review"
		case len(replies) > 0 && asks(replies[len(replies)-1]):
			return InputRequired, "the agent asks you something: answer with a message in the same context"
		}
		return Completed, "the agent acknowledged it"
	}
	return Submitted, "waiting in the agent's inbox"
}

// load reads a task: the request, its delivery to the agent, and the
// agent's text replies to it: those that name it (reply_to_seq), and those
// that name no message, after it up to the caller's next message.
func load(ctx context.Context, r reader, messageID string, a *hub.Agent) (*Task, error) {
	m, err := r.Message(ctx, messageID)
	if err != nil {
		return nil, err
	}
	t := &Task{ID: m.ID, ConversationID: m.ConversationID, Agent: a, Request: m}
	var d *hub.Delivery
	if m.Status == hub.MessageSent {
		if d, err = r.Delivery(ctx, a.ID, m.ID); errors.Is(err, hub.ErrNoRows) {
			d = nil
		} else if err != nil {
			return nil, err
		}
	}
	held := 0
	if d != nil && d.State == hub.DeliveryDone {
		t.Attempts = d.Attempts
		after, err := r.Messages(ctx, m.ConversationID, m.Seq, 4*MaxReplies)
		if err != nil {
			return nil, err
		}
		spoke := false // the caller spoke again: unaddressed replies answer that
		for _, x := range after {
			if x.SenderID == m.SenderID {
				spoke = true
				continue
			}
			addressed := x.ReplyToSeq == m.Seq || x.ReplyToSeq == 0 && !spoke
			if x.SenderID == a.ID && x.Kind == hub.MessageText && addressed && len(t.Replies) < MaxReplies {
				t.Replies = append(t.Replies, x)
			}
		}
		pending, err := r.HeldMessages(ctx, a.OwnerID)
		if err != nil {
			return nil, err
		}
		for _, x := range pending {
			if x.ConversationID == m.ConversationID && x.SenderID == a.ID && !x.CreatedAt.Before(m.CreatedAt) {
				held++
			}
		}
	} else if d != nil {
		t.Attempts = d.Attempts
	}
	t.State, t.Note = state(m, d, t.Replies, held)
	return t, nil
}
