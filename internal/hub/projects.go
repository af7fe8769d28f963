package hub

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// Projects (§8): a piece of work owned by a person, with members (people),
// agents brought in by their own owners, threads, items and images. A
// thread's participants follow the project: every member, and every agent
// brought in whose access is not off. Being in a project is the whole grant
// to speak in its threads; nothing outside the project opens up.

// Limits of projects (§8).
const (
	MaxProjectName        = 100
	MaxProjectDescription = 2000
)

// homeProjectID is the id of an owner's home project, made from the
// owner's own id so that it is known before the project exists.
func homeProjectID(ownerID string) string {
	return IDProject + "_" + strings.TrimPrefix(ownerID, IDUser+"_")
}

// homeProjectName is what a home project is called.
const homeProjectName = "Home"

// effectiveAccess is what an agent may do in a project: speak or listen as
// its owner set it, capped by the project's owner; off while the project is
// archived.
func effectiveAccess(p *Project, pa *ProjectAgent) string {
	switch {
	case p.AgentCap == AccessOff || !p.ArchivedAt.IsZero():
		return AccessOff
	case p.AgentCap == AccessListen || pa.Access == AccessListen:
		return AccessListen
	}
	return AccessSpeak
}

// listenWhy says why an agent's access to a project is listen, and who
// can change it.
func listenWhy(p *Project) string {
	if p.AgentCap == AccessListen {
		return "the project's owner capped every agent at listen in this project; only they can lift it"
	}
	return "your owner set your access to this project to listen; ask them for speak"
}

// projectMissing is the answer for a project that does not exist, is
// archived, or is not open to the caller: the same not_found for each (§8).
func projectMissing(id string) error {
	return notFound("no project %q is open to you; list the projects you are in for their ids", echo(id))
}

// agentProject loads a project the agent was brought into, with its place
// there and its effective access. Another project, or one that does not
// exist, is not_found; one whose agents are turned off is denied with off.
// Callers outside a transaction call homeOnFirstUse first.
func agentProject(ctx context.Context, r Reader, a *Agent, projectID string) (*Project, *ProjectAgent, string, error) {
	if projectID == "" {
		return nil, nil, "", invalid("", "project_id is required: take it from list_projects or whoami's home_project")
	}
	p, err := r.Project(ctx, projectID)
	if errors.Is(err, ErrNoRows) || (err == nil && !p.ArchivedAt.IsZero()) {
		return nil, nil, "", projectMissing(projectID)
	}
	if err != nil {
		return nil, nil, "", AsError(err)
	}
	pa, err := r.ProjectAgent(ctx, p.ID, a.ID)
	if errors.Is(err, ErrNoRows) {
		return nil, nil, "", projectMissing(projectID)
	}
	if err != nil {
		return nil, nil, "", AsError(err)
	}
	access := effectiveAccess(p, pa)
	if access == AccessOff {
		return nil, nil, "", deny(AccessOff, "the owner of this project turned every agent off here; nothing of it is open to agents until they change that")
	}
	return p, pa, access, nil
}

