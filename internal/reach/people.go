package reach

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Contacts between people (§3), as they ask for them, look them up, list
// them and end them: a request one way, a decision the other (the
// decision is the hub's, which Approvals decides through); requests in
// both directions accept each other.

// RequestContact is u asking other to be contacts (§3), with an optional
// message (at most hub.MaxContactMessage code points; blank is none; cleaned
// as every text is, §4). otherHandle may start with "@". A request from the other side
// already waiting is accepted at once: the answer is this request, with its
// own id, time and message, approved by the other's asking. A denial by the
// other stands until they change it. Asking again while u's request waits,
// or once they are contacts, changes nothing; any other new request (after
// a cancel, a removal, or u's own rejection) is a request of its own, with
// a new id and time.
func (x *Reach) RequestContact(ctx context.Context, u *hub.User, otherHandle, message string) (*hub.Contact, error) {
	message, err := hub.CheckLine("message", message, hub.MaxContactMessage)
	if err != nil {
		return nil, err
	}
	other, err := x.hub.User(ctx, hub.AtHandle(otherHandle))
	if err != nil {
		return nil, err
	}
	if other.ID == u.ID {
		return nil, hub.Invalid("", "a person is not their own contact")
	}
	var c *hub.Contact
	err = x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		now := x.hub.Now()
		old, err := tx.Contact(ctx, u.ID, other.ID)
		if err != nil && !errors.Is(err, hub.ErrNoRows) {
			return nil, err
		}
		var events []*hub.Event
		id := hub.NewID(hub.IDContact, now)
		switch {
		case old != nil && old.Status == hub.ContactAccepted:
			c = old
			return nil, nil
		case old != nil && old.Status == hub.ContactPending && old.RequestedBy == u.ID:
			c = old
			return nil, nil
		case old != nil && old.Status == hub.ContactRejected && old.DecidedBy == other.ID:
			return nil, &hub.Error{Kind: hub.KindForbidden, Code: "declined", Msg: other.Handle + " declined to be your contact; that stands until they change it"}
		case old != nil && old.RequestedBy == other.ID && (old.Status == hub.ContactPending || old.Status == hub.ContactRejected):
			// They asked (and maybe u said no before): both want it now.
			c = &hub.Contact{ID: id, UserA: u.ID, UserB: other.ID, Status: hub.ContactAccepted, RequestedBy: u.ID, DecidedBy: other.ID, RequestedAt: now, DecidedAt: now, Message: message}
			events = hub.ContactEvents(hub.EventContactAccepted, u, other, now)
		default:
			c = &hub.Contact{ID: id, UserA: u.ID, UserB: other.ID, Status: hub.ContactPending, RequestedBy: u.ID, RequestedAt: now, Message: message}
			ev := map[string]any{"from": u.Handle, "request_id": id}
			if message != "" {
				ev["message"] = message
			}
			data, _ := json.Marshal(ev)
			events = []*hub.Event{{RecipientID: other.ID, Type: hub.EventContactRequest, Data: data, CreatedAt: now}}
		}
		return events, tx.PutContact(ctx, c)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// CancelContact withdraws u's own pending request.
func (x *Reach) CancelContact(ctx context.Context, u *hub.User, otherHandle string) (*hub.Contact, error) {
	other, err := x.hub.User(ctx, otherHandle)
	if err != nil {
		return nil, err
	}
	var c *hub.Contact
	err = x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		var err error
		c, err = tx.Contact(ctx, u.ID, other.ID)
		if errors.Is(err, hub.ErrNoRows) || (err == nil && (c.RequestedBy != u.ID || c.Status != hub.ContactPending)) {
			return nil, hub.NotFound("no pending contact request of %s to %s", u.Handle, other.Handle)
		}
		if err != nil {
			return nil, err
		}
		c.Status, c.DecidedBy, c.DecidedAt = hub.ContactCancelled, u.ID, x.hub.Now()
		return nil, tx.PutContact(ctx, c)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// CancelContactRequest is CancelContact for u's own request under its id
// (ct_…). An id that names no request of u's — unknown, or another's
// request to u — is not_found alike, and so is a request no longer pending.
func (x *Reach) CancelContactRequest(ctx context.Context, u *hub.User, id string) (*hub.Contact, error) {
	c, err := x.store.ContactByID(ctx, strings.TrimSpace(id))
	if errors.Is(err, hub.ErrNoRows) || (err == nil && c.RequestedBy != u.ID) {
		return nil, hub.NotFound("%s sent no contact request %q", u.Handle, hub.Echo(id))
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	other, err := x.hub.UserByID(ctx, c.Other(u.ID))
	if err != nil {
		return nil, err
	}
	return x.CancelContact(ctx, u, other.Handle)
}

// RemoveContact ends u's contact with another person (§3), named by the
// contact's id (ct_…; it wins when both are given) or by the person's
// handle ("@" allowed): either of the two may end it, for both
// (hub.EndContact), and with it their agents' reach across. Only an accepted
// contact is removed: a request that waits is cancelled or rejected
// instead, and the message says which. An id of another pair's contact is
// not_found like an unknown one.
func (x *Reach) RemoveContact(ctx context.Context, u *hub.User, contactID, handle string) (*hub.Contact, error) {
	contactID, handle = strings.TrimSpace(contactID), hub.AtHandle(handle)
	var c *hub.Contact
	var err error
	switch {
	case contactID != "":
		c, err = x.store.ContactByID(ctx, contactID)
		if errors.Is(err, hub.ErrNoRows) || (err == nil && c.UserA != u.ID && c.UserB != u.ID) {
			return nil, hub.NotFound("%s has no contact %q", u.Handle, hub.Echo(contactID))
		}
	case handle != "":
		var other *hub.User
		if other, err = x.hub.User(ctx, handle); err != nil {
			return nil, err
		}
		c, err = x.store.Contact(ctx, u.ID, other.ID)
		if errors.Is(err, hub.ErrNoRows) {
			return nil, hub.NotFound("%s and %s are not contacts", u.Handle, other.Handle)
		}
	default:
		return nil, hub.Invalid("", "give the contact's id (ct_…) or {handle}")
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	other, err := x.hub.UserByID(ctx, c.Other(u.ID))
	if err != nil {
		return nil, err
	}
	err = x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		// Read again in the transaction: the other may have ended it first.
		var err error
		if c, err = tx.Contact(ctx, u.ID, other.ID); err != nil {
			return nil, err
		}
		switch {
		case c.Status == hub.ContactAccepted:
			return x.hub.EndContact(ctx, tx, u, other, c)
		case c.Status == hub.ContactPending && c.RequestedBy == u.ID:
			return nil, hub.NotFound("%s and %s are not contacts yet: your request waits for %s; cancel it instead", u.Handle, other.Handle, other.Handle)
		case c.Status == hub.ContactPending:
			return nil, hub.NotFound("%s and %s are not contacts yet: %s's request waits for you; reject it instead", u.Handle, other.Handle, other.Handle)
		}
		return nil, hub.NotFound("%s and %s are not contacts", u.Handle, other.Handle)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
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
	Status      string // hub.ContactPending, hub.ContactAccepted, hub.ContactRejected or hub.ContactCancelled
	RequestedAt time.Time
	DecidedAt   time.Time // zero while pending
}

// ContactRequests lists u's contact requests, oldest first: those others
// sent u (sent false) or those u sent (sent true). status is one of
// pending, accepted, rejected, cancelled or all, with "approved" taken for
// accepted (the rooms profile's word); "" is pending for received
// requests and all for sent ones. Anything else is invalid.
func (x *Reach) ContactRequests(ctx context.Context, u *hub.User, sent bool, status string) ([]ContactRequest, error) {
	want, err := contactStatus(status, sent)
	if err != nil {
		return nil, err
	}
	cs, err := x.hub.Contacts(ctx, u)
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

// contactStatus reads a listing's status filter (ContactRequests).
func contactStatus(status string, sent bool) (string, error) {
	switch s := strings.ToLower(strings.TrimSpace(status)); s {
	case "":
		if sent {
			return statusAll, nil
		}
		return hub.ContactPending, nil
	case hub.AskApproved:
		return hub.ContactAccepted, nil
	case hub.ContactPending, hub.ContactAccepted, hub.ContactRejected, hub.ContactCancelled, statusAll:
		return s, nil
	}
	return "", hub.Invalid("", "status is pending, accepted (or approved), rejected, cancelled or all (got %q)", hub.Echo(status))
}

// InboundView is another owner's agent's ask to come in, with its handle.
type InboundView struct {
	Ask   *hub.InboundAsk
	Agent string
}

// ConsentView is everything of §3 a person decides: their contacts and
// requests both ways, their agents' grants, and the asks of other owners'
// agents — waiting, let in and denied (a decision may be changed).
type ConsentView struct {
	Contacts []hub.ContactView
	Grants   []hub.GrantView
	Inbound  []InboundView
}

// Consent is the person's ConsentView (the dashboard's Contacts page).
func (x *Reach) Consent(ctx context.Context, u *hub.User) (*ConsentView, error) {
	v := &ConsentView{}
	var err error
	if v.Contacts, err = x.hub.Contacts(ctx, u); err != nil {
		return nil, err
	}
	agents, err := x.store.Agents(ctx, u.ID, false)
	if err != nil {
		return nil, hub.AsError(err)
	}
	for _, a := range agents {
		gs, err := x.hub.GrantViews(ctx, a)
		if err != nil {
			return nil, err
		}
		v.Grants = append(v.Grants, gs...)
	}
	asks, err := x.store.InboundAsks(ctx, u.ID, false)
	if err != nil {
		return nil, hub.AsError(err)
	}
	for _, ask := range asks {
		a, err := x.store.AgentByID(ctx, ask.AgentID)
		if err != nil {
			return nil, hub.AsError(err)
		}
		v.Inbound = append(v.Inbound, InboundView{Ask: ask, Agent: a.Handle()})
	}
	return v, nil
}

// Resolved is what a handle names, as ResolveHandle shows it: a person
// (Kind hub.PrincipalUser; Name their display name, no Description) or an
// agent (Kind hub.PrincipalAgent; Name its slug and its Description).
type Resolved struct {
	ID          string
	Kind        string
	Handle      string
	Name        string
	Description string
}

// ResolveHandle is u looking up a handle ("@" allowed) before asking for
// a contact (§3, §10.5). Every person is found by handle, since that is
// how contact requests reach them; an agent, not archived, when u may see
// it: one of u's own, a public one (anyone reaches it, §3), or one of a
// contact's. Any other owner's agent is not_found, as an unknown handle is.
func (x *Reach) ResolveHandle(ctx context.Context, u *hub.User, handle string) (*Resolved, error) {
	owner, slug, err := hub.ParseHandle(hub.AtHandle(handle))
	if err != nil {
		return nil, err
	}
	name := owner
	if slug != "" {
		name += "/" + slug
	}
	unknown := hub.NotFound("no one has the {handle} %q", name)
	if slug == "" {
		p, err := x.store.UserByHandle(ctx, owner)
		if errors.Is(err, hub.ErrNoRows) {
			return nil, unknown
		}
		if err != nil {
			return nil, hub.AsError(err)
		}
		return &Resolved{ID: p.ID, Kind: hub.PrincipalUser, Handle: p.Handle, Name: p.Name}, nil
	}
	a, err := x.store.AgentByHandle(ctx, owner, slug)
	if errors.Is(err, hub.ErrNoRows) || (err == nil && a.Archived()) {
		return nil, unknown
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	if a.OwnerID != u.ID && !a.Public {
		ct, err := x.store.Contact(ctx, u.ID, a.OwnerID)
		if errors.Is(err, hub.ErrNoRows) || (err == nil && ct.Status != hub.ContactAccepted) {
			return nil, unknown
		}
		if err != nil {
			return nil, hub.AsError(err)
		}
	}
	return &Resolved{ID: a.ID, Kind: hub.PrincipalAgent, Handle: a.Handle(), Name: a.DisplayName(), Description: a.Description}, nil
}
