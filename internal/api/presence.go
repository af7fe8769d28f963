package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// Presence (§19) as scripts see it.

// agentPresenceView is an agent's presence, with its named sessions'.
type agentPresenceView struct {
	Handle   string                `json:"handle"`
	Presence string                `json:"presence"`
	LastSeen string                `json:"last_seen"`
	Sessions []sessionPresenceView `json:"sessions"`
}

type sessionPresenceView struct {
	Name     string `json:"name"`
	Presence string `json:"presence"`
	LastSeen string `json:"last_seen"`
}

type presencesView struct {
	Agents []agentPresenceView `json:"agents"`
}

// presence is GET /presence: each of the person's agents with its
// presence, and each of its named sessions'.
func (a *API) presence(ctx context.Context, r *request) (any, error) {
	agents, presence, err := a.pages.OwnPresence(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return presencesView{Agents: viewsOf(agents, func(ag *hub.Agent) agentPresenceView {
		p := presence[ag.ID]
		return agentPresenceView{Handle: ag.Handle(), Presence: p.State, LastSeen: timeText(p.LastSeen),
			Sessions: viewsOf(p.Sessions, func(s hub.SessionPresence) sessionPresenceView {
				return sessionPresenceView{Name: s.Name, Presence: s.State, LastSeen: timeText(s.LastSeen)}
			})}
	})}, nil
}
