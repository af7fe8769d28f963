package hub

import (
	"cmp"
	"context"
	"strings"
	"time"
)

// OAuth 2.1 (§2, §10.6): the authorization server's logic — clients,
// consent, codes, tokens — is internal/oauth; here are its records, and an
// agent's clients as its owner sees and revokes them. Access and refresh
// tokens are rows of the tokens table, so one verifier (tokens.go) serves
// static and OAuth tokens and a revocation is immediate.

// Prefixes and ids of OAuth (§10.6). Access tokens are agent tokens
// (plv_…), so the MCP face's one verifier takes them; refresh tokens have
// their own prefix, so one is never taken as a bearer token.
const (
	RefreshTokenPrefix = "plr_"
	IDOAuthClient      = "cli"
	IDOAuthGrant       = "oag"
)

// SameResource reports whether two resource URIs name the same thing,
// a trailing slash aside (§10.6; clients round-trip either form).
func SameResource(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// OAuthClient is an OAuth client: registered here (ID cli_…), or known by
// its metadata document (ID the document's https URL; Document true).
type OAuthClient struct {
	ID              string
	Name            string
	RedirectURIs    []string
	ApplicationType string // "web" or "native"
	Document        bool
	CreatedAt       time.Time
	FetchedAt       time.Time // when its document was last fetched
}

// Label is what a person is shown for the client: its name, or its id.
func (c *OAuthClient) Label() string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

// OAuthGrant is a person's consent that a client acts as one of their
// agents with these scopes, for one resource; every token issued under it
// carries its id, and revoking it ends them all.
type OAuthGrant struct {
	ID          string // oag_…
	ClientID    string
	UserID      string
	AgentID     string
	Scopes      []string
	RedirectURI string
	Resource    string
	CreatedAt   time.Time
	RevokedAt   time.Time

	// Filled when grants are listed: the client's name, and when a token
	// of the grant was last used.
	ClientName string
	LastUsedAt time.Time
}

// OAuthCode is an authorization code, stored by its hash.
type OAuthCode struct {
	Hash      []byte
	GrantID   string
	Challenge string // the PKCE S256 code_challenge
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time
}

// OAuthClientView is one client acting as an agent, for the agent's page:
// its name, the redirect URI and scopes it was last given, and when it
// last used a token.
type OAuthClientView struct {
	ClientID    string
	Name        string
	RedirectURI string
	Scopes      []string
	CreatedAt   time.Time
	LastUsedAt  time.Time
}

// OAuthClients lists the clients that act as the person's agent under a
// grant not revoked, the most recently authorized first.
func (h *Hub) OAuthClients(ctx context.Context, u *User, slug string) ([]OAuthClientView, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	return h.agentClients(ctx, a)
}

func (h *Hub) agentClients(ctx context.Context, a *Agent) ([]OAuthClientView, error) {
	gs, err := h.store.OAuthGrants(ctx, a.ID)
	if err != nil {
		return nil, AsError(err)
	}
	var out []OAuthClientView
	at := map[string]int{}
	for _, g := range gs { // newest first
		i, ok := at[g.ClientID]
		if !ok {
			at[g.ClientID] = len(out)
			out = append(out, OAuthClientView{ClientID: g.ClientID, Name: cmp.Or(g.ClientName, g.ClientID), RedirectURI: g.RedirectURI, Scopes: g.Scopes, CreatedAt: g.CreatedAt, LastUsedAt: g.LastUsedAt})
			continue
		}
		if g.LastUsedAt.After(out[i].LastUsedAt) {
			out[i].LastUsedAt = g.LastUsedAt
		}
	}
	return out, nil
}

// RevokeOAuthClient ends every grant of a client for the person's agent:
// its tokens stop working at once (its next request gets 401).
func (h *Hub) RevokeOAuthClient(ctx context.Context, u *User, slug, clientID string) (*OAuthClientView, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	gs, err := h.store.OAuthGrants(ctx, a.ID)
	if err != nil {
		return nil, AsError(err)
	}
	var view *OAuthClientView
	now := h.now()
	err = h.store.Update(ctx, func(tx Tx) error {
		for _, g := range gs {
			if g.ClientID != clientID {
				continue
			}
			if view == nil {
				view = &OAuthClientView{ClientID: g.ClientID, Name: cmp.Or(g.ClientName, g.ClientID), RedirectURI: g.RedirectURI, Scopes: g.Scopes}
			}
			if err := tx.RevokeOAuthGrant(ctx, g.ID, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, AsError(err)
	}
	if view == nil {
		return nil, notFound("no client %q acts as %s", echo(clientID), a.Handle())
	}
	h.inboxChanged(a.ID) // the streams its tokens hold end (§19)
	return view, nil
}

// OAuthReads are the queries of oauth (Reader embeds them).
type OAuthReads interface {
	OAuthClient(ctx context.Context, id string) (*OAuthClient, error)
	OAuthGrant(ctx context.Context, id string) (*OAuthGrant, error)
	// OAuthGrants lists the agent's grants not revoked, newest first, with
	// their client's name and their tokens' last use.
	OAuthGrants(ctx context.Context, agentID string) ([]*OAuthGrant, error)
	OAuthCodeByHash(ctx context.Context, hash []byte) (*OAuthCode, error)
}

// OAuthWrites are the writes of oauth (Tx embeds them).
type OAuthWrites interface {
	// PutOAuthClient stores a client, or replaces what is known of it.
	PutOAuthClient(ctx context.Context, c *OAuthClient) error
	InsertOAuthGrant(ctx context.Context, g *OAuthGrant) error
	// RevokeOAuthGrant revokes a grant and every token issued under it,
	// and forgets their successors.
	RevokeOAuthGrant(ctx context.Context, id string, at time.Time) error
	InsertOAuthCode(ctx context.Context, c *OAuthCode) error
	// UseOAuthCode marks an unused code used; ErrNoRows when it was.
	UseOAuthCode(ctx context.Context, hash []byte, at time.Time) error
}
