package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Contacts between people (§3): a request one way, a decision the other;
// requests in both directions accept each other.

// MaxContactMessage is the most code points a contact request's message
// may hold (§3, §10.5).
const MaxContactMessage = 500

// RequestContact is u asking other to be contacts (§3), with an optional
// message (at most MaxContactMessage code points; blank is none; cleaned
// as every text is, §4). otherHandle may start with "@". A request from the other side
// already waiting is accepted at once: the answer is this request, with its
// own id, time and message, approved by the other's asking. A denial by the
// other stands until they change it. Asking again while u's request waits,
// or once they are contacts, changes nothing; any other new request (after
// a cancel, a removal, or u's own rejection) is a request of its own, with
// a new id and time.
func (h *Hub) RequestContact(ctx context.Context, u *User, otherHandle, message string) (*Contact, error) {
	message, err := checkLine("message", message, MaxContactMessage)
	if err != nil {
		return nil, err
	}
	other, err := h.User(ctx, atHandle(otherHandle))
	if err != nil {
		return nil, err
	}
	if other.ID == u.ID {
		return nil, invalid("", "a person is not their own contact")
	}
	var c *Contact
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		now := h.now()
		old, err := tx.Contact(ctx, u.ID, other.ID)
		if err != nil && !errors.Is(err, ErrNoRows) {
			return nil, err
		}
		var events []*Event
		id := NewID(IDContact, now)
		switch {
		case old != nil && old.Status == ContactAccepted:
			c = old
			return nil, nil
		case old != nil && old.Status == ContactPending && old.RequestedBy == u.ID:
			c = old
			return nil, nil
		case old != nil && old.Status == ContactRejected && old.DecidedBy == other.ID:
			return nil, &Error{Kind: KindForbidden, Code: "declined", Msg: other.Handle + " declined to be your contact; that stands until they change it"}
		case old != nil && old.RequestedBy == other.ID && (old.Status == ContactPending || old.Status == ContactRejected):
			// They asked (and maybe u said no before): both want it now.
			c = &Contact{ID: id, UserA: u.ID, UserB: other.ID, Status: ContactAccepted, RequestedBy: u.ID, DecidedBy: other.ID, RequestedAt: now, DecidedAt: now, Message: message}
			events = contactEvents(EventContactAccepted, u, other, now)
		default:
			c = &Contact{ID: id, UserA: u.ID, UserB: other.ID, Status: ContactPending, RequestedBy: u.ID, RequestedAt: now, Message: message}
			ev := map[string]any{"from": u.Handle, "request_id": id}
			if message != "" {
				ev["message"] = message
			}
			data, _ := json.Marshal(ev)
			events = []*Event{{RecipientID: other.ID, Type: EventContactRequest, Data: data, CreatedAt: now}}
		}
		return events, tx.PutContact(ctx, c)
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
// A cancelled request, or a contact one of them ended, cannot be decided.
// Rejecting an accepted contact ends it, whichever of the two asked, as
// RemoveContact does.
func (h *Hub) DecideContact(ctx context.Context, u *User, otherHandle string, accept bool) (*Contact, error) {
	other, err := h.User(ctx, otherHandle)
	if err != nil {
		return nil, err
	}
	var c *Contact
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		var err error
		c, err = tx.Contact(ctx, u.ID, other.ID)
		// Either person may end an accepted contact; only the one asked
		// answers a request.
		ending := err == nil && c.Status == ContactAccepted && !accept
		if errors.Is(err, ErrNoRows) || (err == nil && !ending && (c.RequestedBy != other.ID || c.Status == ContactCancelled || c.Status == ContactRemoved)) {
			return nil, hinted(KindNotFound, other.Handle+" answers a request", Action{ActionApproveContact, map[string]string{"user": other.Handle, "handle": u.Handle}},
				"no contact request from %s waits for %s", other.Handle, u.Handle)
		}
		if err != nil {
			return nil, err
		}
		if ending {
			return h.endContact(ctx, tx, u, other, c)
		}
		want := ContactRejected
		if accept {
			want = ContactAccepted
		}
		if c.Status == want {
			return nil, nil
		}
		now := h.now()
		c.Status, c.DecidedBy, c.DecidedAt = want, u.ID, now
		events := []*Event{decided(u, ApprovalContactRequest, c.ID, c.Status, now)}
		if accept {
			events = append(events, contactEvents(EventContactAccepted, u, other, now)...)
		}
		return events, tx.PutContact(ctx, c)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// DecideContactRequest is DecideContact for the request under its id, as
// approvals list it; an id that is not a request between u and another is
// not_found, and u's own request is forbidden: only the one asked decides.
func (h *Hub) DecideContactRequest(ctx context.Context, u *User, id string, accept bool) (*Contact, error) {
	c, err := h.store.ContactByID(ctx, id)
	if errors.Is(err, ErrNoRows) || (err == nil && c.UserA != u.ID && c.UserB != u.ID) {
		return nil, notFound("no contact request %q waits for %s", echo(id), u.Handle)
	}
	if err != nil {
		return nil, AsError(err)
	}
	other, err := h.UserByID(ctx, c.Other(u.ID))
	if err != nil {
		return nil, err
	}
	if c.RequestedBy == u.ID {
		return nil, &Error{Kind: KindForbidden, Msg: fmt.Sprintf("%s is your own contact request to %s: only %s can approve or reject it; you may cancel it while it waits",
			c.ID, other.Handle, other.Handle)}
	}
	if c.Status == ContactAccepted || c.Status == ContactRejected {
		// A request is answered once; a contact is ended by removing it.
		return nil, &Error{Kind: KindConflict, Msg: fmt.Sprintf("%s was %s already and waits for no answer; to end a contact with %s, remove it", c.ID, c.Status, other.Handle)}
	}
	return h.DecideContact(ctx, u, other.Handle, accept)
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

// CancelContactRequest is CancelContact for u's own request under its id
// (ct_…). An id that names no request of u's — unknown, or another's
// request to u — is not_found alike, and so is a request no longer pending.
func (h *Hub) CancelContactRequest(ctx context.Context, u *User, id string) (*Contact, error) {
	c, err := h.store.ContactByID(ctx, strings.TrimSpace(id))
	if errors.Is(err, ErrNoRows) || (err == nil && c.RequestedBy != u.ID) {
		return nil, notFound("%s sent no contact request %q", u.Handle, echo(id))
	}
	if err != nil {
		return nil, AsError(err)
	}
	other, err := h.UserByID(ctx, c.Other(u.ID))
	if err != nil {
		return nil, err
	}
	return h.CancelContact(ctx, u, other.Handle)
}

// RemoveContact ends u's contact with another person (§3), named by the
// contact's id (ct_…; it wins when both are given) or by the person's
// handle ("@" allowed): either of the two may end it, for both
// (endContact), and with it their agents' reach across. Only an accepted
// contact is removed: a request that waits is cancelled or rejected
// instead, and the message says which. An id of another pair's contact is
// not_found like an unknown one.
func (h *Hub) RemoveContact(ctx context.Context, u *User, contactID, handle string) (*Contact, error) {
	contactID, handle = strings.TrimSpace(contactID), atHandle(handle)
	var c *Contact
	var err error
	switch {
	case contactID != "":
		c, err = h.store.ContactByID(ctx, contactID)
		if errors.Is(err, ErrNoRows) || (err == nil && c.UserA != u.ID && c.UserB != u.ID) {
			return nil, notFound("%s has no contact %q", u.Handle, echo(contactID))
		}
	case handle != "":
		var other *User
		if other, err = h.User(ctx, handle); err != nil {
			return nil, err
		}
		c, err = h.store.Contact(ctx, u.ID, other.ID)
		if errors.Is(err, ErrNoRows) {
			return nil, notFound("%s and %s are not contacts", u.Handle, other.Handle)
		}
	default:
		return nil, invalid("", "give the contact's id (ct_…) or {handle}")
	}
	if err != nil {
		return nil, AsError(err)
	}
	other, err := h.UserByID(ctx, c.Other(u.ID))
	if err != nil {
		return nil, err
	}
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		// Read again in the transaction: the other may have ended it first.
		var err error
		if c, err = tx.Contact(ctx, u.ID, other.ID); err != nil {
			return nil, err
		}
		switch {
		case c.Status == ContactAccepted:
			return h.endContact(ctx, tx, u, other, c)
		case c.Status == ContactPending && c.RequestedBy == u.ID:
			return nil, notFound("%s and %s are not contacts yet: your request waits for %s; cancel it instead", u.Handle, other.Handle, other.Handle)
		case c.Status == ContactPending:
			return nil, notFound("%s and %s are not contacts yet: %s's request waits for you; reject it instead", u.Handle, other.Handle, other.Handle)
		}
		return nil, notFound("%s and %s are not contacts", u.Handle, other.Handle)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// endContact ends the accepted contact c between u and other (§3): it
// becomes removed, and the consent that stood on it goes with it. Every
// grant of either person's agents to reach the other is withdrawn (the
// agent hears grant.changed, with contact_ended) and every inbound ask of
// one's agents to the other is dropped, waiting or decided — so becoming
// contacts again later brings back no reach that nobody gave anew. Sends
// into conversations they share are refused from then on, as reach is
// checked at every send (stillReachable). Either may ask again.
func (h *Hub) endContact(ctx context.Context, tx Tx, u, other *User, c *Contact) ([]*Event, error) {
	now := h.now()
	c.Status, c.DecidedBy, c.DecidedAt = ContactRemoved, u.ID, now
	if err := tx.PutContact(ctx, c); err != nil {
		return nil, err
	}
	var events []*Event
	for _, side := range [][2]*User{{u, other}, {other, u}} {
		owner, contact := side[0], side[1]
		agents, err := tx.Agents(ctx, owner.ID, true)
		if err != nil {
			return nil, err
		}
		for _, a := range agents {
			g, err := tx.Grant(ctx, a.ID, contact.ID)
			switch {
			case err == nil && (g.AllowHuman || g.AllowAgents):
				g.AllowHuman, g.AllowAgents, g.DecidedBy, g.UpdatedAt = false, false, u.ID, now
				if err := tx.PutGrant(ctx, g); err != nil {
					return nil, err
				}
				ev := grantChanged(a.ID, contact.Handle, g)
				ev.Data, _ = json.Marshal(map[string]any{"contact": contact.Handle, "allow_human": false, "allow_agents": false, "contact_ended": true})
				events = append(events, ev)
			case err != nil && !errors.Is(err, ErrNoRows):
				return nil, err
			}
			// Its requests for reach to the contact go too: granted
			// later, one would give back what ending the contact took.
			pending, err := tx.GrantRequests(ctx, "", a.ID)
			if err != nil {
				return nil, err
			}
			for _, r := range pending {
				if r.ContactID != contact.ID {
					continue
				}
				if err := tx.DecideGrantRequest(ctx, r.ID, GrantCancelled, now); err != nil {
					return nil, err
				}
				events = append(events, decided(owner, ApprovalGrantRequest, r.ID, GrantCancelled, now))
			}
			ask, err := tx.InboundAsk(ctx, a.ID, contact.ID)
			switch {
			case err == nil:
				if err := tx.DeleteInboundAsk(ctx, ask.ID); err != nil {
					return nil, err
				}
			case !errors.Is(err, ErrNoRows):
				return nil, err
			}
		}
	}
	return events, nil
}

// ContactRequest is one contact request from u's side (§3, §10.5): the
// other person, who asked, what they said, and where it stands.
type ContactRequest struct {
	ID          string // ct_…, the contact's id too
	UserID      string // the other person
	Handle      string
	Name        string
	Sent        bool   // u asked; false: the other person did
	Message     string // "" for none
	Status      string // ContactPending, ContactAccepted, ContactRejected or ContactCancelled
	RequestedAt time.Time
	DecidedAt   time.Time // zero while pending
}

// ContactRequests lists u's contact requests, oldest first: those others
// sent u (sent false) or those u sent (sent true). status is one of
// pending, accepted, rejected, cancelled or all, with "approved" taken for
// accepted (the rooms profile's word); "" is pending for received
// requests and all for sent ones. Anything else is invalid.
func (h *Hub) ContactRequests(ctx context.Context, u *User, sent bool, status string) ([]ContactRequest, error) {
	want, err := contactStatus(status, sent)
	if err != nil {
		return nil, err
	}
	cs, err := h.Contacts(ctx, u)
	if err != nil {
		return nil, err
	}
	out := []ContactRequest{}
	for _, cv := range cs {
		c := cv.Contact
		if (c.RequestedBy == u.ID) != sent || (want != statusAll && c.Status != want) {
			continue
		}
		out = append(out, ContactRequest{ID: c.ID, UserID: cv.Other.ID, Handle: cv.Other.Handle, Name: cv.Other.Name, Sent: sent,
			Message: c.Message, Status: c.Status, RequestedAt: c.RequestedAt, DecidedAt: c.DecidedAt})
	}
	return out, nil
}

// statusAll is the status filter that keeps every status.
const statusAll = "all"

// contactStatus reads a listing's status filter (ContactRequests).
func contactStatus(status string, sent bool) (string, error) {
	switch s := strings.ToLower(strings.TrimSpace(status)); s {
	case "":
		if sent {
			return statusAll, nil
		}
		return ContactPending, nil
	case AskApproved:
		return ContactAccepted, nil
	case ContactPending, ContactAccepted, ContactRejected, ContactCancelled, statusAll:
		return s, nil
	}
	return "", invalid("", "status is pending, accepted (or approved), rejected, cancelled or all (got %q)", echo(status))
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

// GrantView is one grant of an agent to a contact (§3), with both handles.
type GrantView struct {
	Grant   *Grant
	Agent   string // the agent's handle
	Contact string // the contact's handle
}

// grantViews lists the agent's grants with the handles.
func grantViews(ctx context.Context, r Reader, a *Agent) ([]GrantView, error) {
	gs, err := r.GrantsOf(ctx, a.ID)
	if err != nil {
		return nil, AsError(err)
	}
	var out []GrantView
	for _, g := range gs {
		u, err := r.UserByID(ctx, g.ContactID)
		if err != nil {
			return nil, AsError(err)
		}
		out = append(out, GrantView{Grant: g, Agent: a.Handle(), Contact: u.Handle})
	}
	return out, nil
}

// InboundView is another owner's agent's ask to come in, with its handle.
type InboundView struct {
	Ask   *InboundAsk
	Agent string
}

// ConsentView is everything of §3 a person decides: their contacts and
// requests both ways, their agents' grants, and the asks of other owners'
// agents — waiting, let in and denied (a decision may be changed).
type ConsentView struct {
	Contacts []ContactView
	Grants   []GrantView
	Inbound  []InboundView
}

// Consent is the person's ConsentView (the dashboard's Contacts page).
func (h *Hub) Consent(ctx context.Context, u *User) (*ConsentView, error) {
	v := &ConsentView{}
	var err error
	if v.Contacts, err = h.Contacts(ctx, u); err != nil {
		return nil, err
	}
	agents, err := h.store.Agents(ctx, u.ID, false)
	if err != nil {
		return nil, AsError(err)
	}
	for _, a := range agents {
		gs, err := grantViews(ctx, h.store, a)
		if err != nil {
			return nil, err
		}
		v.Grants = append(v.Grants, gs...)
	}
	asks, err := h.store.InboundAsks(ctx, u.ID, false)
	if err != nil {
		return nil, AsError(err)
	}
	for _, ask := range asks {
		a, err := h.store.AgentByID(ctx, ask.AgentID)
		if err != nil {
			return nil, AsError(err)
		}
		v.Inbound = append(v.Inbound, InboundView{Ask: ask, Agent: a.Handle()})
	}
	return v, nil
}

// ContactReads are the queries of contacts (Reader embeds them).
type ContactReads interface {
	// Contact returns the pair's contact row (either order of ids).
	Contact(ctx context.Context, userA, userB string) (*Contact, error)
	// ContactsOf lists the rows involving the person, oldest first.
	ContactsOf(ctx context.Context, userID string) ([]*Contact, error)
	// ContactByID finds a contact row by the id its request was given.
	ContactByID(ctx context.Context, id string) (*Contact, error)
}

// ContactWrites are the writes of contacts (Tx embeds them).
type ContactWrites interface {
	PutContact(ctx context.Context, c *Contact) error
}
