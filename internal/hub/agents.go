package hub

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// Agents (§1): created for an owner, archived by it, in one of three modes.

// AgentSpec describes a new agent.
type AgentSpec struct {
	Handle      string // owner/slug
	Name        string // display name ("" for none: its slug)
	Description string
	Goal        string
}

// CreateAgent adds an agent to an existing owner (§1).
func (h *Hub) CreateAgent(ctx context.Context, s AgentSpec) (*Agent, error) {
	owner, slug, err := ParseHandle(s.Handle)
	if err != nil {
		return nil, err
	}
	if slug == "" {
		return nil, invalid("", "an agent's {handle} is owner/slug, like %s/planner", owner)
	}
	u, err := h.User(ctx, owner)
	if err != nil {
		return nil, err
	}
	name, err := checkText("name", strings.TrimSpace(s.Name), 0, MaxTitle)
	if err != nil {
		return nil, err
	}
	desc, err := checkText("description", s.Description, 0, MaxDescription)
	if err != nil {
		return nil, err
	}
	goal, err := checkText("goal", s.Goal, 0, MaxGoal)
	if err != nil {
		return nil, err
	}
	now := h.now()
	a := &Agent{ID: NewID(IDAgent, now), OwnerID: u.ID, OwnerHandle: u.Handle, Slug: slug, Name: name,
		Description: desc, Goal: goal, Mode: ModeActive, CreatedAt: now}
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.InsertAgent(ctx, a); err != nil {
			return nil, err
		}
		// Every agent of the owner is in the home project (§1); when it
		// is not made yet, it takes them all in when it is.
		if err := tx.LockProject(ctx, homeProjectID(u.ID)); err != nil {
			return nil, err
		}
		home, err := tx.Project(ctx, homeProjectID(u.ID))
		if errors.Is(err, ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if err := tx.PutProjectAgent(ctx, &ProjectAgent{ProjectID: home.ID, AgentID: a.ID, Access: AccessSpeak, AddedAt: now}); err != nil {
			return nil, err
		}
		return syncThreads(ctx, tx, home, now)
	})
	if errors.Is(err, ErrDuplicate) {
		return nil, &Error{Kind: KindConflict, Msg: "the agent " + a.Handle() + " already exists (archived agents keep their {handle})"}
	}
	if err != nil {
		return nil, AsError(err)
	}
	return a, nil
}

// Agent returns an agent by handle, archived or not.
func (h *Hub) Agent(ctx context.Context, handle string) (*Agent, error) {
	owner, slug, err := ParseHandle(handle)
	if err != nil {
		return nil, err
	}
	if slug == "" {
		return nil, invalid("", "an agent's {handle} is owner/slug, like %s/planner", owner)
	}
	a, err := h.store.AgentByHandle(ctx, owner, slug)
	if err != nil {
		return nil, lookupErr(err, "no agent has the {handle} %s/%s", owner, slug)
	}
	return a, nil
}

// Agents lists agents, of one owner when ownerHandle is not "".
func (h *Hub) Agents(ctx context.Context, ownerHandle string, includeArchived bool) ([]*Agent, error) {
	ownerID := ""
	if ownerHandle != "" {
		u, err := h.User(ctx, ownerHandle)
		if err != nil {
			return nil, err
		}
		ownerID = u.ID
	}
	as, err := h.store.Agents(ctx, ownerID, includeArchived)
	if err != nil {
		return nil, AsError(err)
	}
	return as, nil
}

// UnarchiveAgent brings an archived agent back (§1): listed and reachable
// again, in its conversations again; its old credentials stay dead (mint
// new ones). Restoring an agent that is not archived is not an error.
func (h *Hub) UnarchiveAgent(ctx context.Context, handle string) (*Agent, error) {
	a, err := h.Agent(ctx, handle)
	if err != nil || !a.Archived() {
		return a, err
	}
	a.ArchivedAt = time.Time{}
	if err := h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.SetAgentArchived(ctx, a.ID, time.Time{}) }); err != nil {
		return nil, err
	}
	return a, nil
}

// ArchiveAgent archives an agent (§1): its tokens are revoked, so they fail
// from the next request on and stay dead if it comes back; it leaves every
// recipient list and is listed nowhere. Archiving an archived agent is not
// an error.
func (h *Hub) ArchiveAgent(ctx context.Context, handle string) (*Agent, error) {
	a, err := h.Agent(ctx, handle)
	if err != nil {
		return nil, err
	}
	if a.Archived() {
		return a, nil
	}
	a.ArchivedAt = h.now()
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.SetAgentArchived(ctx, a.ID, a.ArchivedAt); err != nil {
			return nil, err
		}
		return nil, tx.RevokeAgentTokens(ctx, a.ID, a.ArchivedAt)
	})
	if err != nil {
		return nil, err
	}
	h.inboxChanged(a.ID) // the streams its tokens hold end (§19)
	return a, nil
}

// SetAgentMode sets an agent's mode (§1): active, review or listen.
func (h *Hub) SetAgentMode(ctx context.Context, handle, mode string) (*Agent, error) {
	if !slices.Contains(Modes, mode) {
		return nil, invalid("", "mode must be active, review or listen (got %q)", echo(mode))
	}
	a, err := h.Agent(ctx, handle)
	if err != nil {
		return nil, err
	}
	a.Mode = mode
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.SetAgentMode(ctx, a.ID, mode) }); err != nil {
		return nil, AsError(err)
	}
	return a, nil
}

