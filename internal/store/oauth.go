package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// OAuth clients, grants and codes (§10.6); their tokens are in tokens.

const oauthClientCols = `id, name, redirect_uris, application_type, document, created_at, fetched_at`

func scanOAuthClient(row scanner) (*hub.OAuthClient, error) {
	var (
		c                hub.OAuthClient
		redirects        string
		created, fetched sql.NullInt64
	)
	if err := row.Scan(&c.ID, &c.Name, &redirects, &c.ApplicationType, &c.Document, &created, &fetched); err != nil {
		return nil, err
	}
	c.RedirectURIs = strings.Fields(redirects)
	c.CreatedAt, c.FetchedAt = fromMS(created), fromMS(fetched)
	return &c, nil
}

func (d queries) OAuthClient(ctx context.Context, id string) (*hub.OAuthClient, error) {
	c, err := scanOAuthClient(d.q.QueryRowContext(ctx, `SELECT `+oauthClientCols+` FROM oauth_clients WHERE id = ?`, id))
	return c, dbErr("oauth client", err)
}

// PutOAuthClient: redirect URIs are kept space-separated; a URI has no
// raw space.
func (d queries) PutOAuthClient(ctx context.Context, c *hub.OAuthClient) error {
	return d.exec(ctx, "put oauth client", `INSERT INTO oauth_clients (`+oauthClientCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris,
			application_type = excluded.application_type, document = excluded.document, fetched_at = excluded.fetched_at`,
		c.ID, c.Name, strings.Join(c.RedirectURIs, " "), c.ApplicationType, c.Document, ms(c.CreatedAt), ms(c.FetchedAt))
}

const oauthGrantCols = `g.id, g.client_id, g.user_id, g.agent_id, g.scopes, g.redirect_uri, g.resource, g.created_at, g.revoked_at`

func scanOAuthGrant(row scanner, more ...any) (*hub.OAuthGrant, error) {
	var (
		g                hub.OAuthGrant
		scopes           string
		created, revoked sql.NullInt64
	)
	if err := row.Scan(append([]any{&g.ID, &g.ClientID, &g.UserID, &g.AgentID, &scopes, &g.RedirectURI, &g.Resource, &created, &revoked}, more...)...); err != nil {
		return nil, err
	}
	g.Scopes = strings.Fields(scopes)
	g.CreatedAt, g.RevokedAt = fromMS(created), fromMS(revoked)
	return &g, nil
}

func (d queries) OAuthGrant(ctx context.Context, id string) (*hub.OAuthGrant, error) {
	g, err := scanOAuthGrant(d.q.QueryRowContext(ctx, `SELECT `+oauthGrantCols+` FROM oauth_grants g WHERE g.id = ?`, id))
	return g, dbErr("oauth grant", err)
}

func (d queries) OAuthGrants(ctx context.Context, agentID string) ([]*hub.OAuthGrant, error) {
	return queryAll(ctx, d.q, "oauth grants", func(row scanner) (*hub.OAuthGrant, error) {
		var used sql.NullInt64
		var name string
		g, err := scanOAuthGrant(row, &name, &used)
		if err != nil {
			return nil, err
		}
		g.ClientName, g.LastUsedAt = name, fromMS(used)
		return g, nil
	}, `SELECT `+oauthGrantCols+`, c.name, (SELECT MAX(t.last_used_at) FROM tokens t WHERE t.grant_id = g.id)
		FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
		WHERE g.agent_id = ? AND g.revoked_at IS NULL ORDER BY g.created_at DESC, g.id DESC`, agentID)
}

func (d queries) InsertOAuthGrant(ctx context.Context, g *hub.OAuthGrant) error {
	return d.exec(ctx, "insert oauth grant", `INSERT INTO oauth_grants (id, client_id, user_id, agent_id, scopes, redirect_uri, resource, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		g.ID, g.ClientID, g.UserID, g.AgentID, strings.Join(g.Scopes, " "), g.RedirectURI, g.Resource, ms(g.CreatedAt))
}

func (d queries) RevokeOAuthGrant(ctx context.Context, id string, at time.Time) error {
	if err := d.exec(ctx, "revoke oauth grant", `UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, ms(at), id); err != nil {
		return err
	}
	if err := d.exec(ctx, "revoke oauth grant tokens", `UPDATE tokens SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL`, ms(at), id); err != nil {
		return err
	}
	return d.exec(ctx, "forget oauth grant successors", `UPDATE tokens SET successor = NULL WHERE grant_id = ? AND successor IS NOT NULL`, id)
}

func (d queries) OAuthCodeByHash(ctx context.Context, hash []byte) (*hub.OAuthCode, error) {
	var (
		c                      hub.OAuthCode
		created, expires, used sql.NullInt64
	)
	err := d.q.QueryRowContext(ctx, `SELECT hash, grant_id, challenge, created_at, expires_at, used_at FROM oauth_codes WHERE hash = ?`, hash).
		Scan(&c.Hash, &c.GrantID, &c.Challenge, &created, &expires, &used)
	if err != nil {
		return nil, dbErr("oauth code", err)
	}
	c.CreatedAt, c.ExpiresAt, c.UsedAt = fromMS(created), fromMS(expires), fromMS(used)
	return &c, nil
}

func (d queries) InsertOAuthCode(ctx context.Context, c *hub.OAuthCode) error {
	return d.exec(ctx, "insert oauth code", `INSERT INTO oauth_codes (hash, grant_id, challenge, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		c.Hash, c.GrantID, c.Challenge, ms(c.CreatedAt), ms(c.ExpiresAt))
}

func (d queries) UseOAuthCode(ctx context.Context, hash []byte, at time.Time) error {
	return d.execOne(ctx, "use oauth code", `UPDATE oauth_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL`, ms(at), hash)
}
