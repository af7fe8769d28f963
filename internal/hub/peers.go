package hub

import (
	"cmp"
	"context"
	"slices"
	"strings"
)

// Peers (§1, §3): whom an agent or a person may bring into a room, for the
// pickers of the faces.

// Peer is one principal that may be brought into a conversation. Kind is
// PrincipalUser or PrincipalAgent; Name is a person's display name or an
// agent's slug; Description is an agent's ("" for a person); Public marks a
// public agent (§1).
type Peer struct {
	ID, Kind, Handle, Name, Description string
	Public                              bool
}

func agentPeer(a *Agent) Peer {
	return Peer{ID: a.ID, Kind: PrincipalAgent, Handle: a.Handle(), Name: a.DisplayName(), Description: a.Description, Public: a.Public}
}

// Peers lists the agents the calling agent may recruit into a room: its
// siblings and the public agents of other owners, never itself nor an
// archived agent (§1, §3). With notIn, the id of a conversation the caller
// takes part in (not_found otherwise), its current participants are left
// out. Sorted by handle.
func (h *Hub) Peers(ctx context.Context, c *Caller, notIn string) ([]Peer, error) {
	in, err := participantSet(notIn, func() (*ConversationView, error) { return access(ctx, h.store, c.Agent.ID, notIn) })
	if err != nil {
		return nil, err
	}
	in[c.Agent.ID] = true
	sib, err := h.store.Agents(ctx, c.Agent.OwnerID, false)
	if err != nil {
		return nil, AsError(err)
	}
	public, err := h.store.PublicAgents(ctx)
	if err != nil {
		return nil, AsError(err)
	}
	out := agentPeers(nil, in, sib, public)
	slices.SortFunc(out, func(a, b Peer) int { return strings.Compare(a.Handle, b.Handle) })
	return out, nil
}

// PersonPeers lists whom person u may bring into a room (personMayAdd): their
// accepted contacts, their own agents and every public agent, none
// archived. kind "user" or "agent" (any case) keeps only people or only
// agents, "" both. With notIn, the id of a conversation u may act in
// (personAccess; not_found otherwise), its current participants are left
// out. Sorted by Kind ("agent" before "user"), then handle.
func (h *Hub) PersonPeers(ctx context.Context, u *User, notIn, kind string) ([]Peer, error) {
	kind = strings.ToLower(strings.TrimSpace(kind))
	if kind != "" && kind != PrincipalUser && kind != PrincipalAgent {
		return nil, invalid("", "{kind} is %q or %q, or empty for both (got %q)", PrincipalUser, PrincipalAgent, echo(kind))
	}
	in, err := participantSet(notIn, func() (*ConversationView, error) {
		v, _, err := personAccess(ctx, h.store, u, notIn)
		if err != nil {
			return nil, AsError(err)
		}
		return v, nil
	})
	if err != nil {
		return nil, err
	}
	in[u.ID] = true
	var out []Peer
	if kind != PrincipalAgent {
		cs, err := h.Contacts(ctx, u)
		if err != nil {
			return nil, err
		}
		for _, cv := range cs {
			if cv.Contact.Status == ContactAccepted && !in[cv.Other.ID] {
				out = append(out, Peer{ID: cv.Other.ID, Kind: PrincipalUser, Handle: cv.Other.Handle, Name: cv.Other.Name})
			}
		}
	}
	if kind != PrincipalUser {
		own, err := h.store.Agents(ctx, u.ID, false)
		if err != nil {
			return nil, AsError(err)
		}
		public, err := h.store.PublicAgents(ctx)
		if err != nil {
			return nil, AsError(err)
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
func participantSet(id string, view func() (*ConversationView, error)) (map[string]bool, error) {
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
func agentPeers(out []Peer, in map[string]bool, lists ...[]*Agent) []Peer {
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
