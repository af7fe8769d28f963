package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// ---- an agent's contact requests (§10.5 "Consent stays with people")

// AgentContact is what became of an agent's contact request (§10.5), in
// the rooms profile's words.
type AgentContact struct {
	Handle string // the person or agent asked for, as resolved
	// Status is AskApproved when the agent may reach Handle already (its
	// own owner, a sibling, or one §3 allows today), GrantRejected when
	// Handle's owner declined to let it in, otherwise AskPending: its
	// owner decides, or Handle's owner still has to let it in.
	Status    string
	RequestID string // the grant request (gr_…) its owner decides; "" when none was made
	Reason    string // what happens next, in a sentence for the agent
}

// AgentContactRequest is an agent asking to be in contact with a person or
// another owner's agent (handle, "@" allowed). Consent stays with people
// (§3, §10.5): nothing is asked of the other side. When the agent may
// reach them already (mayAnswer) it is approved at once; otherwise the
// request goes to its own owner as a grant request — allow_human for a
// person, allow_agents for an agent — with message as its reason (blank:
// a plain sentence; at most MaxContactMessage code points), decided under
// Approvals as every grant request is. A pending request that asks for the
// same is returned instead of a second one.
func (h *Hub) AgentContactRequest(ctx context.Context, c *Caller, handle, message string) (*AgentContact, error) {
	message, err := checkLine("message", message, MaxContactMessage)
	if err != nil {
		return nil, err
	}
	p, err := resolve(ctx, h.store, atHandle(handle))
	if err != nil {
		return nil, err
	}
	out := &AgentContact{Handle: p.Handle}
	owner, person := c.Owner.Handle, strings.SplitN(p.Handle, "/", 2)[0]
	_, err = mayAnswer(ctx, h.store, c.Agent, p)
	var r *Refusal
	switch {
	case err == nil:
		out.Status, out.Reason = AskApproved, "you may reach "+p.Handle+" already"
		return out, nil
	case isPending(err):
		out.Status = AskPending
		out.Reason = fmt.Sprintf("your owner %s granted you reach to %s; %s has not let you in yet and is asked when you first open a conversation with %s", owner, person, person, p.Handle)
		return out, nil
	case !errors.As(err, &r):
		return nil, AsError(err)
	case r.Word() == "self":
		return nil, invalid("", "an agent is not its own contact")
	case r.Word() == "denied":
		out.Status, out.Reason = GrantRejected, fmt.Sprintf("%s declined to let you in; that stands until %s changes it, and only your owner %s may take it up with them", person, person, owner)
		return out, nil
	}
	// The contact or the grant is missing: the owner decides.
	allowHuman := p.Kind == PrincipalUser
	g, err := h.store.Grant(ctx, c.Agent.ID, p.OwnerID)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return nil, AsError(err)
	}
	notContacts := ""
	if r.Word() == "contact" {
		notContacts = fmt.Sprintf("; %s and %s are not contacts yet, so %s needs to send %s a contact request too", owner, person, owner, person)
	}
	if g != nil && (allowHuman && g.AllowHuman || !allowHuman && g.AllowAgents) {
		out.Status = AskPending
		out.Reason = fmt.Sprintf("your owner %s granted you reach to %s already%s", owner, person, notContacts)
		return out, nil
	}
	pending, err := h.store.GrantRequests(ctx, "", c.Agent.ID)
	if err != nil {
		return nil, AsError(err)
	}
	var req *GrantRequest
	for _, pr := range pending {
		if pr.ContactID == p.OwnerID && (allowHuman && pr.AllowHuman || !allowHuman && pr.AllowAgents) {
			req = pr
		}
	}
	if req == nil {
		if message == "" {
			message = fmt.Sprintf("%s asks to be in contact with %s", c.Agent.Handle(), p.Handle)
		}
		if req, err = h.RequestGrant(ctx, c, person, allowHuman, !allowHuman, message); err != nil {
			return nil, err
		}
	}
	out.Status, out.RequestID = AskPending, req.ID
	out.Reason = fmt.Sprintf("your owner %s decides this under Approvals (request %s); you will hear grant.changed%s", owner, req.ID, notContacts)
	return out, nil
}

// AgentContactRequests lists the agent's own grant requests, oldest first,
// of one status: pending, approved, rejected, cancelled, or all ("" is
// all). Anything else is invalid.
func (h *Hub) AgentContactRequests(ctx context.Context, c *Caller, status string) ([]*GrantRequest, error) {
	want := strings.ToLower(strings.TrimSpace(status))
	switch want {
	case "":
		want = statusAll
	case AskPending, AskApproved, GrantRejected, GrantCancelled, statusAll:
	default:
		return nil, invalid("", "status is pending, approved, rejected, cancelled or all (got %q)", echo(status))
	}
	rs, err := h.store.AgentGrantRequests(ctx, c.Agent.ID)
	if err != nil {
		return nil, AsError(err)
	}
	out := []*GrantRequest{}
	for _, r := range rs {
		if want == statusAll || r.Status == want {
			out = append(out, r)
		}
	}
	return out, nil
}

// AgentReceivedContactRequests lists the asks its owner received that
// concern this agent, oldest first: other owners' agents asking to reach
// it (inbound asks naming it), each with the asker's handle and the
// owner's decision — pending, approved or denied (§3, §10.5). The agent
// sees them; only its owner decides.
func (h *Hub) AgentReceivedContactRequests(ctx context.Context, c *Caller) ([]InboundView, error) {
	asks, err := h.store.InboundAsks(ctx, c.Agent.OwnerID, false)
	if err != nil {
		return nil, AsError(err)
	}
	out := []InboundView{}
	for _, ask := range asks {
		if !slices.Contains(ask.Handles, c.Agent.Handle()) {
			continue
		}
		a, err := h.store.AgentByID(ctx, ask.AgentID)
		if err != nil {
			return nil, AsError(err)
		}
		out = append(out, InboundView{Ask: ask, Agent: a.Handle()})
	}
	return out, nil
}

