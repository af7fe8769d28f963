package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Consent between owners (§3): an agent of a reaches person b, or b's
// agents, when (1) a and b are contacts, (2) a granted the agent that reach,
// and (3) b let the agent in (an inbound ask b approved).

// reachCheck decides whether agent from may talk to principal to. It returns
// nil when allowed; a Refusal with status pending_approval and the person to
// ask when only (3) is missing; a Refusal denied whose reason names the
// step to take otherwise.
func reachCheck(ctx context.Context, r Reader, from *Agent, to *Principal) (string, error) {
	switch {
	case to.ID == from.ID:
		return "", deny("self", "an agent cannot message itself; sessions of one agent meet in a shared project thread")
	case to.OwnerID == from.OwnerID:
		return "", nil // its own owner, or a sibling
	}
	b := to.OwnerID
	other := strings.SplitN(to.Handle, "/", 2)[0]
	c, err := r.Contact(ctx, from.OwnerID, b)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return "", err
	}
	if c == nil || c.Status != ContactAccepted {
		return "", deny("contact", "%s and %s are not contacts; ask your owner %s to send %s a contact request (palaver contact request)", from.OwnerHandle, other, from.OwnerHandle, other)
	}
	g, err := r.Grant(ctx, from.ID, b)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return "", err
	}
	switch {
	case to.Kind == PrincipalUser && (g == nil || !g.AllowHuman):
		return "", deny("grant", "your owner has not granted you reach to %s; ask with request_grant(contact_handle=%q, allow_human=true, reason=\"why you need it\")", other, other)
	case to.Kind == PrincipalAgent && (g == nil || !g.AllowAgents):
		return "", deny("grant", "your owner has not granted you reach to %s's agents; ask with request_grant(contact_handle=%q, allow_agents=true, reason=\"why you need it\")", other, other)
	}
	ask, err := r.InboundAsk(ctx, from.ID, b)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return "", err
	}
	switch {
	case ask != nil && ask.Status == AskApproved:
		return "", nil
	case ask != nil && ask.Status == AskDenied:
		return "", deny("denied", "%s declined to let you in; that stands until %s approves your ask after all (they can, under approvals); do not ask again, tell your owner", other, other)
	}
	return b, &Refusal{Status: "pending_approval",
		Reason: fmt.Sprintf("pending_approval: %s has not let you in yet and was asked; you will hear inbound.decided, then conversation.opened", other)}
}

// Inbound ask statuses.
const (
	AskPending  = "pending"
	AskApproved = "approved"
	AskDenied   = "denied"
)

// askIn records (or refreshes) the agent's inbound ask of person b for the
// handles, and tells b with inbound.ask.
func (h *Hub) askIn(ctx context.Context, tx Tx, from *Agent, b string, handles []string) ([]*Event, error) {
	now := h.now()
	ask, err := tx.InboundAsk(ctx, from.ID, b)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return nil, err
	}
	if ask == nil {
		ask = &InboundAsk{ID: NewID("in", now), AgentID: from.ID, UserID: b}
	}
	ask.Handles, ask.Status, ask.CreatedAt, ask.DecidedAt = handles, AskPending, now, time.Time{}
	if err := tx.PutInboundAsk(ctx, ask); err != nil {
		return nil, err
	}
	data, _ := json.Marshal(map[string]any{"ask_id": ask.ID, "agent": from.Handle(), "handles": handles})
	ev := &Event{RecipientID: b, Type: EventInboundAsk, Data: data, CreatedAt: now}
	return []*Event{ev}, nil
}

// resolveAll resolves handles (dropping duplicates) and checks reach to
// each: the targets, or a Refusal. When only inbound approval is missing,
// it asks each person concerned for the handles, adds the inbound.ask
// events to wake, and returns the pending_approval Refusal wrapped in
// commitThen, so the asks are kept though the call is refused.
func (h *Hub) resolveAll(ctx context.Context, tx Tx, from *Agent, handles []string, wake *[]*Event) ([]*Principal, error) {
	seen := map[string]bool{}
	var out []*Principal
	var pending []string
	var refusal error
	for _, hd := range handles {
		p, err := resolve(ctx, tx, hd)
		if err != nil {
			return nil, err
		}
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		b, err := reachCheck(ctx, tx, from, p)
		switch {
		case err == nil:
			out = append(out, p)
		case isPending(err):
			pending, refusal = append(pending, b), err
		default:
			return nil, err
		}
	}
	if len(pending) == 0 {
		return out, nil
	}
	for _, b := range pending {
		evs, err := h.askIn(ctx, tx, from, b, handles)
		if err != nil {
			return nil, err
		}
		*wake = append(*wake, evs...)
	}
	return nil, &commitThen{refusal}
}

