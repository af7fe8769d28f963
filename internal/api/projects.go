package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// Projects (§8), a person's side: made, changed, archived, who is in them,
// and their threads.

// projectView is a project as listed.
type projectView struct {
	ProjectID   string `json:"project_id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Owner       string `json:"owner"`
	Home        bool   `json:"home"`
	AgentCap    string `json:"agent_cap"`
	CreatedAt   string `json:"created_at"`
	ArchivedAt  string `json:"archived_at"`
	Untrusted   bool   `json:"untrusted"`
}

func newProjectView(p *hub.Project) projectView {
	return projectView{ProjectID: p.ID, Name: p.Name, Description: p.Description, Owner: p.OwnerHandle, Home: p.Home,
		AgentCap: p.AgentCap, CreatedAt: timeText(p.CreatedAt), ArchivedAt: timeText(p.ArchivedAt), Untrusted: true}
}

// projectDetailView is a project with the person's role in it, its
// members, agents, threads and items.
type projectDetailView struct {
	projectView
	YourRole string             `json:"your_role"`
	Members  []memberView       `json:"members"`
	Agents   []projectAgentView `json:"agents"`
	Threads  []threadView       `json:"threads"`
	Items    []itemView         `json:"items"`
}

type memberView struct {
	Handle  string `json:"handle"`
	Name    string `json:"name"`
	AddedAt string `json:"added_at"`
}

type projectAgentView struct {
	Handle  string `json:"handle"`
	Access  string `json:"access"`
	Review  bool   `json:"review"`
	AddedAt string `json:"added_at"`
}

type threadView struct {
	ConversationID string `json:"conversation_id"`
	Title          string `json:"title"`
	ItemID         string `json:"item_id"`
	LastSeq        int64  `json:"last_seq"`
	Status         string `json:"status"`
	UpdatedAt      string `json:"updated_at"`
}

type projectsView struct {
	Projects []projectView `json:"projects"`
}

// removedView names who left a project.
type removedView struct {
	ProjectID string `json:"project_id"`
	Removed   string `json:"removed"`
}

// agentSetView is an agent's access in a project as its owner set it.
type agentSetView struct {
	ProjectID string `json:"project_id"`
	Agent     string `json:"agent"`
	Access    string `json:"access"`
	Review    bool   `json:"review"`
}

// threadOpenedView is a project's thread, found or made.
type threadOpenedView struct {
	ConversationID string `json:"conversation_id"`
	Title          string `json:"title"`
	ProjectID      string `json:"project_id"`
	Untrusted      bool   `json:"untrusted"`
}

func (a *API) projects(ctx context.Context, r *request) (any, error) {
	ps, err := a.hub.Projects(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return projectsView{Projects: viewsOf(ps, newProjectView)}, nil
}

func (a *API) createProject(ctx context.Context, r *request) (any, error) {
	var in struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	p, err := a.hub.CreateProject(ctx, r.user, in.Name, in.Description)
	if err != nil {
		return nil, err
	}
	return a.projectDetail(ctx, r, p.ID)
}

func (a *API) project(ctx context.Context, r *request) (any, error) {
	return a.projectDetail(ctx, r, r.PathValue("id"))
}

// projectDetail is a project with its members, agents, threads and items.
func (a *API) projectDetail(ctx context.Context, r *request, id string) (any, error) {
	d, err := a.hub.Project(ctx, r.user, id)
	if err != nil {
		return nil, err
	}
	itemThreads := map[string]string{}
	for _, t := range d.Threads {
		itemThreads[t.ItemID] = t.ID
	}
	return projectDetailView{projectView: newProjectView(d.Project), YourRole: d.Access,
		Members: viewsOf(d.Members, func(m hub.ProjectMember) memberView {
			return memberView{Handle: m.Handle, Name: m.Name, AddedAt: timeText(m.AddedAt)}
		}),
		Agents: viewsOf(d.Agents, func(ag hub.ProjectAgent) projectAgentView {
			return projectAgentView{Handle: ag.Handle, Access: ag.Access, Review: ag.Review, AddedAt: timeText(ag.AddedAt)}
		}),
		Threads: viewsOf(d.Threads, func(t *hub.Conversation) threadView {
			return threadView{ConversationID: t.ID, Title: t.Title, ItemID: t.ItemID, LastSeq: t.LastSeq, Status: t.Status, UpdatedAt: timeText(t.UpdatedAt)}
		}),
		Items: viewsOf(d.Items, func(it *hub.Item) itemView { return newItemView(it, itemThreads[it.ID]) }),
	}, nil
}

func (a *API) updateProject(ctx context.Context, r *request) (any, error) {
	var in struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
		AgentCap    *string `json:"agent_cap"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if _, err := a.hub.UpdateProject(ctx, r.user, r.PathValue("id"), hub.ProjectUpdate{Name: in.Name, Description: in.Description, AgentCap: in.AgentCap}); err != nil {
		return nil, err
	}
	return a.projectDetail(ctx, r, r.PathValue("id"))
}

func (a *API) archiveProject(archived bool) handler {
	return func(ctx context.Context, r *request) (any, error) {
		p, err := a.hub.UpdateProject(ctx, r.user, r.PathValue("id"), hub.ProjectUpdate{Archived: &archived})
		if err != nil {
			return nil, err
		}
		return newProjectView(p), nil
	}
}

func (a *API) addMember(ctx context.Context, r *request) (any, error) {
	if _, err := a.hub.AddMember(ctx, r.user, r.PathValue("id"), r.PathValue("handle")); err != nil {
		return nil, err
	}
	return a.projectDetail(ctx, r, r.PathValue("id"))
}

func (a *API) removeMember(ctx context.Context, r *request) (any, error) {
	if err := a.hub.RemoveMember(ctx, r.user, r.PathValue("id"), r.PathValue("handle")); err != nil {
		return nil, err
	}
	return removedView{ProjectID: r.PathValue("id"), Removed: r.PathValue("handle")}, nil
}

func (a *API) setProjectAgent(ctx context.Context, r *request) (any, error) {
	var in struct {
		Access string `json:"access"`
		Review bool   `json:"review"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	pa, err := a.hub.SetProjectAgent(ctx, r.user, r.PathValue("id"), r.PathValue("agent"), in.Access, in.Review)
	if err != nil {
		return nil, err
	}
	return agentSetView{ProjectID: pa.ProjectID, Agent: pa.Handle, Access: pa.Access, Review: pa.Review}, nil
}

func (a *API) removeProjectAgent(ctx context.Context, r *request) (any, error) {
	removed, err := a.hub.RemoveProjectAgent(ctx, r.user, r.PathValue("id"), r.PathValue("agent"))
	if err != nil {
		return nil, err
	}
	return removedView{ProjectID: r.PathValue("id"), Removed: removed.Handle()}, nil
}

func (a *API) openThread(ctx context.Context, r *request) (any, error) {
	var in struct {
		Title string `json:"title"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	v, err := a.hub.OpenThreadAsPerson(ctx, r.user, r.PathValue("id"), in.Title)
	if err != nil {
		return nil, err
	}
	return threadOpenedView{ConversationID: v.Conversation.ID, Title: v.Conversation.Title, ProjectID: v.Conversation.ProjectID, Untrusted: true}, nil
}