// CancelAgentContactRequest withdraws the agent's own pending grant
// request, named by its id (gr_…; it wins when both are given) or by the
// handle it was about ("@" allowed; for a person, the requests for
// allow_human; for an agent, those for allow_agents, each of which is
// withdrawn, the newest returned). It leaves its owner's Approvals, and
// the owner hears approval.decided with the decision cancelled. Withdrawing
// a withdrawn request again is not an error; one its owner decided is a
// conflict; another agent's request is not_found like an unknown id.
func (h *Hub) CancelAgentContactRequest(ctx context.Context, c *Caller, requestID, handle string) (*GrantRequest, error) {
	requestID, handle = strings.TrimSpace(requestID), atHandle(handle)
	var ids []string
	switch {
	case requestID != "":
		r, err := h.store.GrantRequest(ctx, requestID)
		if errors.Is(err, ErrNoRows) || (err == nil && r.AgentID != c.Agent.ID) {
			return nil, notFound("%s has no contact request %q", c.Agent.Handle(), echo(requestID))
		}
		if err != nil {
			return nil, AsError(err)
		}
		ids = []string{r.ID}
	case handle != "":
		owner, slug, err := ParseHandle(handle)
		if err != nil {
			return nil, err
		}
		pending, err := h.store.GrantRequests(ctx, "", c.Agent.ID)
		if err != nil {
			return nil, AsError(err)
		}
		for _, r := range pending {
			if r.ContactHandle == owner && (slug == "" && r.AllowHuman || slug != "" && r.AllowAgents) {
				ids = append(ids, r.ID)
			}
		}
		if len(ids) == 0 {
			return nil, notFound("%s has no pending contact request about %q", c.Agent.Handle(), echo(handle))
		}
	default:
		return nil, invalid("", "give the request's id (gr_…) or the {handle} it was about")
	}
	var last *GrantRequest
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		now := h.now()
		var events []*Event
		for _, id := range ids {
			r, err := tx.GrantRequest(ctx, id)
			if err != nil {
				return nil, err
			}
			switch r.Status {
			case GrantCancelled:
				last = r
				continue
			case AskPending:
			default:
				return nil, &Error{Kind: KindConflict, Msg: fmt.Sprintf("your owner %s already %s this request; only %s can change a grant", c.Owner.Handle, r.Status, c.Owner.Handle)}
			}
			// Claimed like a decision: of the owner deciding and the
			// agent withdrawing at once, the second finds it taken.
			if err := tx.DecideGrantRequest(ctx, r.ID, GrantCancelled, now); errors.Is(err, ErrNoRows) {
				return nil, &Error{Kind: KindConflict, Msg: fmt.Sprintf("your owner %s decided this request meanwhile; list your requests to see how", c.Owner.Handle)}
			} else if err != nil {
				return nil, err
			}
			r.Status, r.DecidedAt = GrantCancelled, now
			last = r
			events = append(events, decided(c.Owner, ApprovalGrantRequest, r.ID, GrantCancelled, now))
		}
		return events, nil
	})
	if err != nil {
		return nil, err
	}
	return last, nil
}

// AgentDecideContact is an agent trying to approve or reject a contact
// request: always forbidden, since its owner decides (§10.5); the error
// names where they do.
func (h *Hub) AgentDecideContact(ctx context.Context, c *Caller) error {
	return hinted(KindForbidden, "they decide them", Action{ActionListApprovals, map[string]string{"user": c.Owner.Handle}},
		"contact requests are your owner @%s's to approve or reject; an agent cannot", c.Owner.Handle)
}

// AgentRemoveContact is an agent asking to end its reach to a contact,
// named by id or handle ("@" allowed; the id wins). Contacts and grants
// are its owner's (§10.5), so the ask goes to its owner as a question,
// answered on the dashboard, and comes back pending with the contact it
// is about. Its owner's own (the owner, a sibling) have no contact to end;
// anyone it cannot reach now is not_found.
func (h *Hub) AgentRemoveContact(ctx context.Context, c *Caller, contactID, handle string) (*Question, *Principal, error) {
	ref := strings.TrimSpace(contactID)
	if ref == "" {
		ref = atHandle(handle)
	}
	if ref == "" {
		return nil, nil, invalid("", "give contact_id or handle: the contact to stop reaching, from {list_contacts}")
	}
	p, err := resolve(ctx, h.store, ref)
	if err != nil {
		return nil, nil, err
	}
	if p.OwnerID == c.Agent.OwnerID {
		return nil, nil, invalid("", "%s is your owner's own, not a contact; there is nothing to end", p.Handle)
	}
	if _, err := mayAnswer(ctx, h.store, c.Agent, p); err != nil && !isPending(err) {
		var r *Refusal
		if !errors.As(err, &r) {
			return nil, nil, AsError(err)
		}
		return nil, nil, notFound("%s is not among your contacts; {list_contacts} lists them", p.Handle)
	}
	person := strings.SplitN(p.Handle, "/", 2)[0]
	q, err := h.AskOwner(ctx, c, fmt.Sprintf("%s asks you to end its reach to %s: remove %s as a contact, or take back what you granted it for %s.",
		c.Agent.Handle(), p.Handle, person, person), "", "", nil)
	if err != nil {
		return nil, nil, err
	}
	return q, p, nil
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