// isPending reports a pending_approval refusal.
func isPending(err error) bool {
	var r *Refusal
	return errors.As(err, &r) && r.Status == "pending_approval"
}

// checkMix refuses to bring a principal of owner newOwner into a
// conversation where a principal of another owner takes part unless the two
// owners are contacts: a conversation shows everyone in it to everyone, so
// each pair of owners in it must have agreed (§3).
func checkMix(ctx context.Context, r Reader, newOwner, newHandle string, ps []Participant) error {
	seen := map[string]bool{newOwner: true}
	for _, p := range ps {
		if seen[p.OwnerID] || p.Archived {
			continue
		}
		seen[p.OwnerID] = true
		c, err := r.Contact(ctx, newOwner, p.OwnerID)
		if err != nil && !errors.Is(err, ErrNoRows) {
			return err
		}
		if c == nil || c.Status != ContactAccepted {
			owner := strings.SplitN(p.Handle, "/", 2)[0]
			return deny("contact", "%s cannot join a conversation with %s: their owners are not contacts", newHandle, owner)
		}
	}
	return nil
}

// stillReachable refuses a send when a participant of another owner is no
// longer within reach (a contact ended, a grant withdrawn, an inbound ask
// denied). Consent given one way covers the answer: an agent that was let
// reach another owner's agent may be answered by it.
func stillReachable(ctx context.Context, tx Tx, from *Agent, ps []Participant) error {
	self := &Principal{ID: from.ID, Kind: PrincipalAgent, Handle: from.Handle(), OwnerID: from.OwnerID, Agent: from}
	for _, p := range ps {
		if p.Archived || p.OwnerID == from.OwnerID {
			continue
		}
		to := &Principal{ID: p.PrincipalID, Kind: p.Kind, Handle: p.Handle, OwnerID: p.OwnerID}
		_, err := reachCheck(ctx, tx, from, to)
		if err != nil && p.Kind == PrincipalAgent {
			other, aerr := tx.AgentByID(ctx, p.PrincipalID)
			if aerr != nil {
				return aerr
			}
			if _, back := reachCheck(ctx, tx, other, self); back == nil {
				err = nil
			}
		}
		if isPending(err) {
			return deny("denied", "%s has not let you in; ask again with open_conversation", p.Handle)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ---- contacts between people

// RequestContact is u asking other to be contacts (§3). A request from the
// other side already waiting is accepted at once; a denial by the other
// stands until they change it.
func (h *Hub) RequestContact(ctx context.Context, u *User, otherHandle string) (*Contact, error) {
	other, err := h.User(ctx, otherHandle)
	if err != nil {
		return nil, err
	}
	if other.ID == u.ID {
		return nil, invalid("", "a person is not their own contact")
	}
	var c *Contact
	var wake []*Event
	err = h.update(ctx, &wake, func(tx Tx) error {
		now := h.now()
		old, err := tx.Contact(ctx, u.ID, other.ID)
		if err != nil && !errors.Is(err, ErrNoRows) {
			return err
		}
		switch {
		case old != nil && old.Status == ContactAccepted:
			c = old
			return nil
		case old != nil && old.Status == ContactPending && old.RequestedBy == u.ID:
			c = old
			return nil
		case old != nil && old.Status == ContactRejected && old.DecidedBy == other.ID:
			return &Error{Kind: KindForbidden, Code: "declined", Msg: other.Handle + " declined to be your contact; that stands until they change it"}
		case old != nil && old.RequestedBy == other.ID && (old.Status == ContactPending || old.Status == ContactRejected):
			// They asked (and maybe u said no before): both want it now.
			c = &Contact{UserA: u.ID, UserB: other.ID, Status: ContactAccepted, RequestedBy: old.RequestedBy, DecidedBy: u.ID, RequestedAt: old.RequestedAt, DecidedAt: now}
			wake = contactEvents(EventContactAccepted, u, other, now)
		default:
			c = &Contact{UserA: u.ID, UserB: other.ID, Status: ContactPending, RequestedBy: u.ID, RequestedAt: now}
			data, _ := json.Marshal(map[string]any{"from": u.Handle})
			wake = []*Event{{RecipientID: other.ID, Type: EventContactRequest, Data: data, CreatedAt: now}}
		}
		return tx.PutContact(ctx, c)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func contactEvents(typ string, a, b *User, now time.Time) []*Event {
	da, _ := json.Marshal(map[string]any{"contact": b.Handle})
	db, _ := json.Marshal(map[string]any{"contact": a.Handle})
	return []*Event{{RecipientID: a.ID, Type: typ, Data: da, CreatedAt: now}, {RecipientID: b.ID, Type: typ, Data: db, CreatedAt: now}}
}

// DecideContact is u answering other's contact request: accept or reject.
// Deciding again is not an error; a person who rejected may accept later.
// A cancelled request cannot be decided. Rejecting an accepted contact ends
// it, whichever of the two asked.
func (h *Hub) DecideContact(ctx context.Context, u *User, otherHandle string, accept bool) (*Contact, error) {
	other, err := h.User(ctx, otherHandle)
	if err != nil {
		return nil, err
	}
	var c *Contact
	var wake []*Event
	err = h.update(ctx, &wake, func(tx Tx) error {
		var err error
		c, err = tx.Contact(ctx, u.ID, other.ID)
		// Either person may end an accepted contact; only the one asked
		// answers a request.
		ending := err == nil && c.Status == ContactAccepted && !accept
		if errors.Is(err, ErrNoRows) || (err == nil && !ending && (c.RequestedBy != other.ID || c.Status == ContactCancelled)) {
			return notFound("no contact request from %s waits for %s; %s answers a request with: palaver contact approve %s --user %s", other.Handle, u.Handle, other.Handle, u.Handle, other.Handle)
		}
		if err != nil {
			return err
		}
		want := ContactRejected
		if accept {
			want = ContactAccepted
		}
		if c.Status == want {
			return nil
		}
		now := h.now()
		c.Status, c.DecidedBy, c.DecidedAt = want, u.ID, now
		if accept {
			wake = contactEvents(EventContactAccepted, u, other, now)
		}
		return tx.PutContact(ctx, c)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// CancelContact withdraws u's own pending request.
func (h *Hub) CancelContact(ctx context.Context, u *User, otherHandle string) (*Contact, error) {
	other, err := h.User(ctx, otherHandle)
	if err != nil {
		return nil, err
	}
	var c *Contact
	err = h.store.Update(ctx, func(tx Tx) error {
		var err error
		c, err = tx.Contact(ctx, u.ID, other.ID)
		if errors.Is(err, ErrNoRows) || (err == nil && (c.RequestedBy != u.ID || c.Status != ContactPending)) {
			return notFound("no pending contact request of %s to %s", u.Handle, other.Handle)
		}
		if err != nil {
			return err
		}
		c.Status, c.DecidedBy, c.DecidedAt = ContactCancelled, u.ID, h.now()
		return tx.PutContact(ctx, c)
	})
	if err != nil {
		return nil, asOutcome(err)
	}
	return c, nil
}

// ContactView is a contact row with the other person.
type ContactView struct {
	Contact *Contact
	Other   *User
}

// Contacts lists u's contact rows with the other person of each.
func (h *Hub) Contacts(ctx context.Context, u *User) ([]ContactView, error) {
	cs, err := h.store.ContactsOf(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	var out []ContactView
	for _, c := range cs {
		other, err := h.store.UserByID(ctx, c.Other(u.ID))
		if err != nil {
			return nil, AsError(err)
		}
		out = append(out, ContactView{Contact: c, Other: other})
	}
	return out, nil
}

// ---- grants

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
	var wake []*Event
	err = h.update(ctx, &wake, func(tx Tx) error {
		if err := tx.PutGrant(ctx, g); err != nil {
			return err
		}
		wake = []*Event{grantChanged(a.ID, contact.Handle, g)}
		return nil
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
	r := &GrantRequest{ID: NewID("gr", now), AgentID: c.Agent.ID, OwnerID: c.Agent.OwnerID, ContactID: contact.ID,
		AllowHuman: allowHuman, AllowAgents: allowAgents, Reason: reason, Status: AskPending, CreatedAt: now}
	data, _ := json.Marshal(map[string]any{"request_id": r.ID, "agent": c.Agent.Handle(), "contact": contact.Handle})
	var wake []*Event
	err = h.update(ctx, &wake, func(tx Tx) error {
		wake = []*Event{{RecipientID: c.Agent.OwnerID, Type: EventGrantRequest, Data: data, CreatedAt: now}}
		return tx.InsertGrantRequest(ctx, r)
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
	var wake []*Event
	err := h.update(ctx, &wake, func(tx Tx) error {
		var err error
		r, err = tx.GrantRequest(ctx, id)
		if errors.Is(err, ErrNoRows) || (err == nil && r.OwnerID != u.ID) {
			return notFound("no grant request %q waits for %s", cleanText(id), u.Handle)
		}
		if err != nil {
			return err
		}
		if r.Status != AskPending {
			return decidedAlready(r, approve)
		}
		now := h.now()
		status := "rejected"
		if approve {
			status = AskApproved
		}
		// Claim the decision first: of two deciding at once, the second
		// finds it taken and answers as if it came later.
		if err := tx.DecideGrantRequest(ctx, r.ID, status, now); errors.Is(err, ErrNoRows) {
			if r, err = tx.GrantRequest(ctx, id); err != nil {
				return err
			}
			return decidedAlready(r, approve)
		} else if err != nil {
			return err
		}
		r.Status = status
		g, err := tx.Grant(ctx, r.AgentID, r.ContactID)
		if errors.Is(err, ErrNoRows) {
			g, err = &Grant{AgentID: r.AgentID, ContactID: r.ContactID}, nil
		}
		if err != nil {
			return err
		}
		g.DecidedBy, g.UpdatedAt = u.ID, now
		if approve {
			g.AllowHuman, g.AllowAgents = g.AllowHuman || r.AllowHuman, g.AllowAgents || r.AllowAgents
			if err := tx.PutGrant(ctx, g); err != nil {
				return err
			}
		}
		contact, err := tx.UserByID(ctx, r.ContactID)
		if err != nil {
			return err
		}
		ev := grantChanged(r.AgentID, contact.Handle, g)
		ev.Data, _ = json.Marshal(map[string]any{"request_id": r.ID, "decision": r.Status, "contact": contact.Handle,
			"allow_human": g.AllowHuman, "allow_agents": g.AllowAgents})
		wake = []*Event{ev}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// decidedAlready answers a decision of a request already decided: the same
// decision again gets the same answer, the other a conflict.
func decidedAlready(r *GrantRequest, approve bool) error {
	if (r.Status == AskApproved) == approve {
		return nil
	}
	return &Error{Kind: KindConflict, Msg: "this grant request was already " + r.Status}
}

// ---- inbound asks

// DecideInbound is person u letting another owner's agent in (or not). The
// agent hears inbound.decided; on approval the conversation it asked for is
// opened and it hears conversation.opened. A decision may be changed later.
func (h *Hub) DecideInbound(ctx context.Context, u *User, id string, approve bool) (*InboundAsk, error) {
	var ask *InboundAsk
	var wake []*Event
	err := retryDuplicate(func() error {
		return h.update(ctx, &wake, func(tx Tx) error {
			var err error
			ask, err = tx.InboundAskByID(ctx, id)
			if errors.Is(err, ErrNoRows) || (err == nil && ask.UserID != u.ID) {
				return notFound("no inbound ask %q waits for %s", cleanText(id), u.Handle)
			}
			if err != nil {
				return err
			}
			now := h.now()
			want := AskDenied
			if approve {
				want = AskApproved
			}
			changed, err := tx.SetInboundAskStatus(ctx, ask.ID, want, now)
			if err != nil || !changed {
				ask.Status = want
				return err // the same decision again: nothing new to tell
			}
			ask.Status, ask.DecidedAt = want, now
			data, _ := json.Marshal(map[string]any{"ask_id": ask.ID, "decision": ask.Status, "by": u.Handle})
			wake = []*Event{{RecipientID: ask.AgentID, Type: EventInboundDecided, Data: data, CreatedAt: now}}
			if !approve {
				return nil
			}
			opened, err := h.openFor(ctx, tx, ask)
			wake = append(wake, opened...)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return ask, nil
}

// openFor opens the direct conversation an approved ask was for, when every
// handle is now reachable, and tells the agent with conversation.opened.
func (h *Hub) openFor(ctx context.Context, tx Tx, ask *InboundAsk) ([]*Event, error) {
	a, err := tx.AgentByID(ctx, ask.AgentID)
	if err != nil || a.Archived() {
		return nil, err
	}
	owner, err := tx.UserByID(ctx, a.OwnerID)
	if err != nil {
		return nil, err
	}
	caller := &Caller{Agent: a, Owner: owner}
	var asks []*Event // another step may still be missing: a new ask
	targets, err := h.resolveAll(ctx, tx, a, ask.Handles, &asks)
	if err != nil {
		return asks, nil // the agent asks again
	}
	ids := []string{a.ID}
	for _, p := range targets {
		ids = append(ids, p.ID)
	}
	conv, err := tx.DirectConversation(ctx, directKey(ids))
	var events []*Event
	switch {
	case errors.Is(err, ErrNoRows):
		var v *ConversationView
		if v, events, err = h.insertConversation(ctx, tx, caller, &Conversation{Kind: KindDirect, DirectKey: directKey(ids)}, targets); err != nil {
			return nil, err
		}
		conv = v.Conversation
	case err != nil:
		return nil, err
	}
	ev := &Event{RecipientID: a.ID, Type: EventConversationOpened, ConversationID: conv.ID, CreatedAt: h.now()}
	return append(events, ev), nil
}
