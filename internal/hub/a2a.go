package hub

import (
	"context"
	"errors"
	"time"
)

// A2A (§18): an owner exposes an agent to A2A clients, which then hand it
// work under the same consent, brakes, review and provenance as any
// send_message. Exposure and tasks are internal/a2a/tasks; what stays here
// is what the core does for them: a request message is noted as one in
// the transaction that sends it (noteA2A), its caller hears a2a.task when
// the agent's processing of it changes (taskChanged), and a person reaches
// an agent directly only under §3 (OpenDirectAsPerson).

// A2AResourcePath is the path, under the server's URL, of the one OAuth
// resource (RFC 8707) every agent's A2A endpoint is part of (§10.6, §18):
// an OAuth token is used at an A2A endpoint only when it was issued for
// it (AuthenticateFor).
const A2AResourcePath = "/a2a/"

// EventTaskChanged tells an A2A caller that the agent's processing of its
// request changed (an attempt started, failed or was acknowledged, or the
// task was canceled), or that a held reply of the agent's in the
// conversation was rejected. Its message_id is the task's id (none for a
// rejected reply).
const EventTaskChanged = "a2a.task"

// exposureOf is the agent's A2A setting (not exposed, no skills when never
// set).
func exposureOf(ctx context.Context, r Reader, agentID string) (*A2AExposure, error) {
	e, err := r.A2AExposure(ctx, agentID)
	if errors.Is(err, ErrNoRows) {
		return &A2AExposure{AgentID: agentID, Skills: []Skill{}}, nil
	}
	if err != nil {
		return nil, AsError(err)
	}
	return e, nil
}

// noteA2A records that m is an A2A request to agentID (none when "").
func noteA2A(ctx context.Context, tx Tx, agentID string, m *Message) error {
	if agentID == "" {
		return nil
	}
	return tx.InsertA2ARequest(ctx, &A2ARequest{MessageID: m.ID, AgentID: agentID, CallerID: m.SenderID,
		ConversationID: m.ConversationID, CreatedAt: m.CreatedAt})
}

// taskChanged is the a2a.task event for the caller of an A2A request
// whose processing changed; none when the message is no A2A request.
func taskChanged(ctx context.Context, tx Tx, messageID string, now time.Time) ([]*Event, error) {
	r, err := tx.A2ARequest(ctx, messageID)
	if errors.Is(err, ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []*Event{{RecipientID: r.CallerID, Type: EventTaskChanged, ConversationID: r.ConversationID, MessageID: r.MessageID, CreatedAt: now}}, nil
}

// OpenDirectAsPerson opens or reuses the direct conversation between a
// person and an agent they may reach (§3: their own, or a public one),
// as an A2A call of the person's does.
func (h *Hub) OpenDirectAsPerson(ctx context.Context, u *User, a *Agent) (*ConversationView, error) {
	var view *ConversationView
	err := retryDuplicate(func() error {
		return h.update(ctx, func(tx Tx) ([]*Event, error) {
			if a.OwnerID != u.ID && !a.Public {
				return nil, deny("contact", "a person reaches another owner's agent only when its owner made it public; call %s with a token of one of your agents that %s let in (a token of that agent; its {open_conversation} asks them), or ask %s to make it public",
					a.Handle(), a.OwnerHandle, a.OwnerHandle)
			}
			var opened []*Event
			var err error
			view, opened, err = h.openDirect(ctx, tx, directKey([]string{u.ID, a.ID}), creatorPerson(u), []*Principal{agentPrincipal(a)})
			return opened, err
		})
	})
	if err != nil {
		return nil, err
	}
	return view, nil
}

// A2AReads are the queries of a2a (Reader embeds them).
type A2AReads interface {
	// A2AExposure is the agent's A2A setting (§18); ErrNoRows when it was
	// never set.
	A2AExposure(ctx context.Context, agentID string) (*A2AExposure, error)
	// ExposedAgents lists the owner's agents exposed over A2A that are not
	// archived, by slug.
	ExposedAgents(ctx context.Context, ownerID string) ([]*Agent, error)
	// A2ARequest finds the A2A request a message is (ErrNoRows: none).
	A2ARequest(ctx context.Context, messageID string) (*A2ARequest, error)
	// A2ACallers lists who sent A2A requests to the agent in a
	// conversation, each once.
	A2ACallers(ctx context.Context, conversationID, agentID string) ([]string, error)
	// A2ARequestsFrom lists the caller's A2A requests to the agent, only
	// those in conversationID unless it is "", newest first (by created
	// at, then message id): at most limit of them, those after before
	// (nil: from the newest); and how many there are before paging.
	A2ARequestsFrom(ctx context.Context, callerID, agentID, conversationID string, before *A2ARequest, limit int) ([]*A2ARequest, int, error)
}

// A2AWrites are the writes of a2a (Tx embeds them).
type A2AWrites interface {
	// PutA2AExposure stores the agent's A2A setting, replacing any.
	PutA2AExposure(ctx context.Context, e *A2AExposure) error
	InsertA2ARequest(ctx context.Context, r *A2ARequest) error
}
