package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Owners' grants to their agents, and agents' requests for them (§3).

const grantCols = `agent_id, contact_id, allow_human, allow_agents, decided_by, updated_at`

func scanGrant(row scanner) (*hub.Grant, error) {
	var g hub.Grant
	var at sql.NullInt64
	if err := row.Scan(&g.AgentID, &g.ContactID, &g.AllowHuman, &g.AllowAgents, &g.DecidedBy, &at); err != nil {
		return nil, err
	}
	g.UpdatedAt = fromMS(at)
	return &g, nil
}

func (d queries) Grant(ctx context.Context, agentID, contactID string) (*hub.Grant, error) {
	g, err := scanGrant(d.q.QueryRowContext(ctx, `SELECT `+grantCols+` FROM grants WHERE agent_id = ? AND contact_id = ?`, agentID, contactID))
	return g, dbErr("grant", err)
}

func (d queries) GrantsOf(ctx context.Context, agentID string) ([]*hub.Grant, error) {
	return queryAll(ctx, d.q, "grants of", scanGrant, `SELECT `+grantCols+` FROM grants WHERE agent_id = ? ORDER BY updated_at`, agentID)
}

func (d queries) PutGrant(ctx context.Context, g *hub.Grant) error {
	return d.exec(ctx, "put grant", `INSERT INTO grants (`+grantCols+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent_id, contact_id) DO UPDATE SET allow_human = excluded.allow_human, allow_agents = excluded.allow_agents,
		decided_by = excluded.decided_by, updated_at = excluded.updated_at`,
		g.AgentID, g.ContactID, g.AllowHuman, g.AllowAgents, g.DecidedBy, ms(g.UpdatedAt))
}

const grantRequestCols = `id, agent_id, owner_id, contact_id, allow_human, allow_agents, reason, status, created_at, decided_at`

// grantRequestSelect reads requests with their contact's handle.
const grantRequestSelect = `SELECT r.id, r.agent_id, r.owner_id, r.contact_id, r.allow_human, r.allow_agents, r.reason, r.status,
	r.created_at, r.decided_at, u.handle FROM grant_requests r JOIN users u ON u.id = r.contact_id`

func scanGrantRequest(row scanner) (*hub.GrantRequest, error) {
	var r hub.GrantRequest
	var created, decided sql.NullInt64
	if err := row.Scan(&r.ID, &r.AgentID, &r.OwnerID, &r.ContactID, &r.AllowHuman, &r.AllowAgents, &r.Reason, &r.Status, &created, &decided, &r.ContactHandle); err != nil {
		return nil, err
	}
	r.CreatedAt, r.DecidedAt = fromMS(created), fromMS(decided)
	return &r, nil
}

func (d queries) GrantRequest(ctx context.Context, id string) (*hub.GrantRequest, error) {
	r, err := scanGrantRequest(d.q.QueryRowContext(ctx, grantRequestSelect+` WHERE r.id = ?`, id))
	return r, dbErr("grant request", err)
}

func (d queries) GrantRequests(ctx context.Context, ownerID, agentID string) ([]*hub.GrantRequest, error) {
	return queryAll(ctx, d.q, "grant requests", scanGrantRequest, grantRequestSelect+`
		WHERE r.status = 'pending' AND (? = '' OR r.owner_id = ?) AND (? = '' OR r.agent_id = ?) ORDER BY r.created_at, r.id`, ownerID, ownerID, agentID, agentID)
}

func (d queries) AgentGrantRequests(ctx context.Context, agentID string) ([]*hub.GrantRequest, error) {
	return queryAll(ctx, d.q, "agent grant requests", scanGrantRequest, grantRequestSelect+`
		WHERE r.agent_id = ? ORDER BY r.created_at, r.id`, agentID)
}

func (d queries) InsertGrantRequest(ctx context.Context, r *hub.GrantRequest) error {
	return d.exec(ctx, "insert grant request", `INSERT INTO grant_requests (`+grantRequestCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.AgentID, r.OwnerID, r.ContactID, r.AllowHuman, r.AllowAgents, r.Reason, r.Status, ms(r.CreatedAt), ms(r.DecidedAt))
}

func (d queries) DecideGrantRequest(ctx context.Context, id, status string, at time.Time) error {
	return d.execOne(ctx, "decide grant request", `UPDATE grant_requests SET status = ?, decided_at = ? WHERE id = ? AND status = 'pending'`, status, ms(at), id)
}
