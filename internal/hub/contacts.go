package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Contacts between people (§3): a request one way, a decision the other;
// requests in both directions accept each other.

// MaxContactMessage is the most code points a contact request's message
// may hold (§3, §10.5).
const MaxContactMessage = 500

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
