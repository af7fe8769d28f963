package web

import (
	"context"
	"strings"

	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/hub"
)

// Remote A2A agents (§18), on the agents page: add one by its card's URL
// (with a credential, never shown back), see how its deliveries go,
// remove it.

// agentsPage is the agents page: the person's agents and, among them,
// those that live elsewhere.
type agentsPage struct {
	Agents  []*hub.Agent
	Remotes []*hub.RemoteAgent
}

func (w *Web) addRemoteAgent(ctx context.Context, r *request) (*reply, error) {
	ra, err := w.remotes.Add(ctx, r.user, a2aclient.RemoteAgentInput{Slug: strings.TrimSpace(form(r, "slug")),
		CardURL: form(r, "card_url"), Credential: form(r, "credential")})
	if err != nil {
		return nil, err
	}
	return &reply{redirect: "/agents#remote", notice: "Added " + ra.Handle + " (" + ra.Name + "): your agents may open a conversation with it now."}, nil
}

func (w *Web) removeRemoteAgent(ctx context.Context, r *request) (*reply, error) {
	slug := r.PathValue("slug")
	if err := w.remotes.Remove(ctx, r.user, slug); err != nil {
		return nil, err
	}
	return &reply{redirect: "/agents#remote", notice: "Removed the remote agent " + r.user.Handle + "/" + slug + ": nothing more is sent to it."}, nil
}
