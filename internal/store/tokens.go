package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Static tokens (§2), stored as hashes.

const tokenCols = `id, hash, user_id, COALESCE(agent_id, ''), name, scopes, created_at, expires_at, last_used_at, revoked_at, grant_id, resource, successor`

// tokenDest is where a row's token columns (tokenCols) scan to; done
// finishes the scopes and times.
type tokenDest struct {
	t                               hub.Token
	scopes                          string
	created, expires, used, revoked sql.NullInt64
}

func (d *tokenDest) dest() []any {
	t := &d.t
	return []any{&t.ID, &t.Hash, &t.UserID, &t.AgentID, &t.Name, &d.scopes, &d.created, &d.expires, &d.used, &d.revoked, &t.GrantID, &t.Resource, &t.Successor}
}

func (d *tokenDest) done() *hub.Token {
	if d.scopes != "" {
		d.t.Scopes = strings.Split(d.scopes, " ")
	}
	d.t.CreatedAt, d.t.ExpiresAt, d.t.LastUsedAt, d.t.RevokedAt = fromMS(d.created), fromMS(d.expires), fromMS(d.used), fromMS(d.revoked)
	return &d.t
}

func scanToken(row scanner) (*hub.Token, error) {
	var d tokenDest
	if err := row.Scan(d.dest()...); err != nil {
		return nil, err
	}
	return d.done(), nil
}

func (d queries) AuthGeneration(ctx context.Context) (int64, error) {
	var n int64
	err := d.q.QueryRowContext(ctx, `SELECT n FROM generations WHERE name = 'auth'`).Scan(&n)
	return n, dbErr("auth generation", err)
}

func (d queries) TokenByHash(ctx context.Context, hash []byte) (*hub.Token, *hub.Agent, *hub.User, error) {
	var (
		t                                             tokenDest
		aID, aSlug, aName, aDescription, aGoal, aMode sql.NullString
		aArchived, aCreated                           sql.NullInt64
		aPublic                                       sql.NullBool
		u                                             hub.User
		uCreated                                      sql.NullInt64
	)
	err := d.q.QueryRowContext(ctx, `SELECT t.id, t.hash, t.user_id, COALESCE(t.agent_id, ''), t.name, t.scopes, t.created_at, t.expires_at, t.last_used_at, t.revoked_at, t.grant_id, t.resource, t.successor,
			a.id, a.slug, a.name, a.description, a.goal, a.mode, a.public, a.archived_at, a.created_at, u.id, u.handle, u.name, u.email, u.admin, u.created_at, u.time_zone
		FROM tokens t JOIN users u ON u.id = t.user_id LEFT JOIN agents a ON a.id = t.agent_id
		WHERE t.hash = ?`, hash).Scan(append(t.dest(), &aID, &aSlug, &aName, &aDescription, &aGoal, &aMode, &aPublic, &aArchived, &aCreated, &u.ID, &u.Handle, &u.Name, &u.Email, &u.Admin, &uCreated, &u.TimeZone)...)
	if err != nil {
		return nil, nil, nil, dbErr("token by hash", err)
	}
	u.CreatedAt = fromMS(uCreated)
	var a *hub.Agent
	if aID.Valid {
		a = &hub.Agent{ID: aID.String, OwnerID: u.ID, OwnerHandle: u.Handle, Slug: aSlug.String, Name: aName.String, Description: aDescription.String,
			Goal: aGoal.String, Mode: aMode.String, Public: aPublic.Bool, ArchivedAt: fromMS(aArchived), CreatedAt: fromMS(aCreated)}
	}
	return t.done(), a, &u, nil
}

func (d queries) TokenByID(ctx context.Context, id string) (*hub.Token, error) {
	t, err := scanToken(d.q.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE id = ?`, id))
	return t, dbErr("token", err)
}

func (d queries) Tokens(ctx context.Context, userID, agentID string) ([]*hub.Token, error) {
	return queryAll(ctx, d.q, "tokens", scanToken, `SELECT `+tokenCols+` FROM tokens WHERE user_id = ? AND (? = '' OR agent_id = ?) AND grant_id = '' ORDER BY created_at, id`, userID, agentID, agentID)
}

func (d queries) InsertToken(ctx context.Context, t *hub.Token) error {
	return d.exec(ctx, "insert token", `INSERT INTO tokens (id, hash, user_id, agent_id, name, scopes, created_at, expires_at, grant_id, resource) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Hash, t.UserID, nullString(t.AgentID), t.Name, strings.Join(t.Scopes, " "), ms(t.CreatedAt), ms(t.ExpiresAt), t.GrantID, t.Resource)
}

func (d queries) RevokeToken(ctx context.Context, id string, at time.Time) error {
	return d.execOne(ctx, "revoke token", `UPDATE tokens SET revoked_at = ? WHERE id = ?`, ms(at), id)
}

func (d queries) UseToken(ctx context.Context, id string, at time.Time, successor []byte) error {
	return d.execOne(ctx, "use token", `UPDATE tokens SET revoked_at = ?, successor = ? WHERE id = ? AND revoked_at IS NULL`, ms(at), successor, id)
}

func (d queries) ForgetSuccessors(ctx context.Context, grantID string, usedBefore time.Time) error {
	return d.exec(ctx, "forget token successors", `UPDATE tokens SET successor = NULL WHERE grant_id = ? AND successor IS NOT NULL AND revoked_at < ?`, grantID, ms(usedBefore))
}

func (d queries) TouchToken(ctx context.Context, id string, at time.Time) error {
	return d.exec(ctx, "touch token", `UPDATE tokens SET last_used_at = ? WHERE id = ?`, ms(at), id)
}

func (d queries) RevokeAgentTokens(ctx context.Context, agentID string, at time.Time) error {
	if err := d.exec(ctx, "revoke agent tokens", `UPDATE tokens SET revoked_at = ? WHERE agent_id = ? AND revoked_at IS NULL`, ms(at), agentID); err != nil {
		return err
	}
	return d.exec(ctx, "revoke agent oauth grants", `UPDATE oauth_grants SET revoked_at = ? WHERE agent_id = ? AND revoked_at IS NULL`, ms(at), agentID)
}
