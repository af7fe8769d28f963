package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/hub"
)

// Remote A2A agents (§18): the person's agents that live elsewhere.

// remoteAgentView is a remote agent as its owner sees it: never its
// credential, only whether one is presented.
type remoteAgentView struct {
	Handle        string   `json:"handle"`
	CardURL       string   `json:"card_url"`
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	Provider      string   `json:"provider"`
	Skills        []string `json:"skills"`
	Endpoint      string   `json:"endpoint"`
	A2AVersion    string   `json:"a2a_version"`
	HasCredential bool     `json:"has_credential"`
	CreatedAt     string   `json:"created_at"`
	FetchedAt     string   `json:"fetched_at"`
	LastAt        string   `json:"last_delivery_at"`
	LastError     string   `json:"last_error"`
	Pending       int      `json:"pending"`
}

func newRemoteAgentView(r *hub.RemoteAgent) remoteAgentView {
	skills := r.Skills
	if skills == nil {
		skills = []string{}
	}
	return remoteAgentView{Handle: r.Handle, CardURL: r.CardURL, Name: r.Name, Description: r.Description, Provider: r.Provider,
		Skills: skills, Endpoint: r.Endpoint, A2AVersion: r.Version, HasCredential: r.HasCredential, CreatedAt: timeText(r.CreatedAt),
		FetchedAt: timeText(r.FetchedAt), LastAt: timeText(r.LastAt), LastError: r.LastError, Pending: r.Pending}
}

type remoteAgentsView struct {
	RemoteAgents []remoteAgentView `json:"remote_agents"`
}

type removedRemoteView struct {
	Handle  string `json:"handle"`
	Removed bool   `json:"removed"`
}

func (a *API) remoteAgents(ctx context.Context, r *request) (any, error) {
	rs, err := a.remotes.List(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return remoteAgentsView{RemoteAgents: viewsOf(rs, newRemoteAgentView)}, nil
}

func (a *API) addRemoteAgent(ctx context.Context, r *request) (any, error) {
	var in struct {
		Name       string `json:"name"`
		CardURL    string `json:"card_url"`
		Credential string `json:"credential"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	ra, err := a.remotes.Add(ctx, r.user, a2aclient.RemoteAgentInput{Slug: in.Name, CardURL: in.CardURL, Credential: in.Credential})
	if err != nil {
		return nil, err
	}
	return newRemoteAgentView(ra), nil
}

func (a *API) removeRemoteAgent(ctx context.Context, r *request) (any, error) {
	if err := a.remotes.Remove(ctx, r.user, r.PathValue("slug")); err != nil {
		return nil, err
	}
	return removedRemoteView{Handle: r.user.Handle + "/" + r.PathValue("slug"), Removed: true}, nil
}