// SetAgentPublic marks the person's own agent public or not (§1): while it
// is public and not archived, anyone may add it to a conversation and speak
// to it without a grant (§3). slug is as OwnAgent takes it; another's agent
// is not_found. Setting what is already set is not an error.
func (h *Hub) SetAgentPublic(ctx context.Context, u *User, slug string, public bool) (*Agent, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil || a.Public == public {
		return a, err
	}
	a.Public = public
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.SetAgentPublic(ctx, a.ID, public); err != nil || public {
			return nil, err
		}
		return leaveStrangers(ctx, tx, a, h.now())
	})
	if err != nil {
		return nil, AsError(err)
	}
	return a, nil
}

// leaveStrangers takes an agent made private out of every group it could be
// in only as a public agent — one where another owner taking part is no
// contact of its owner (§1, §3) — with what waited for it there, so the
// group works on for the others. A direct conversation keeps its two (a
// send there is refused until the agent is public again); project threads
// follow the project's own membership.
func leaveStrangers(ctx context.Context, tx Tx, a *Agent, now time.Time) ([]*Event, error) {
	var events []*Event
	before, beforeID := time.Time{}, ""
	for {
		convs, err := tx.ConversationsOf(ctx, a.ID, before, beforeID, ConversationsPage.Max)
		if err != nil {
			return nil, err
		}
		for _, c := range convs {
			if c.Kind != KindGroup {
				continue
			}
			ps, err := tx.Participants(ctx, c.ID)
			if err != nil {
				return nil, err
			}
			stranger := false
			for _, p := range ps {
				if p.Archived || p.OwnerID == a.OwnerID || stranger {
					continue
				}
				ct, err := tx.Contact(ctx, a.OwnerID, p.OwnerID)
				if err != nil && !errors.Is(err, ErrNoRows) {
					return nil, err
				}
				stranger = ct == nil || ct.Status != ContactAccepted
			}
			if !stranger {
				continue
			}
			if err := tx.LeaveConversation(ctx, c.ID, a.ID, now); err != nil {
				return nil, err
			}
			withdrawn, err := withdraw(ctx, tx, a.ID, c.ID, now)
			if err != nil {
				return nil, err
			}
			events = append(events, withdrawn...)
		}
		if len(convs) < ConversationsPage.Max {
			return events, nil
		}
		before, beforeID = convs[len(convs)-1].UpdatedAt, convs[len(convs)-1].ID
	}
}

// CreateOwnAgent is a person creating an agent of their own (§1): slug is
// the part of its handle after the slash.
func (h *Hub) CreateOwnAgent(ctx context.Context, u *User, slug, description, goal string) (*Agent, error) {
	switch {
	case strings.Contains(slug, "/"):
		return nil, invalid("", "give the name after %s/, like planner (got %q)", u.Handle, echo(slug))
	case strings.TrimSpace(slug) == "":
		return nil, invalid("", "slug is required: the agent's name after %s/, like planner", u.Handle)
	case !slugRE.MatchString(strings.ToLower(strings.TrimSpace(slug))):
		return nil, invalid("", "the slug %q is not a name an agent can have: give 1–40 of a-z, 0-9 and -, starting with a letter or digit, like planner", echo(slug))
	}
	return h.CreateAgent(ctx, AgentSpec{Handle: u.Handle + "/" + slug, Description: description, Goal: goal})
}

// OwnAgent is the person's agent named by slug (or by its whole handle),
// archived or not; anyone else's is not_found (§15).
func (h *Hub) OwnAgent(ctx context.Context, u *User, slug string) (*Agent, error) {
	if owner, s, ok := strings.Cut(slug, "/"); ok {
		if owner != u.Handle {
			return nil, notFound("%s has no agent %q", u.Handle, echo(slug))
		}
		slug = s
	}
	if strings.Contains(slug, "/") {
		return nil, notFound("%s has no agent %q", u.Handle, echo(slug))
	}
	a, err := h.store.AgentByHandle(ctx, u.Handle, slug)
	if err != nil {
		return nil, lookupErr(err, "%s has no agent %q", u.Handle, echo(slug))
	}
	return a, nil
}

// AgentReads are the queries of agents (Reader embeds them).
type AgentReads interface {
	AgentByID(ctx context.Context, id string) (*Agent, error)
	AgentByHandle(ctx context.Context, owner, slug string) (*Agent, error)
	// Agents lists the owner's agents (all owners when ownerID is ""), oldest
	// first, archived ones only when includeArchived.
	Agents(ctx context.Context, ownerID string, includeArchived bool) ([]*Agent, error)
	// PublicAgents lists every public agent no one archived (§1), by
	// handle.
	PublicAgents(ctx context.Context) ([]*Agent, error)
}

// AgentWrites are the writes of agents (Tx embeds them).
type AgentWrites interface {
	InsertAgent(ctx context.Context, a *Agent) error
	// SetAgentArchived archives (at non-zero) or restores (at zero) an agent.
	SetAgentArchived(ctx context.Context, agentID string, at time.Time) error
	SetAgentMode(ctx context.Context, agentID, mode string) error
	// SetAgentPublic marks the agent public or not (§1).
	SetAgentPublic(ctx context.Context, agentID string, public bool) error
}

// DisplayName is the agent's name as given, or its slug.
func (a *Agent) DisplayName() string {
	if a.Name != "" {
		return a.Name
	}
	return a.Slug
}
