package reach

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// Peers (§1, §3): whom an agent or a person may bring into a room, for the
// pickers of the faces.

// Peer is one principal that may be brought into a conversation. Kind is
// hub.PrincipalUser or hub.PrincipalAgent; Name is a person's display name or an
// agent's slug; Description is an agent's ("" for a person); Public marks a
// public agent (§1).
type Peer struct {
	ID, Kind, Handle, Name, Description string
	Public                              bool
}

func agentPeer(a *hub.Agent) Peer {
	return Peer{ID: a.ID, Kind: hub.PrincipalAgent, Handle: a.Handle(), Name: a.DisplayName(), Description: a.Description, Public: a.Public}
}

// Peers lists the agents the calling agent may recruit into a room: its
// siblings and the public agents of other owners, never itself nor an
// archived agent (§1, §3). With notIn, the id of a conversation the caller
// takes part in (not_found otherwise), its current participants are left
// out. Sorted by handle.
func (x *Reach) Peers(ctx context.Context, c *hub.Caller, notIn string) ([]Peer, error) {
	in, err := participantSet(notIn, func() (*hub.ConversationView, error) { return x.hub.Room(ctx, c, notIn) })
	if err != nil {
		return nil, err
	}
	in[c.Agent.ID] = true
	sib, err := x.store.Agents(ctx, c.Agent.OwnerID, false)
	if err != nil {
		return nil, hub.AsError(err)
	}
	public, err := x.store.PublicAgents(ctx)
	if err != nil {
		return nil, hub.AsError(err)
	}
	out := agentPeers(nil, in, sib, public)
	slices.SortFunc(out, func(a, b Peer) int { return strings.Compare(a.Handle, b.Handle) })
	return out, nil
}

// PersonPeers lists whom person u may bring into a room (the hub's rule of whom a person may add): their
// accepted contacts, their own agents and every public agent, none
// archived. kind "user" or "agent" (any case) keeps only people or only
// agents, "" both. With notIn, the id of a conversation u may act in
// (PersonRoom; not_found otherwise), its current participants are left
// out. Sorted by Kind ("agent" before "user"), then handle.
func (x *Reach) PersonPeers(ctx context.Context, u *hub.User, notIn, kind string) ([]Peer, error) {
	kind = strings.ToLower(strings.TrimSpace(kind))
	if kind != "" && kind != hub.PrincipalUser && kind != hub.PrincipalAgent {
		return nil, hub.Invalid("", "{kind} is %q or %q, or empty for both (got %q)", hub.PrincipalUser, hub.PrincipalAgent, hub.Echo(kind))
	}
	in, err := participantSet(notIn, func() (*hub.ConversationView, error) { return x.hub.PersonRoom(ctx, u, notIn) })
	if err != nil {
		return nil, err
	}
	in[u.ID] = true
	var out []Peer
	if kind != hub.PrincipalAgent {
		cs, err := x.hub.Contacts(ctx, u)
		if err != nil {
			return nil, err
		}
		for _, cv := range cs {
			if cv.Contact.Status == hub.ContactAccepted && !in[cv.Other.ID] {
				out = append(out, Peer{ID: cv.Other.ID, Kind: hub.PrincipalUser, Handle: cv.Other.Handle, Name: cv.Other.Name})
			}
		}
	}
	if kind != hub.PrincipalUser {
		own, err := x.store.Agents(ctx, u.ID, false)
		if err != nil {
			return nil, hub.AsError(err)
		}
		public, err := x.store.PublicAgents(ctx)
		if err != nil {
			return nil, hub.AsError(err)
		}
		out = agentPeers(out, in, own, public)
	}
	slices.SortFunc(out, func(a, b Peer) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Handle, b.Handle))
	})
	return out, nil
}

// participantSet is the ids of the current participants of conversation id
// as view loads it (with its access check); none when id is "".
func participantSet(id string, view func() (*hub.ConversationView, error)) (map[string]bool, error) {
	in := map[string]bool{}
	if id == "" {
		return in, nil
	}
	v, err := view()
	if err != nil {
		return nil, err
	}
	for _, p := range v.Participants {
		in[p.PrincipalID] = true
	}
	return in, nil
}

// agentPeers appends to out the agents of the lists as peers, each once and
// none of in; every list holds only agents no one archived.
func agentPeers(out []Peer, in map[string]bool, lists ...[]*hub.Agent) []Peer {
	for _, as := range lists {
		for _, a := range as {
			if !in[a.ID] {
				in[a.ID] = true
				out = append(out, agentPeer(a))
			}
		}
	}
	return out
}
