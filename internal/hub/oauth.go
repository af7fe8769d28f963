package hub

import (
	"cmp"
	"context"
	"fmt"
	"time"
)

// OAuth 2.1 (§2, §10.6): clients register (RFC 7591) or are known by a
// client ID metadata document; a person consents on the dashboard to let a
// client act as one of their agents with some scopes; the client trades the
// authorization code (PKCE S256 only) for an access token of an hour and a
// refresh token that rotates on every use. Both tokens are rows of the
// tokens table, so one verifier serves static and OAuth tokens and a
// revocation is immediate. Every rule of it is here; the oauth face and the
// consent page decode, call one of these, and render.

// Lifetimes and limits of OAuth (§10.6).
const (
	AccessTokenLifetime  = time.Hour
	RefreshTokenLifetime = 30 * 24 * time.Hour
	// CodeLifetime is how long an authorization code may wait for its
	// exchange.
	CodeLifetime = 5 * time.Minute
	// ClientDocumentMaxBytes bounds a client ID metadata document, and
	// ClientDocumentTTL is how long a fetched one is kept before it is
	// fetched again.
	ClientDocumentMaxBytes = 16 << 10
	ClientDocumentTTL      = time.Hour
	// MaxRedirectURIs bounds a client's redirect URIs.
	MaxRedirectURIs = 10
)

// Prefixes of OAuth secrets. Access tokens are agent tokens (plv_…), so
// the MCP face's one verifier takes them; refresh tokens and codes have
// their own prefixes, so neither is ever taken as a bearer token.
const (
	RefreshTokenPrefix = "plr_"
	codePrefix         = "plc_"
	IDOAuthClient      = "cli"
	IDOAuthGrant       = "oag"
)

// OAuth error codes (RFC 6749 §4.1.2.1, §5.2; RFC 7591 §3.2.2; RFC 8707),
// the Code of the Errors these functions return.
const (
	OAuthInvalidRequest      = "invalid_request"
	OAuthInvalidClient       = "invalid_client"
	OAuthInvalidGrant        = "invalid_grant"
	OAuthUnauthorizedClient  = "unauthorized_client"
	OAuthUnsupportedGrant    = "unsupported_grant_type"
	OAuthUnsupportedResponse = "unsupported_response_type"
	OAuthInvalidScope        = "invalid_scope"
	OAuthInvalidTarget       = "invalid_target"
	OAuthAccessDenied        = "access_denied"
	OAuthInvalidRedirectURI  = "invalid_redirect_uri"
	OAuthInvalidMetadata     = "invalid_client_metadata"
)

func oauthErr(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Msg: fmt.Sprintf(format, args...)}
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
	return view, nil
}
