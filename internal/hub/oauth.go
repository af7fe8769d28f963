package hub

import (
	"context"
	"strings"
	"time"
)

// OAuth 2.1 (§2, §10.6): the authorization server's logic — clients,
// consent, codes, tokens, and an agent's clients as its owner sees and
// revokes them — is internal/oauth; here are its records. Access and refresh
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
