package hub

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// A project's people and agents (§8): its owner adds contacts as members;
// each member brings their own agents in, with speak or listen and review;
// the threads follow every change at once.

// AddMember is the project's owner adding one of their contacts (§8).
// Adding a member twice is not an error.
func (h *Hub) AddMember(ctx context.Context, u *User, projectID, handle string) (*ProjectDetail, error) {
	other, err := h.User(ctx, handle)
	if err != nil {
		return nil, err
	}
	if err := h.homeOnFirstUse(ctx, u.ID, projectID); err != nil {
		return nil, err
	}
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		p, err := lockedProject(ctx, tx, u, projectID, true)
		if err != nil {
			return nil, err
		}
		if other.ID != u.ID {
			c, err := tx.Contact(ctx, u.ID, other.ID)
			if err != nil && !errors.Is(err, ErrNoRows) {
				return nil, err
			}
			if c == nil || c.Status != ContactAccepted {
				return nil, invalid("", "%s is not your contact; members are people you are contacts with — send them a contact request first", other.Handle)
			}
		}
		now := h.now()
		if err := tx.PutProjectMember(ctx, &ProjectMember{ProjectID: p.ID, UserID: other.ID, AddedAt: now}); err != nil {
			return nil, err
		}
		return syncThreads(ctx, tx, p, now)
	})
	if err != nil {
		return nil, err
	}
	return h.Project(ctx, u, projectID)
}

// RemoveMember takes a person out of a project (§8): the project's owner
// removes anyone but themselves, and a member may leave. The person loses
// every thread at once, and their agents leave the project with them.
func (h *Hub) RemoveMember(ctx context.Context, u *User, projectID, handle string) error {
	other, err := h.User(ctx, handle)
	if err != nil {
		return err
	}
	return h.update(ctx, func(tx Tx) ([]*Event, error) {
		p, err := lockedProject(ctx, tx, u, projectID, false)
		if err != nil {
			return nil, err
		}
		switch {
		case other.ID == p.OwnerID:
			return nil, invalid("", "the project's owner stays its member; archive the project instead")
		case other.ID != u.ID && u.ID != p.OwnerID:
			return nil, &Error{Kind: KindForbidden, Msg: "only the project's owner removes other members; you may leave it yourself"}
		}
		now := h.now()
		if err := tx.DeleteProjectMember(ctx, p.ID, other.ID); err != nil {
			return nil, err
		}
		agents, err := tx.ProjectAgents(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		var events []*Event
		for _, a := range agents {
			if a.OwnerID != other.ID {
				continue
			}
			if err := tx.DeleteProjectAgent(ctx, p.ID, a.AgentID); err != nil {
				return nil, err
			}
			events = append(events, projectAgentsEvent(a.AgentID, p, "removed", AccessOff, now))
		}
		synced, err := syncThreads(ctx, tx, p, now)
		return append(events, synced...), err
	})
}

// SetProjectAgent is a member bringing one of their own agents (its slug,
// or its handle) into a project, or changing its access there — speak (the
// default) or listen — and review (§8). The agent hears project.agents.
func (h *Hub) SetProjectAgent(ctx context.Context, u *User, projectID, slug, access string, review bool) (*ProjectAgent, error) {
	if access == "" {
		access = AccessSpeak
	}
	if access != AccessSpeak && access != AccessListen {
		return nil, invalid("", "access must be \"speak\" or \"listen\" (got %q)", echo(access))
	}
	a, err := h.ownAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	if err := h.homeOnFirstUse(ctx, u.ID, projectID); err != nil {
		return nil, err
	}
	var pa *ProjectAgent
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		p, err := lockedProject(ctx, tx, u, projectID, false)
		if err != nil {
			return nil, err
		}
		if err := notArchived(p); err != nil {
			return nil, err
		}
		now := h.now()
		change := "changed"
		old, err := tx.ProjectAgent(ctx, p.ID, a.ID)
		switch {
		case errors.Is(err, ErrNoRows):
			change, old = "added", &ProjectAgent{AddedAt: now}
		case err != nil:
			return nil, err
		}
		pa = &ProjectAgent{ProjectID: p.ID, AgentID: a.ID, Handle: a.Handle(), OwnerID: a.OwnerID, Access: access, Review: review, AddedAt: old.AddedAt}
		if err := tx.PutProjectAgent(ctx, pa); err != nil {
			return nil, err
		}
		events, err := syncThreads(ctx, tx, p, now)
		return append(events, projectAgentsEvent(a.ID, p, change, effectiveAccess(p, pa), now)), err
	})
	if err != nil {
		return nil, err
	}
	return pa, nil
}