// memberProject loads a project the person is a member of (not_found
// otherwise, like one that does not exist). Archived projects are found
// only by their owner, who may restore them.
func memberProject(ctx context.Context, r Reader, u *User, projectID string) (*Project, error) {
	p, err := r.Project(ctx, projectID)
	if errors.Is(err, ErrNoRows) || (err == nil && !p.ArchivedAt.IsZero() && p.OwnerID != u.ID) {
		return nil, projectMissing(projectID)
	}
	if err != nil {
		return nil, err
	}
	members, err := r.ProjectMembers(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(members, func(m ProjectMember) bool { return m.UserID == u.ID }) {
		return nil, projectMissing(projectID)
	}
	return p, nil
}

// lockedProject holds the project's row until the transaction ends (§13:
// changes of who is in it take turns) and loads it for u, a member — its
// owner when owned.
func lockedProject(ctx context.Context, tx Tx, u *User, projectID string, owned bool) (*Project, error) {
	if err := tx.LockProject(ctx, projectID); err != nil {
		return nil, err
	}
	if owned {
		return ownedProject(ctx, tx, u, projectID)
	}
	return memberProject(ctx, tx, u, projectID)
}

// notArchived refuses a change to an archived project's threads or agents.
func notArchived(p *Project) error {
	if !p.ArchivedAt.IsZero() {
		return invalid("", "this project is archived; restore it first")
	}
	return nil
}

// ownedProject is memberProject for what only the project's owner may do.
func ownedProject(ctx context.Context, r Reader, u *User, projectID string) (*Project, error) {
	p, err := memberProject(ctx, r, u, projectID)
	if err == nil && p.OwnerID != u.ID {
		return nil, &Error{Kind: KindForbidden, Msg: "only the project's owner may do this; ask them"}
	}
	return p, err
}

// homeOnFirstUse makes the owner's home project when projectID names it
// and it does not exist yet, so that a tool given its id finds it.
func (h *Hub) homeOnFirstUse(ctx context.Context, ownerID, projectID string) error {
	if projectID != homeProjectID(ownerID) {
		return nil
	}
	_, err := h.home(ctx, ownerID)
	return err
}

// home returns the owner's home project, making it on first use with the
// owner as its member and every agent of the owner in it with speak (§1).
func (h *Hub) home(ctx context.Context, ownerID string) (*Project, error) {
	id := homeProjectID(ownerID)
	p, err := h.store.Project(ctx, id)
	switch {
	case err == nil:
		return p, nil
	case !errors.Is(err, ErrNoRows):
		return nil, AsError(err)
	}
	err = retryDuplicate(func() error {
		return h.update(ctx, func(tx Tx) ([]*Event, error) {
			if _, err := tx.Project(ctx, id); err == nil {
				return nil, nil // made meanwhile
			}
			owner, err := tx.UserByID(ctx, ownerID)
			if err != nil {
				return nil, err
			}
			now := h.now()
			if err := tx.InsertProject(ctx, &Project{ID: id, OwnerID: ownerID, Name: homeProjectName, Home: true, CreatedAt: now, UpdatedAt: now}); err != nil {
				return nil, err
			}
			if err := tx.PutProjectMember(ctx, &ProjectMember{ProjectID: id, UserID: owner.ID, AddedAt: now}); err != nil {
				return nil, err
			}
			agents, err := tx.Agents(ctx, ownerID, false)
			if err != nil {
				return nil, err
			}
			// Remote agents (§18) are not sessions of the owner's work:
			// they hear only the conversations opened with them.
			remote, err := tx.RemoteAgentIDs(ctx)
			if err != nil {
				return nil, err
			}
			for _, a := range agents {
				if slices.Contains(remote, a.ID) {
					continue
				}
				if err := tx.PutProjectAgent(ctx, &ProjectAgent{ProjectID: id, AgentID: a.ID, Access: AccessSpeak, AddedAt: now}); err != nil {
					return nil, err
				}
			}
			return nil, nil
		})
	})
	if err != nil {
		return nil, err
	}
	if p, err = h.store.Project(ctx, id); err != nil {
		return nil, AsError(err)
	}
	return p, nil
}

// ProjectDetail is a project with who is in it and what it holds (§8).
type ProjectDetail struct {
	Project *Project
	// Access is the caller's: an agent's effective access, or "owner" or
	// "member" for a person.
	Access  string
	Members []ProjectMember
	Agents  []ProjectAgent // not archived, each with its effective access
	Threads []*Conversation
	Items   []*Item
}

// detail reads what ProjectDetail shows of p.
func detail(ctx context.Context, r Reader, p *Project, access string) (*ProjectDetail, error) {
	d := &ProjectDetail{Project: p, Access: access}
	var err error
	if d.Members, err = r.ProjectMembers(ctx, p.ID); err != nil {
		return nil, AsError(err)
	}
	agents, err := r.ProjectAgents(ctx, p.ID)
	if err != nil {
		return nil, AsError(err)
	}
	for _, a := range agents {
		if !a.Archived {
			a.Access = effectiveAccess(p, &a)
			d.Agents = append(d.Agents, a)
		}
	}
	if d.Threads, err = r.Threads(ctx, p.ID); err != nil {
		return nil, AsError(err)
	}
	if d.Items, err = r.Items(ctx, p.ID); err != nil {
		return nil, AsError(err)
	}
	return d, nil
}

// ---- agents' side

// ProjectListing is a project with the caller's access to it.
type ProjectListing struct {
	Project *Project
	Access  string
}

// GetProject is get_project (§10.3): members, agents with their access,
// threads and items of a project the agent was brought into.
func (h *Hub) GetProject(ctx context.Context, c *Caller, projectID string) (*ProjectDetail, error) {
	if err := h.homeOnFirstUse(ctx, c.Agent.OwnerID, projectID); err != nil {
		return nil, err
	}
	p, _, access, err := agentProject(ctx, h.store, c.Agent, projectID)
	if err != nil {
		return nil, err
	}
	return detail(ctx, h.store, p, access)
}

// ---- the owner's side

// CreateProject is a person making a project they own (§8).
func (h *Hub) CreateProject(ctx context.Context, u *User, name, description string) (*Project, error) {
	name, description, err := checkProject(name, description)
	if err != nil {
		return nil, err
	}
	now := h.now()
	p := &Project{ID: NewID(IDProject, now), OwnerID: u.ID, OwnerHandle: u.Handle, Name: name, Description: description, CreatedAt: now, UpdatedAt: now}
	err = h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, insertProject(ctx, tx, p) })
	if err != nil {
		return nil, err
	}
	return p, nil
}

