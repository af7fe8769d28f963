package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// ---- projects (§8): a person's side

func projectView(p *hub.Project) map[string]any {
	return map[string]any{"project_id": p.ID, "name": p.Name, "description": p.Description, "owner": p.OwnerHandle, "home": p.Home,
		"agent_cap": p.AgentCap, "created_at": timeText(p.CreatedAt), "archived_at": timeText(p.ArchivedAt), "untrusted": true}
}

func (a *API) projects(ctx context.Context, r *request) (any, error) {
	ps, err := a.hub.Projects(ctx, r.user)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, p := range ps {
		out = append(out, projectView(p))
	}
	return map[string]any{"projects": out}, nil
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
	v := projectView(d.Project)
	v["your_role"] = d.Access
	members := []map[string]any{}
	for _, m := range d.Members {
		members = append(members, map[string]any{"handle": m.Handle, "name": m.Name, "added_at": timeText(m.AddedAt)})
	}
	agents := []map[string]any{}
	for _, ag := range d.Agents {
		agents = append(agents, map[string]any{"handle": ag.Handle, "access": ag.Access, "review": ag.Review, "added_at": timeText(ag.AddedAt)})
	}
	threads := []map[string]any{}
	itemThreads := map[string]string{}
	for _, t := range d.Threads {
		threads = append(threads, map[string]any{"conversation_id": t.ID, "title": t.Title, "item_id": t.ItemID, "last_seq": t.LastSeq,
			"status": t.Status, "updated_at": timeText(t.UpdatedAt)})
		itemThreads[t.ItemID] = t.ID
	}
	items := []map[string]any{}
	for _, it := range d.Items {
		items = append(items, itemView(it, itemThreads[it.ID]))
	}
	v["members"], v["agents"], v["threads"], v["items"] = members, agents, threads, items
	return v, nil
}

func itemView(it *hub.Item, conversationID string) map[string]any {
	return map[string]any{"item_id": it.ID, "kind": it.Kind, "title": it.Title, "status": it.Status, "note": it.Note, "url": it.URL,
		"conversation_id": conversationID, "created_at": timeText(it.CreatedAt), "updated_at": timeText(it.UpdatedAt)}
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
		return projectView(p), nil
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
	return map[string]any{"project_id": r.PathValue("id"), "removed": r.PathValue("handle")}, nil
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
	return map[string]any{"project_id": pa.ProjectID, "agent": pa.Handle, "access": pa.Access, "review": pa.Review}, nil
}

func (a *API) removeProjectAgent(ctx context.Context, r *request) (any, error) {
	removed, err := a.hub.RemoveProjectAgent(ctx, r.user, r.PathValue("id"), r.PathValue("agent"))
	if err != nil {
		return nil, err
	}
	return map[string]any{"project_id": r.PathValue("id"), "removed": removed.Handle()}, nil
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
	return map[string]any{"conversation_id": v.Conversation.ID, "title": v.Conversation.Title, "project_id": v.Conversation.ProjectID, "untrusted": true}, nil
}

func (a *API) item(ctx context.Context, r *request) (any, error) {
	v, err := a.hub.ItemAsPerson(ctx, r.user, r.PathValue("id"), r.PathValue("item"))
	if err != nil {
		return nil, err
	}
	out := itemView(v.Item, v.ConversationID)
	history := []map[string]any{}
	for _, ch := range v.History {
		history = append(history, map[string]any{"by": ch.ByHandle, "instance": ch.Instance, "changes": ch.Changes, "at": timeText(ch.At)})
	}
	out["history"], out["untrusted"] = history, true
	return out, nil
}

func (a *API) image(ctx context.Context, r *request) (any, error) {
	img, data, err := a.hub.ProjectImage(ctx, r.user, r.PathValue("id"), r.PathValue("image"))
	if err != nil {
		return nil, err
	}
	return file{contentType: img.MIME, data: data}, nil
}
