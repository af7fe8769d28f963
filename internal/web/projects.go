package web

import (
	"context"
	"net/url"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/projects"
)

// Projects (§8): the person's projects and their agents' proposals; a
// project's page with its members, agents and their access, threads, items
// as a board by status, and images; an item with its history.

func (w *Web) projects(ctx context.Context, r *request) (*reply, error) {
	p, err := w.overview.ProjectsPage(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return &reply{page: "projects", data: p}, nil
}

func (w *Web) createProject(ctx context.Context, r *request) (*reply, error) {
	p, err := w.hub.CreateProject(ctx, r.user, form(r, "name"), form(r, "description"))
	if err != nil {
		return nil, err
	}
	return &reply{redirect: projectPath(p.ID), notice: "Created the project " + p.Name + "."}, nil
}

func projectPath(id string) string { return "/projects/" + url.PathEscape(id) }

// projectPage is a project's page: the board and the choices its forms
// offer.
type projectPage struct {
	*overview.ProjectBoard
	Statuses []string
	Accesses []string
	Kinds    []string
}

func (w *Web) project(ctx context.Context, r *request) (*reply, error) {
	b, err := w.overview.ProjectBoard(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return &reply{page: "project", data: projectPage{ProjectBoard: b, Statuses: hub.ItemStatuses, Accesses: []string{hub.AccessSpeak, hub.AccessListen}, Kinds: hub.ItemKinds}}, nil
}

func (w *Web) addMember(ctx context.Context, r *request) (*reply, error) {
	handle := strings.TrimPrefix(strings.TrimSpace(form(r, "handle")), "@")
	if _, err := w.hub.AddMember(ctx, r.user, r.PathValue("id"), handle); err != nil {
		return nil, err
	}
	return &reply{redirect: projectPath(r.PathValue("id")) + "#people", notice: "@" + handle + " is a member now."}, nil
}

// removeMember takes a person out of the project, or the person leaves it.
func (w *Web) removeMember(ctx context.Context, r *request) (*reply, error) {
	handle := r.PathValue("handle")
	if err := w.hub.RemoveMember(ctx, r.user, r.PathValue("id"), handle); err != nil {
		return nil, err
	}
	if handle == r.user.Handle {
		return &reply{redirect: "/projects", notice: "You left the project: its threads are gone from your inbox."}, nil
	}
	return &reply{redirect: projectPath(r.PathValue("id")) + "#people", notice: "Removed @" + handle + " from the project, and their agents with them."}, nil
}

// bringAgent brings one of the person's agents in, or changes its access.
func (w *Web) bringAgent(ctx context.Context, r *request) (*reply, error) {
	pa, err := w.hub.SetProjectAgent(ctx, r.user, r.PathValue("id"), form(r, "slug"), form(r, "access"), form(r, "review") == "on")
	if err != nil {
		return nil, err
	}
	return &reply{redirect: projectPath(r.PathValue("id")) + "#people", notice: r.user.Handle + "/" + strings.TrimPrefix(form(r, "slug"), r.user.Handle+"/") + " is in the project, with " + pa.Access + "."}, nil
}

func (w *Web) setCap(ctx context.Context, r *request) (*reply, error) {
	c := form(r, "cap")
	p, err := w.hub.UpdateProject(ctx, r.user, r.PathValue("id"), hub.ProjectUpdate{AgentCap: &c})
	if err != nil {
		return nil, err
	}
	msg := "Agents here may do what their owners set."
	if p.AgentCap != "" {
		msg = "Every agent here is capped at " + p.AgentCap + "."
	}
	return &reply{redirect: projectPath(p.ID) + "#people", notice: msg}, nil
}

func (w *Web) openThread(ctx context.Context, r *request) (*reply, error) {
	v, err := w.hub.OpenThreadAsPerson(ctx, r.user, r.PathValue("id"), form(r, "title"))
	if err != nil {
		return nil, err
	}
	return &reply{redirect: "/conversations/" + url.PathEscape(v.Conversation.ID) + "#write"}, nil
}

// itemPage is an item with its history, and the statuses it may move to.
type itemPage struct {
	*hub.ItemView
	ProjectID string
	Statuses  []string
}

func (w *Web) item(ctx context.Context, r *request) (*reply, error) {
	v, err := w.boards.ItemAsPerson(ctx, r.user, r.PathValue("id"), r.PathValue("item"))
	if err != nil {
		return nil, err
	}
	return &reply{page: "item", data: itemPage{ItemView: v, ProjectID: r.PathValue("id"), Statuses: hub.ItemStatuses}}, nil
}

// moveItem moves an item to another column of the board.
func (w *Web) moveItem(ctx context.Context, r *request) (*reply, error) {
	status := form(r, "status")
	v, err := w.boards.UpdateItemAsPerson(ctx, r.user, r.PathValue("id"), r.PathValue("item"), projects.ItemEdit{Status: &status})
	if err != nil {
		return nil, err
	}
	back := localPath(form(r, "back"))
	if back == "" {
		back = projectPath(r.PathValue("id")) + "#board"
	}
	return &reply{redirect: back, notice: "“" + v.Item.Title + "” is " + v.Item.Status + " now."}, nil
}
