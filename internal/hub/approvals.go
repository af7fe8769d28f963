package hub

import (
	"context"
	"slices"
	"time"
)

// Approvals (§9): everything that waits for an owner's decision, in one list.

// Approval is one decision waiting for an owner (§9).
type Approval struct {
	Kind     string // "held_message", "question", "grant_request" or "inbound_ask"
	ID       string
	Agent    string // the agent's handle
	At       time.Time
	Message  *Message      // for held messages
	Question *Question     // for questions
	Grant    *GrantRequest // for grant requests
	Contact  string        // for grant requests: the contact's handle
	Ask      *InboundAsk   // for inbound asks
}

// Approvals lists every decision waiting for the owner, oldest first, with
// its context.
func (h *Hub) Approvals(ctx context.Context, u *User) ([]Approval, error) {
	held, err := h.store.HeldMessages(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	qs, err := h.store.PendingQuestions(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	grants, err := h.store.GrantRequests(ctx, u.ID, "")
	if err != nil {
		return nil, AsError(err)
	}
	asks, err := h.store.PendingInboundAsks(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	var out []Approval
	for _, r := range grants {
		a, err := h.store.AgentByID(ctx, r.AgentID)
		if err != nil {
			return nil, AsError(err)
		}
		contact, err := h.store.UserByID(ctx, r.ContactID)
		if err != nil {
			return nil, AsError(err)
		}
		out = append(out, Approval{Kind: "grant_request", ID: r.ID, Agent: a.Handle(), At: r.CreatedAt, Grant: r, Contact: contact.Handle})
	}
	for _, ask := range asks {
		a, err := h.store.AgentByID(ctx, ask.AgentID)
		if err != nil {
			return nil, AsError(err)
		}
		out = append(out, Approval{Kind: "inbound_ask", ID: ask.ID, Agent: a.Handle(), At: ask.CreatedAt, Ask: ask})
	}
	for _, m := range held {
		out = append(out, Approval{Kind: "held_message", ID: m.ID, Agent: m.SenderHandle, At: m.CreatedAt, Message: m})
	}
	for _, q := range qs {
		out = append(out, Approval{Kind: "question", ID: q.ID, Agent: q.AgentHandle, At: q.CreatedAt, Question: q})
	}
	slices.SortStableFunc(out, func(a, b Approval) int { return a.At.Compare(b.At) })
	return out, nil
}