// insertProject stores a new project with its owner as its first member.
func insertProject(ctx context.Context, tx Tx, p *Project) error {
	if err := tx.InsertProject(ctx, p); err != nil {
		return err
	}
	return tx.PutProjectMember(ctx, &ProjectMember{ProjectID: p.ID, UserID: p.OwnerID, AddedAt: p.CreatedAt})
}

// checkProject checks and cleans a project's name and description.
func checkProject(name, description string) (string, string, error) {
	name, err := checkText("name", strings.TrimSpace(name), 1, MaxProjectName)
	if err != nil {
		return "", "", err
	}
	description, err = checkText("description", description, 0, MaxProjectDescription)
	return name, description, err
}

// Projects lists the projects the person is a member of, the home project
// (made on first use) first.
func (h *Hub) Projects(ctx context.Context, u *User) ([]*Project, error) {
	if _, err := h.home(ctx, u.ID); err != nil {
		return nil, err
	}
	ps, err := h.store.ProjectsOf(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	return ps, nil
}

// Project is a project as one of its members sees it.
func (h *Hub) Project(ctx context.Context, u *User, projectID string) (*ProjectDetail, error) {
	if err := h.homeOnFirstUse(ctx, u.ID, projectID); err != nil {
		return nil, err
	}
	p, err := memberProject(ctx, h.store, u, projectID)
	if err != nil {
		return nil, asOutcome(err)
	}
	access := "member"
	if p.OwnerID == u.ID {
		access = "owner"
	}
	return detail(ctx, h.store, p, access)
}

// CapNone names no cap on a project's agents, as "" does.
const CapNone = "none"

// ProjectUpdate is what an owner changes of a project; nil leaves a field.
type ProjectUpdate struct {
	Name        *string
	Description *string
	// AgentCap caps every agent: "" (none), AccessListen or AccessOff.
	AgentCap *string
	// Archived archives (true) or restores (false) the project; the home
	// project is never archived.
	Archived *bool
}

// UpdateProject is the project's owner renaming, describing, capping,
// archiving or restoring it (§8). Agents whose access changes hear
// project.agents; threads follow at once.
func (h *Hub) UpdateProject(ctx context.Context, u *User, projectID string, up ProjectUpdate) (*Project, error) {
	if up.AgentCap != nil && *up.AgentCap == CapNone {
		up.AgentCap = new("")
	}
	if up.AgentCap != nil && !slices.Contains([]string{"", AccessListen, AccessOff}, *up.AgentCap) {
		return nil, invalid("", "agent_cap must be \"none\" (or \"\": no cap), \"listen\" or \"off\" (got %q)", echo(*up.AgentCap))
	}
	if err := h.homeOnFirstUse(ctx, u.ID, projectID); err != nil {
		return nil, err
	}
	var p *Project
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		var err error
		if p, err = lockedProject(ctx, tx, u, projectID, true); err != nil {
			return nil, err
		}
		before := *p
		name, description := p.Name, p.Description
		if up.Name != nil {
			name = *up.Name
		}
		if up.Description != nil {
			description = *up.Description
		}
		if p.Name, p.Description, err = checkProject(name, description); err != nil {
			return nil, err
		}
		if up.AgentCap != nil {
			p.AgentCap = *up.AgentCap
		}
		now := h.now()
		if up.Archived != nil {
			switch {
			case *up.Archived && p.Home:
				return nil, invalid("", "the home project is where your agents meet; it cannot be archived")
			case *up.Archived && p.ArchivedAt.IsZero():
				p.ArchivedAt = now
			case !*up.Archived:
				p.ArchivedAt = time.Time{}
			}
		}
		p.UpdatedAt = now
		if err := tx.UpdateProject(ctx, p); err != nil {
			return nil, err
		}
		events, err := syncThreads(ctx, tx, p, now)
		if err != nil {
			return nil, err
		}
		agents, err := tx.ProjectAgents(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		for _, a := range agents {
			if was, is := effectiveAccess(&before, &a), effectiveAccess(p, &a); was != is && !a.Archived {
				events = append(events, projectAgentsEvent(a.AgentID, p, "changed", is, now))
			}
		}
		return events, nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ProjectReads are the queries of projects (Reader embeds them).
type ProjectReads interface {
	Project(ctx context.Context, id string) (*Project, error)
	// ProjectsOf lists the projects that are not archived which the person
	// is a member of, or the agent was brought into: the home project first,
	// then oldest first.
	ProjectsOf(ctx context.Context, principalID string) ([]*Project, error)
	// ProjectMembers lists a project's people, first added first.
	ProjectMembers(ctx context.Context, projectID string) ([]ProjectMember, error)
	// ProjectAgents lists the agents brought into a project, archived ones
	// included (Archived says so).
	ProjectAgents(ctx context.Context, projectID string) ([]ProjectAgent, error)
	ProjectAgent(ctx context.Context, projectID, agentID string) (*ProjectAgent, error)
	ProjectRequest(ctx context.Context, id string) (*ProjectRequest, error)
	// PendingProjectRequests lists the proposals and access requests
	// waiting for the owner, oldest first.
	PendingProjectRequests(ctx context.Context, ownerID string) ([]*ProjectRequest, error)
	// Threads lists a project's threads that are not closed, most recently
	// active first.
	Threads(ctx context.Context, projectID string) ([]*Conversation, error)
	// ThreadByKey finds a project's thread, not closed, with this key.
	ThreadByKey(ctx context.Context, projectID, key string) (*Conversation, error)
}

// ProjectWrites are the writes of projects (Tx embeds them).
type ProjectWrites interface {
	// LockProject holds the project's row until the transaction ends, so
	// changes of who is in it and new threads take turns (a no-op where one
	// writer commits everything).
	LockProject(ctx context.Context, id string) error
	InsertProject(ctx context.Context, p *Project) error
	// UpdateProject stores a project's name, description, cap, archiving
	// and update time.
	UpdateProject(ctx context.Context, p *Project) error
	// PutProjectMember adds a person to a project (already there: nothing).
	PutProjectMember(ctx context.Context, m *ProjectMember) error
	DeleteProjectMember(ctx context.Context, projectID, userID string) error
	// PutProjectAgent brings an agent in, or changes its access and review.
	PutProjectAgent(ctx context.Context, pa *ProjectAgent) error
	DeleteProjectAgent(ctx context.Context, projectID, agentID string) error
	InsertProjectRequest(ctx context.Context, r *ProjectRequest) error
	// DecideProjectRequest stores a pending request's decision (status,
	// project, who and when); ErrNoRows when it is no longer pending.
	DecideProjectRequest(ctx context.Context, r *ProjectRequest) error
}
