package projects

import (
	"context"
	"slices"

	"github.com/palaverhq/palaver/internal/hub"
)

// An agent's projects (§8, §10.3): those it was brought into, with its
// access, and its owner's others.

// AgentProjects is list_projects (§8): the projects the agent was brought
// into with its access, and NotJoined, its owner's projects it is not in
// (the ids request_project_access takes).
type AgentProjects struct {
	Projects  []hub.ProjectListing
	NotJoined []*hub.Project
}

// ListProjects lists the caller's projects and those of its owner it is
// not in (§10.3 list_projects). The home project is made on first use.
func (x *Projects) ListProjects(ctx context.Context, c *hub.Caller) (*AgentProjects, error) {
	if _, err := x.hub.Home(ctx, c.Agent.OwnerID); err != nil {
		return nil, err
	}
	mine, err := x.store.ProjectsOf(ctx, c.Agent.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	out := &AgentProjects{}
	for _, p := range mine {
		pa, err := x.store.ProjectAgent(ctx, p.ID, c.Agent.ID)
		if err != nil {
			return nil, hub.AsError(err)
		}
		out.Projects = append(out.Projects, hub.ProjectListing{Project: p, Access: hub.EffectiveAccess(p, pa)})
	}
	owners, err := x.store.ProjectsOf(ctx, c.Agent.OwnerID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	for _, p := range owners {
		if !slices.ContainsFunc(mine, func(m *hub.Project) bool { return m.ID == p.ID }) {
			out.NotJoined = append(out.NotJoined, p)
		}
	}
	return out, nil
}