// RemoveProjectAgent takes an agent out of a project (its handle, or the
// slug of one of u's own): its owner does, or the project's owner. It
// leaves every thread at once; messages waiting for it there are withdrawn
// (message.withdrawn), and it hears project.agents.
func (h *Hub) RemoveProjectAgent(ctx context.Context, u *User, projectID, agentHandle string) (*Agent, error) {
	if !strings.Contains(agentHandle, "/") {
		agentHandle = u.Handle + "/" + agentHandle
	}
	a, err := h.Agent(ctx, agentHandle)
	if err != nil {
		return nil, err
	}
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		p, err := lockedProject(ctx, tx, u, projectID, false)
		if err != nil {
			return nil, err
		}
		if a.OwnerID != u.ID && p.OwnerID != u.ID {
			return nil, &Error{Kind: KindForbidden, Msg: "an agent is taken out of a project by its owner or the project's owner"}
		}
		if _, err := tx.ProjectAgent(ctx, p.ID, a.ID); errors.Is(err, ErrNoRows) {
			return nil, notFound("%s is not in this project", a.Handle())
		} else if err != nil {
			return nil, err
		}
		now := h.now()
		if err := tx.DeleteProjectAgent(ctx, p.ID, a.ID); err != nil {
			return nil, err
		}
		events, err := syncThreads(ctx, tx, p, now)
		return append(events, projectAgentsEvent(a.ID, p, "removed", AccessOff, now)), err
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// ownAgent is the person's agent with this slug; another's is not_found.
func (h *Hub) ownAgent(ctx context.Context, u *User, slug string) (*Agent, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	if a.Archived() {
		return nil, invalid("", "%s is archived", a.Handle())
	}
	return a, nil
}

// syncThreads makes every open thread of the project have exactly the
// project's people and its agents whose access is not off as
// participants (§8): newcomers hear conversation.opened; an agent that
// leaves loses its waiting messages there, each with a message.withdrawn.
func syncThreads(ctx context.Context, tx Tx, p *Project, now time.Time) ([]*Event, error) {
	threads, err := tx.Threads(ctx, p.ID)
	if err != nil || len(threads) == 0 {
		return nil, err
	}
	want, err := threadParticipants(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	var events []*Event
	for _, t := range threads {
		// Sends into the thread take turns with this change of who may
		// receive them.
		if err := tx.LockConversation(ctx, t.ID); err != nil {
			return nil, err
		}
		have, err := tx.Participants(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		for _, w := range want {
			if _, ok := participant(have, w.PrincipalID); ok {
				continue
			}
			w.ConversationID, w.JoinedAt = t.ID, now
			if err := tx.AddParticipant(ctx, &w); err != nil {
				return nil, err
			}
			events = append(events, &Event{RecipientID: w.PrincipalID, Type: EventConversationOpened, ConversationID: t.ID, CreatedAt: now})
		}
		for _, hp := range have {
			if _, ok := participant(want, hp.PrincipalID); ok {
				continue
			}
			if err := tx.LeaveConversation(ctx, t.ID, hp.PrincipalID, now); err != nil {
				return nil, err
			}
			if hp.Kind != PrincipalAgent {
				continue
			}
			withdrawn, err := withdraw(ctx, tx, hp.PrincipalID, t.ID, now)
			if err != nil {
				return nil, err
			}
			events = append(events, withdrawn...)
		}
	}
	return events, nil
}

// threadParticipants is who takes part in the project's threads: its
// people, and its agents whose access is not off, each with role member;
// nobody while the project is archived.
func threadParticipants(ctx context.Context, r Reader, p *Project) ([]Participant, error) {
	if !p.ArchivedAt.IsZero() {
		return nil, nil
	}
	members, err := r.ProjectMembers(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	agents, err := r.ProjectAgents(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	var out []Participant
	for _, m := range members {
		out = append(out, Participant{PrincipalID: m.UserID, Kind: PrincipalUser, Handle: m.Handle, OwnerID: m.UserID, Role: RoleMember})
	}
	for _, a := range agents {
		if effectiveAccess(p, &a) != AccessOff {
			out = append(out, Participant{PrincipalID: a.AgentID, Kind: PrincipalAgent, Handle: a.Handle, OwnerID: a.OwnerID, Role: RoleMember})
		}
	}
	return out, nil
}

// projectAgentsEvent tells an agent what changed of its place in a project
// (§6 project.agents): "added", "removed" or "changed", with its access.
func projectAgentsEvent(agentID string, p *Project, change, access string, now time.Time) *Event {
	data, _ := json.Marshal(map[string]any{"project_id": p.ID, "name": p.Name, "change": change, "access": access})
	return &Event{RecipientID: agentID, Type: EventProjectAgents, Data: data, CreatedAt: now}
}

// withdraw takes the agent's waiting deliveries in a conversation it left
// out of its inbox, and tells it of each with message.withdrawn (no body).
func withdraw(ctx context.Context, tx Tx, agentID, conversationID string, now time.Time) ([]*Event, error) {
	ids, err := tx.WithdrawDeliveries(ctx, agentID, conversationID, now)
	if err != nil {
		return nil, err
	}
	var events []*Event
	for _, id := range ids {
		data, _ := json.Marshal(map[string]any{"message_id": id})
		events = append(events, &Event{RecipientID: agentID, Type: EventMessageWithdrawn, ConversationID: conversationID, Data: data, CreatedAt: now})
	}
	return events, nil
}
