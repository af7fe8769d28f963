package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Agents (§1): each with its owner's handle, read in the same query.

const agentCols = `a.id, a.owner_id, u.handle, a.slug, a.name, a.description, a.goal, a.mode, a.public, a.archived_at, a.created_at`

const agentFrom = ` FROM agents a JOIN users u ON u.id = a.owner_id`

func scanAgent(row scanner) (*hub.Agent, error) {
	var a hub.Agent
	var archived, created sql.NullInt64
	if err := row.Scan(&a.ID, &a.OwnerID, &a.OwnerHandle, &a.Slug, &a.Name, &a.Description, &a.Goal, &a.Mode, &a.Public, &archived, &created); err != nil {
		return nil, err
	}
	a.ArchivedAt, a.CreatedAt = fromMS(archived), fromMS(created)
	return &a, nil
}

func (d queries) AgentByID(ctx context.Context, id string) (*hub.Agent, error) {
	a, err := scanAgent(d.q.QueryRowContext(ctx, `SELECT `+agentCols+agentFrom+` WHERE a.id = ?`, id))
	return a, dbErr("agent", err)
}

func (d queries) AgentByHandle(ctx context.Context, owner, slug string) (*hub.Agent, error) {
	a, err := scanAgent(d.q.QueryRowContext(ctx, `SELECT `+agentCols+agentFrom+` WHERE u.handle = ? AND a.slug = ?`, owner, slug))
	return a, dbErr("agent by handle", err)
}

func (d queries) Agents(ctx context.Context, ownerID string, includeArchived bool) ([]*hub.Agent, error) {
	return queryAll(ctx, d.q, "agents", scanAgent, `SELECT `+agentCols+agentFrom+` WHERE (? = '' OR a.owner_id = ?) AND (? OR a.archived_at IS NULL) ORDER BY u.handle, a.created_at, a.id`, ownerID, ownerID, includeArchived)
}

// PublicAgents reads the few public agents by the partial index
// agents_public, whose predicate the WHERE clause repeats.
func (d queries) PublicAgents(ctx context.Context) ([]*hub.Agent, error) {
	return queryAll(ctx, d.q, "public agents", scanAgent, `SELECT `+agentCols+agentFrom+` WHERE a.public AND a.archived_at IS NULL ORDER BY u.handle, a.slug`)
}

func (d queries) InsertAgent(ctx context.Context, a *hub.Agent) error {
	return d.exec(ctx, "insert agent", `INSERT INTO agents (id, owner_id, slug, name, description, goal, mode, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.OwnerID, a.Slug, a.Name, a.Description, a.Goal, a.Mode, ms(a.CreatedAt))
}

func (d queries) SetAgentArchived(ctx context.Context, agentID string, at time.Time) error {
	return d.execOne(ctx, "archive agent", `UPDATE agents SET archived_at = ? WHERE id = ?`, ms(at), agentID)
}

func (d queries) SetAgentMode(ctx context.Context, agentID, mode string) error {
	return d.execOne(ctx, "set agent mode", `UPDATE agents SET mode = ? WHERE id = ?`, mode, agentID)
}

func (d queries) SetAgentPublic(ctx context.Context, agentID string, public bool) error {
	return d.execOne(ctx, "set agent public", `UPDATE agents SET public = ? WHERE id = ?`, public, agentID)
}
