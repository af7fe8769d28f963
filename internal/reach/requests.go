package reach

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// An agent's contact requests (§10.5 "Consent stays with people"): what
// it asks of its own owner, never of the other side.

// AgentContact is what became of an agent's contact request (§10.5), in
// the rooms profile's words.
type AgentContact struct {
	Handle string // the person or agent asked for, as resolved
	// Status is hub.AskApproved when the agent may reach Handle already (its
	// own owner, a sibling, or one §3 allows today), hub.GrantRejected when
	// Handle's owner declined to let it in, otherwise hub.AskPending: its
	// owner decides, or Handle's owner still has to let it in.
	Status    string
	RequestID string // the grant request (gr_…) its owner decides; "" when none was made
	Reason    string // what happens next, in a sentence for the agent
}

// AgentContactRequest is an agent asking to be in contact with a person or
// another owner's agent (handle, "@" allowed). Consent stays with people
// (§3, §10.5): nothing is asked of the other side. When the agent may
// reach them already (hub.MayAnswer) it is approved at once; otherwise the
// request goes to its own owner as a grant request — allow_human for a
// person, allow_agents for an agent — with message as its reason (blank:
// a plain sentence; at most hub.MaxContactMessage code points), decided under
// Approvals as every grant request is. A pending request that asks for the
// same is returned instead of a second one.
func (x *Reach) AgentContactRequest(ctx context.Context, c *hub.Caller, handle, message string) (*AgentContact, error) {
	message, err := hub.CheckLine("message", message, hub.MaxContactMessage)
	if err != nil {
		return nil, err
	}
	p, err := hub.Resolve(ctx, x.store, hub.AtHandle(handle))
	if err != nil {
		return nil, err
	}
	out := &AgentContact{Handle: p.Handle}
	owner, person := c.Owner.Handle, strings.SplitN(p.Handle, "/", 2)[0]
	_, err = hub.MayAnswer(ctx, x.store, c.Agent, p)
	var r *hub.Refusal
	switch {
	case err == nil:
		out.Status, out.Reason = hub.AskApproved, "you may reach "+p.Handle+" already"
		return out, nil
	case hub.IsPending(err):
		out.Status = hub.AskPending
		out.Reason = fmt.Sprintf("your owner %s granted you reach to %s; %s has not let you in yet and is asked when you first open a conversation with %s", owner, person, person, p.Handle)
		return out, nil
	case !errors.As(err, &r):
		return nil, hub.AsError(err)
	case r.Word() == "self":
		return nil, hub.Invalid("", "an agent is not its own contact")
	case r.Word() == "denied":
		out.Status, out.Reason = hub.GrantRejected, fmt.Sprintf("%s declined to let you in; that stands until %s changes it, and only your owner %s may take it up with them", person, person, owner)
		return out, nil
	}
	// The contact or the grant is missing: the owner decides.
	allowHuman := p.Kind == hub.PrincipalUser
	g, err := x.store.Grant(ctx, c.Agent.ID, p.OwnerID)
	if err != nil && !errors.Is(err, hub.ErrNoRows) {
		return nil, hub.AsError(err)
	}
	notContacts := ""
	if r.Word() == "contact" {
		notContacts = fmt.Sprintf("; %s and %s are not contacts yet, so %s needs to send %s a contact request too", owner, person, owner, person)
	}
	if g != nil && (allowHuman && g.AllowHuman || !allowHuman && g.AllowAgents) {
		out.Status = hub.AskPending
		out.Reason = fmt.Sprintf("your owner %s granted you reach to %s already%s", owner, person, notContacts)
		return out, nil
	}
	pending, err := x.store.GrantRequests(ctx, "", c.Agent.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	var req *hub.GrantRequest
	for _, pr := range pending {
		if pr.ContactID == p.OwnerID && (allowHuman && pr.AllowHuman || !allowHuman && pr.AllowAgents) {
			req = pr
		}
	}
	if req == nil {
		if message == "" {
			message = fmt.Sprintf("%s asks to be in contact with %s", c.Agent.Handle(), p.Handle)
		}
		if req, err = x.hub.RequestGrant(ctx, c, person, allowHuman, !allowHuman, message); err != nil {
			return nil, err
		}
	}
	out.Status, out.RequestID = hub.AskPending, req.ID
	out.Reason = fmt.Sprintf("your owner %s decides this under Approvals (request %s); you will hear grant.changed%s", owner, req.ID, notContacts)
	return out, nil
}

// AgentContactRequests lists the agent's own grant requests, oldest first,
// of one status: pending, approved, rejected, cancelled, or all ("" is
// all). Anything else is invalid.
func (x *Reach) AgentContactRequests(ctx context.Context, c *hub.Caller, status string) ([]*hub.GrantRequest, error) {
	want := strings.ToLower(strings.TrimSpace(status))
	switch want {
	case "":
		want = statusAll
	case hub.AskPending, hub.AskApproved, hub.GrantRejected, hub.GrantCancelled, statusAll:
	default:
		return nil, hub.Invalid("", "status is pending, approved, rejected, cancelled or all (got %q)", hub.Echo(status))
	}
	rs, err := x.store.AgentGrantRequests(ctx, c.Agent.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	out := []*hub.GrantRequest{}
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
func (x *Reach) AgentReceivedContactRequests(ctx context.Context, c *hub.Caller) ([]InboundView, error) {
	asks, err := x.store.InboundAsks(ctx, c.Agent.OwnerID, false)
	if err != nil {
		return nil, hub.AsError(err)
	}
	out := []InboundView{}
	for _, ask := range asks {
		if !slices.Contains(ask.Handles, c.Agent.Handle()) {
			continue
		}
		a, err := x.store.AgentByID(ctx, ask.AgentID)
		if err != nil {
			return nil, hub.AsError(err)
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
func (x *Reach) CancelAgentContactRequest(ctx context.Context, c *hub.Caller, requestID, handle string) (*hub.GrantRequest, error) {
	requestID, handle = strings.TrimSpace(requestID), hub.AtHandle(handle)
	var ids []string
	switch {
	case requestID != "":
		r, err := x.store.GrantRequest(ctx, requestID)
		if errors.Is(err, hub.ErrNoRows) || (err == nil && r.AgentID != c.Agent.ID) {
			return nil, hub.NotFound("%s has no contact request %q", c.Agent.Handle(), hub.Echo(requestID))
		}
		if err != nil {
			return nil, hub.AsError(err)
		}
		ids = []string{r.ID}
	case handle != "":
		owner, slug, err := hub.ParseHandle(handle)
		if err != nil {
			return nil, err
		}
		pending, err := x.store.GrantRequests(ctx, "", c.Agent.ID)
		if err != nil {
			return nil, hub.AsError(err)
		}
		for _, r := range pending {
			if r.ContactHandle == owner && (slug == "" && r.AllowHuman || slug != "" && r.AllowAgents) {
				ids = append(ids, r.ID)
			}
		}
		if len(ids) == 0 {
			return nil, hub.NotFound("%s has no pending contact request about %q", c.Agent.Handle(), hub.Echo(handle))
		}
	default:
		return nil, hub.Invalid("", "give the request's id (gr_…) or the {handle} it was about")
	}
	var last *hub.GrantRequest
	err := x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		now := x.hub.Now()
		var events []*hub.Event
		for _, id := range ids {
			r, err := tx.GrantRequest(ctx, id)
			if err != nil {
				return nil, err
			}
			switch r.Status {
			case hub.GrantCancelled:
				last = r
				continue
			case hub.AskPending:
			default:
				return nil, &hub.Error{Kind: hub.KindConflict, Msg: fmt.Sprintf("your owner %s already %s this request; only %s can change a grant", c.Owner.Handle, r.Status, c.Owner.Handle)}
			}
			// Claimed like a decision: of the owner deciding and the
			// agent withdrawing at once, the second finds it taken.
			if err := tx.DecideGrantRequest(ctx, r.ID, hub.GrantCancelled, now); errors.Is(err, hub.ErrNoRows) {
				return nil, &hub.Error{Kind: hub.KindConflict, Msg: fmt.Sprintf("your owner %s decided this request meanwhile; list your requests to see how", c.Owner.Handle)}
			} else if err != nil {
				return nil, err
			}
			r.Status, r.DecidedAt = hub.GrantCancelled, now
			last = r
			events = append(events, hub.ApprovalDecided(c.Owner, hub.ApprovalGrantRequest, r.ID, hub.GrantCancelled, now))
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
func (x *Reach) AgentDecideContact(ctx context.Context, c *hub.Caller) error {
	return &hub.Error{Kind: hub.KindForbidden, Msg: fmt.Sprintf("contact requests are your owner @%s's to approve or reject; an agent cannot", c.Owner.Handle),
		Hint: &hub.Hint{Lead: "they decide them", Action: hub.Action{Name: hub.ActionListApprovals, Args: map[string]string{"user": c.Owner.Handle}}}}
}

// AgentRemoveContact is an agent asking to end its reach to a contact,
// named by id or handle ("@" allowed; the id wins). Contacts and grants
// are its owner's (§10.5), so the ask goes to its owner as a question,
// answered on the dashboard, and comes back pending with the contact it
// is about. Its owner's own (the owner, a sibling) have no contact to end;
// anyone it cannot reach now is not_found.
func (x *Reach) AgentRemoveContact(ctx context.Context, c *hub.Caller, contactID, handle string) (*hub.Question, *hub.Principal, error) {
	ref := strings.TrimSpace(contactID)
	if ref == "" {
		ref = hub.AtHandle(handle)
	}
	if ref == "" {
		return nil, nil, hub.Invalid("", "give contact_id or handle: the contact to stop reaching, from {list_contacts}")
	}
	p, err := hub.Resolve(ctx, x.store, ref)
	if err != nil {
		return nil, nil, err
	}
	if p.OwnerID == c.Agent.OwnerID {
		return nil, nil, hub.Invalid("", "%s is your owner's own, not a contact; there is nothing to end", p.Handle)
	}
	if _, err := hub.MayAnswer(ctx, x.store, c.Agent, p); err != nil && !hub.IsPending(err) {
		var r *hub.Refusal
		if !errors.As(err, &r) {
			return nil, nil, hub.AsError(err)
		}
		return nil, nil, hub.NotFound("%s is not among your contacts; {list_contacts} lists them", p.Handle)
	}
	person := strings.SplitN(p.Handle, "/", 2)[0]
	q, err := x.hub.AskOwner(ctx, c, fmt.Sprintf("%s asks you to end its reach to %s: remove %s as a contact, or take back what you granted it for %s.",
		c.Agent.Handle(), p.Handle, person, person), "", "", nil)
	if err != nil {
		return nil, nil, err
	}
	return q, p, nil
}
