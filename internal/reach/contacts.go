package reach

import (
	"context"
	"errors"
	"slices"

	"github.com/palaverhq/palaver/internal/hub"
)

// Contacts is who the caller may reach (§3, list_contacts).
type Contacts struct {
	Owner    *hub.User
	Siblings []*hub.Agent
	Contacts []ContactReach
	// Public is the public agents of owners other than the caller's and
	// its contacts (theirs are among their Agents), by handle (§1).
	Public []*hub.Agent
	// Presence is the presence of every agent listed, by id (§19).
	Presence map[string]hub.AgentPresence
}

// Reachable lists every agent the caller may reach now (§3): its
// siblings, then the agents of contacts it may reach, then the other
// public agents.
func (ct *Contacts) Reachable() []*hub.Agent {
	out := slices.Clone(ct.Siblings)
	for _, r := range ct.Contacts {
		out = append(out, r.Agents...)
	}
	return append(out, ct.Public...)
}

// ContactReach is one contact of the caller's owner from the caller's point
// of view: Status hub.StatusAllowed, hub.StatusPendingApproval or hub.StatusDenied, what the grant
// allows, and the contact's agents the caller may reach now.
type ContactReach struct {
	Person      *hub.User
	Status      string
	AllowHuman  bool
	AllowAgents bool
	Agents      []*hub.Agent
}

// ListContacts returns the caller's owner, sibling agents, the owner's
// contacts with what the caller may do about each, and the other public
// agents, which anyone may reach (§3). A contact's status
// is what a send would meet, by the rule sends use (hub.MayAnswer): allowed
// when the caller may speak to the person or to one of their agents (also
// one that may reach the caller, and so be answered), pending_approval when
// only the contact's letting in is missing, denied otherwise.
func (x *Reach) ListContacts(ctx context.Context, c *hub.Caller) (*Contacts, error) {
	sib, err := x.siblings(ctx, c)
	if err != nil {
		return nil, err
	}
	out := &Contacts{Owner: c.Owner, Siblings: sib}
	listed := map[string]bool{c.Agent.OwnerID: true} // owners whose agents are listed
	cs, err := x.hub.Contacts(ctx, c.Owner)
	if err != nil {
		return nil, err
	}
	for _, cv := range cs {
		if cv.Contact.Status != hub.ContactAccepted {
			continue
		}
		r := ContactReach{Person: cv.Other, Status: hub.StatusDenied}
		g, err := x.store.Grant(ctx, c.Agent.ID, cv.Other.ID)
		switch {
		case err == nil:
			r.AllowHuman, r.AllowAgents = g.AllowHuman, g.AllowAgents
		case !errors.Is(err, hub.ErrNoRows):
			return nil, hub.AsError(err)
		}
		// The best outcome over the person and each of their agents.
		note := func(err error) error {
			switch {
			case err == nil:
				r.Status = hub.StatusAllowed
			case hub.IsPending(err) && r.Status == hub.StatusDenied:
				r.Status = hub.StatusPendingApproval
			case !hub.Refused(err):
				return hub.AsError(err)
			}
			return nil
		}
		person := &hub.Principal{ID: cv.Other.ID, Kind: hub.PrincipalUser, Handle: cv.Other.Handle, OwnerID: cv.Other.ID, User: cv.Other}
		if _, err := hub.MayAnswer(ctx, x.store, c.Agent, person); note(err) != nil {
			return nil, hub.AsError(err)
		}
		agents, err := x.store.Agents(ctx, cv.Other.ID, false)
		if err != nil {
			return nil, hub.AsError(err)
		}
		for _, a := range agents {
			_, err := hub.MayAnswer(ctx, x.store, c.Agent, hub.AgentPrincipal(a))
			if err == nil {
				r.Agents = append(r.Agents, a)
			}
			if err := note(err); err != nil {
				return nil, err
			}
		}
		out.Contacts = append(out.Contacts, r)
		listed[cv.Other.ID] = true
	}
	public, err := x.store.PublicAgents(ctx)
	if err != nil {
		return nil, hub.AsError(err)
	}
	for _, a := range public {
		if !listed[a.OwnerID] {
			out.Public = append(out.Public, a)
		}
	}
	if out.Presence, err = x.hub.Presences(ctx, out.Reachable()); err != nil {
		return nil, err
	}
	return out, nil
}

// ReachableAgents lists every agent the caller may reach now, never itself
// (§3, §10.5 list_agents): its siblings, then the agents of contacts it may
// reach (their public ones among them), then the other public agents.
func (x *Reach) ReachableAgents(ctx context.Context, c *hub.Caller) ([]*hub.Agent, error) {
	ct, err := x.ListContacts(ctx, c)
	if err != nil {
		return nil, err
	}
	return ct.Reachable(), nil
}

// siblings lists the caller's owner's other active agents.
func (x *Reach) siblings(ctx context.Context, c *hub.Caller) ([]*hub.Agent, error) {
	all, err := x.store.Agents(ctx, c.Agent.OwnerID, false)
	if err != nil {
		return nil, hub.AsError(err)
	}
	return slices.DeleteFunc(all, func(a *hub.Agent) bool { return a.ID == c.Agent.ID }), nil
}
