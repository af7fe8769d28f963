package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// The person's agents (§1): made, archived, their mode and whether they
// are public, and one agent with everything about it.

// agentView is one of the person's agents.
type agentView struct {
	Handle      string `json:"handle"`
	Description string `json:"description"`
	Goal        string `json:"goal"`
	Mode        string `json:"mode"`
	Public      bool   `json:"public"`
	CreatedAt   string `json:"created_at"`
	ArchivedAt  string `json:"archived_at"`
}

func newAgentView(ag *hub.Agent) agentView {
	return agentView{Handle: ag.Handle(), Description: ag.Description, Goal: ag.Goal, Mode: ag.Mode,
		Public: ag.Public, CreatedAt: timeText(ag.CreatedAt), ArchivedAt: timeText(ag.ArchivedAt)}
}

// instanceView is a named session of an agent (§5).
type instanceView struct {
	Name       string `json:"name"`
	Note       string `json:"note"`
	LastSeenAt string `json:"last_seen_at"`
}

// agentDetailView is an agent with its tokens, named sessions, grants and
// webhooks.
type agentDetailView struct {
	agentView
	Tokens    []tokenView    `json:"tokens"`
	Instances []instanceView `json:"instances"`
	Grants    []grantView    `json:"grants"`
	Webhooks  []webhookView  `json:"webhooks"`
}

type agentsView struct {
	Agents []agentView `json:"agents"`
}

func (a *API) agents(ctx context.Context, r *request) (any, error) {
	as, err := a.hub.Agents(ctx, r.user.Handle, false)
	if err != nil {
		return nil, err
	}
	return agentsView{Agents: viewsOf(as, newAgentView)}, nil
}

func (a *API) createAgent(ctx context.Context, r *request) (any, error) {
	var in struct {
		Slug        string `json:"slug"`
		Description string `json:"description"`
		Goal        string `json:"goal"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	ag, err := a.hub.CreateOwnAgent(ctx, r.user, in.Slug, in.Description, in.Goal)
	if err != nil {
		return nil, err
	}
	return newAgentView(ag), nil
}

// own is the person's agent with this slug (another's is not_found).
func (a *API) own(ctx context.Context, r *request) (*hub.Agent, error) {
	return a.hub.OwnAgent(ctx, r.user, r.PathValue("slug"))
}

// agent is one of the person's agents with its tokens, named sessions,
// grants and webhooks.
func (a *API) agent(ctx context.Context, r *request) (any, error) {
	d, err := a.pages.AgentDetail(ctx, r.user, r.PathValue("slug"))
	if err != nil {
		return nil, err
	}
	hooks, err := a.hooks.Of(ctx, d.Agent)
	if err != nil {
		return nil, err
	}
	instances := viewsOf(d.Instances, func(in hub.Instance) instanceView {
		return instanceView{Name: in.Name, Note: in.Note, LastSeenAt: timeText(in.LastSeen)}
	})
	return agentDetailView{agentView: newAgentView(d.Agent), Tokens: viewsOf(d.Tokens, newTokenView), Instances: instances,
		Grants: grantViews(d.Grants), Webhooks: viewsOf(hooks, newWebhookView)}, nil
}

func (a *API) unarchiveAgent(ctx context.Context, r *request) (any, error) {
	ag, err := a.own(ctx, r)
	if err != nil {
		return nil, err
	}
	if ag, err = a.hub.UnarchiveAgent(ctx, ag.Handle()); err != nil {
		return nil, err
	}
	return newAgentView(ag), nil
}

func (a *API) archiveAgent(ctx context.Context, r *request) (any, error) {
	ag, err := a.own(ctx, r)
	if err != nil {
		return nil, err
	}
	if ag, err = a.hub.ArchiveAgent(ctx, ag.Handle()); err != nil {
		return nil, err
	}
	return newAgentView(ag), nil
}

func (a *API) setMode(ctx context.Context, r *request) (any, error) {
	var in struct {
		Mode string `json:"mode"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	ag, err := a.own(ctx, r)
	if err != nil {
		return nil, err
	}
	if ag, err = a.hub.SetAgentMode(ctx, ag.Handle(), in.Mode); err != nil {
		return nil, err
	}
	return newAgentView(ag), nil
}

// setPublic marks the agent public or private (§1): {"public": true|false}.
func (a *API) setPublic(ctx context.Context, r *request) (any, error) {
	var in struct {
		Public *bool `json:"public"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if in.Public == nil {
		return nil, &hub.Error{Kind: hub.KindInvalid, Msg: `public is required: {"public": true} makes the agent public, {"public": false} private`}
	}
	ag, err := a.hub.SetAgentPublic(ctx, r.user, r.PathValue("slug"), *in.Public)
	if err != nil {
		return nil, err
	}
	return newAgentView(ag), nil
}
