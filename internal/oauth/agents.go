package oauth

import (
	"cmp"
	"context"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// An agent's clients (§10.6), as its owner sees and revokes them on the
// agent's page: each client acting as the agent under a grant not
// revoked, with what it was last given.

// AgentClient is one client acting as an agent, for the agent's page: its
// name, the redirect URI and scopes it was last given, and when it last
// used a token.
type AgentClient struct {
	ClientID    string
	Name        string
	RedirectURI string
	Scopes      []string
	CreatedAt   time.Time
	LastUsedAt  time.Time
}

// AgentClients lists the clients that act as the person's agent under a
// grant not revoked, the most recently authorized first. slug is as
// hub.OwnAgent takes it; another's agent is not_found.
func (au *Authority) AgentClients(ctx context.Context, u *hub.User, slug string) ([]AgentClient, error) {
	a, err := au.hub.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	gs, err := au.store.OAuthGrants(ctx, a.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	var out []AgentClient
	at := map[string]int{}
	for _, g := range gs { // newest first
		i, ok := at[g.ClientID]
		if !ok {
			at[g.ClientID] = len(out)
			out = append(out, AgentClient{ClientID: g.ClientID, Name: cmp.Or(g.ClientName, g.ClientID), RedirectURI: g.RedirectURI, Scopes: g.Scopes, CreatedAt: g.CreatedAt, LastUsedAt: g.LastUsedAt})
			continue
		}
		if g.LastUsedAt.After(out[i].LastUsedAt) {
			out[i].LastUsedAt = g.LastUsedAt
		}
	}
	return out, nil
}

// RevokeAgentClient ends every grant of a client for the person's agent:
// its tokens stop working at once (its next request gets 401).
func (au *Authority) RevokeAgentClient(ctx context.Context, u *hub.User, slug, clientID string) (*AgentClient, error) {
	a, err := au.hub.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	gs, err := au.store.OAuthGrants(ctx, a.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	var view *AgentClient
	now := au.hub.Now()
	err = au.store.Update(ctx, func(tx hub.Tx) error {
		for _, g := range gs {
			if g.ClientID != clientID {
				continue
			}
			if view == nil {
				view = &AgentClient{ClientID: g.ClientID, Name: cmp.Or(g.ClientName, g.ClientID), RedirectURI: g.RedirectURI, Scopes: g.Scopes}
			}
			if err := tx.RevokeOAuthGrant(ctx, g.ID, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, hub.AsError(err)
	}
	if view == nil {
		return nil, hub.NotFound("no client %q acts as %s", hub.Echo(clientID), a.Handle())
	}
	au.hub.InboxChanged(a.ID) // the streams its tokens hold end (§19)
	return view, nil
}
