package hub

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Grants (§3): what an owner lets its agent reach of a contact, and the
// agent's requests for more.

// SetGrant is owner u granting (or withdrawing) its agent reach to a
// contact's person and agents; the agent hears grant.changed.
func (h *Hub) SetGrant(ctx context.Context, u *User, agentHandle, contactHandle string, allowHuman, allowAgents bool) (*Grant, error) {
	a, err := h.Agent(ctx, agentHandle)
	if err != nil {
		return nil, err
	}
	if a.OwnerID != u.ID {
		return nil, notFound("%s has no agent %s", u.Handle, agentHandle)
	}
	contact, err := h.User(ctx, contactHandle)
	if err != nil {
		return nil, err
	}
	g := &Grant{AgentID: a.ID, ContactID: contact.ID, AllowHuman: allowHuman, AllowAgents: allowAgents, DecidedBy: u.ID, UpdatedAt: h.now()}
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		return []*Event{grantChanged(a.ID, contact.Handle, g)}, tx.PutGrant(ctx, g)
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

func grantChanged(agentID, contact string, g *Grant) *Event {
	data, _ := json.Marshal(map[string]any{"contact": contact, "allow_human": g.AllowHuman, "allow_agents": g.AllowAgents})
	return &Event{RecipientID: agentID, Type: EventGrantChanged, Data: data, CreatedAt: g.UpdatedAt}
}

// RequestGrant is an agent asking its owner for reach to a contact (§3); it
// returns the pending request, and the owner hears grant.request.
func (h *Hub) RequestGrant(ctx context.Context, c *Caller, contactHandle string, allowHuman, allowAgents bool, reason string) (*GrantRequest, error) {
	contact, err := h.User(ctx, contactHandle)
	if err != nil {
		return nil, err
	}
	if contact.ID == c.Agent.OwnerID {
		return nil, invalid("", "you reach your own owner without a grant")
	}
	if !allowHuman && !allowAgents {
		return nil, invalid("", "ask for allow_human, allow_agents or both")
	}
	if reason, err = checkText("reason", strings.TrimSpace(reason), 1, MaxQuestion); err != nil {
		return nil, err
	}
	now := h.now()
	r := &GrantRequest{ID: NewID(IDGrantRequest, now), AgentID: c.Agent.ID, OwnerID: c.Agent.OwnerID, ContactID: contact.ID, ContactHandle: contact.Handle,
		AllowHuman: allowHuman, AllowAgents: allowAgents, Reason: reason, Status: AskPending, CreatedAt: now}
	data, _ := json.Marshal(map[string]any{"request_id": r.ID, "agent": c.Agent.Handle(), "contact": contact.Handle})
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		return []*Event{{RecipientID: c.Agent.OwnerID, Type: EventGrantRequest, Data: data, CreatedAt: now}}, tx.InsertGrantRequest(ctx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// DecideGrantRequest is the owner's answer: approval adds what was asked to
// the agent's grant. Either way the agent hears grant.changed.
func (h *Hub) DecideGrantRequest(ctx context.Context, u *User, id string, approve bool) (*GrantRequest, error) {
	var r *GrantRequest
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		var err error
		r, err = tx.GrantRequest(ctx, id)
		if errors.Is(err, ErrNoRows) || (err == nil && r.OwnerID != u.ID) {
			return nil, notFound("no grant request %q waits for %s", echo(id), u.Handle)
		}
		if err != nil {
			return nil, err
		}
		if r.Status != AskPending {
			return nil, decidedAlready(r, approve)
		}
		now := h.now()
		status := GrantRejected
		if approve {
			status = AskApproved
		}
		// Claim the decision first: of two deciding at once, the second
		// finds it taken and answers as if it came later.
		if err := tx.DecideGrantRequest(ctx, r.ID, status, now); errors.Is(err, ErrNoRows) {
			if r, err = tx.GrantRequest(ctx, id); err != nil {
				return nil, err
			}
			return nil, decidedAlready(r, approve)
		} else if err != nil {
			return nil, err
		}
		r.Status = status
		g, err := tx.Grant(ctx, r.AgentID, r.ContactID)
		if errors.Is(err, ErrNoRows) {
			g, err = &Grant{AgentID: r.AgentID, ContactID: r.ContactID}, nil
		}
		if err != nil {
			return nil, err
		}
		g.DecidedBy, g.UpdatedAt = u.ID, now
		if approve {
			g.AllowHuman, g.AllowAgents = g.AllowHuman || r.AllowHuman, g.AllowAgents || r.AllowAgents
			if err := tx.PutGrant(ctx, g); err != nil {
				return nil, err
			}
		}
		contact, err := tx.UserByID(ctx, r.ContactID)
		if err != nil {
			return nil, err
		}
		ev := grantChanged(r.AgentID, contact.Handle, g)
		ev.Data, _ = json.Marshal(map[string]any{"request_id": r.ID, "decision": r.Status, "contact": contact.Handle,
			"allow_human": g.AllowHuman, "allow_agents": g.AllowAgents})
		return []*Event{ev, decided(u, ApprovalGrantRequest, r.ID, r.Status, now)}, nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// decidedAlready answers a decision of a request already decided: the same
// decision again gets the same answer, the other a conflict, and so does
// any decision of a request withdrawn (by its agent, or by the end of
// the contact it was about).
func decidedAlready(r *GrantRequest, approve bool) error {
	if r.Status == GrantCancelled {
		return &Error{Kind: KindConflict, Msg: "this grant request was withdrawn (by its agent, or when the contact ended); there is nothing to decide"}
	}
	if (r.Status == AskApproved) == approve {
		return nil
	}
	return &Error{Kind: KindConflict, Msg: "this grant request was already " + r.Status}
}

// GrantReads are the queries of grants (Reader embeds them).
type GrantReads interface {
	Grant(ctx context.Context, agentID, contactID string) (*Grant, error)
	GrantsOf(ctx context.Context, agentID string) ([]*Grant, error)
	GrantRequest(ctx context.Context, id string) (*GrantRequest, error)
	// GrantRequests lists pending requests, of an owner's agents (ownerID)
	// or of one agent (agentID), oldest first.
	GrantRequests(ctx context.Context, ownerID, agentID string) ([]*GrantRequest, error)
	// AgentGrantRequests lists every request of the agent, whatever its
	// status, oldest first.
	AgentGrantRequests(ctx context.Context, agentID string) ([]*GrantRequest, error)
}

// GrantWrites are the writes of grants (Tx embeds them).
type GrantWrites interface {
	PutGrant(ctx context.Context, g *Grant) error
	InsertGrantRequest(ctx context.Context, r *GrantRequest) error
	DecideGrantRequest(ctx context.Context, id, status string, at time.Time) error
}
