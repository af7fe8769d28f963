package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Permission requests a channel relays to an agent's owner (§19).

const permissionCols = `p.id, p.agent_id, u.handle || '/' || a.slug, p.owner_id, p.instance, p.request_id, p.tool_name,
	p.description, p.input_preview, p.status, p.decided_by, p.created_at, p.decided_at`

const permissionFrom = ` FROM permissions p JOIN agents a ON a.id = p.agent_id JOIN users u ON u.id = a.owner_id`

func scanPermission(row scanner) (*hub.Permission, error) {
	var p hub.Permission
	var created, decided sql.NullInt64
	if err := row.Scan(&p.ID, &p.AgentID, &p.AgentHandle, &p.OwnerID, &p.Instance, &p.RequestID, &p.ToolName,
		&p.Description, &p.InputPreview, &p.Status, &p.DecidedBy, &created, &decided); err != nil {
		return nil, err
	}
	p.CreatedAt, p.DecidedAt = fromMS(created), fromMS(decided)
	return &p, nil
}

func (d queries) Permission(ctx context.Context, id string) (*hub.Permission, error) {
	p, err := scanPermission(d.q.QueryRowContext(ctx, `SELECT `+permissionCols+permissionFrom+` WHERE p.id = ?`, id))
	return p, dbErr("permission", err)
}

func (d queries) PendingPermissions(ctx context.Context, ownerID string) ([]*hub.Permission, error) {
	return queryAll(ctx, d.q, "pending permissions", scanPermission, `SELECT `+permissionCols+permissionFrom+`
		WHERE p.owner_id = ? AND p.status = ? ORDER BY p.created_at, p.id`, ownerID, hub.PermissionPending)
}

func (d queries) EndedPermissions(ctx context.Context, ownerID string, since time.Time) ([]*hub.Permission, error) {
	return queryAll(ctx, d.q, "ended permissions", scanPermission, `SELECT `+permissionCols+permissionFrom+`
		WHERE p.owner_id = ? AND p.status IN (?, ?) AND p.decided_at >= ? ORDER BY p.decided_at DESC, p.id DESC`,
		ownerID, hub.PermissionExpired, hub.PermissionWithdrawn, since.UnixMilli())
}

func (d queries) InsertPermission(ctx context.Context, p *hub.Permission) error {
	return d.exec(ctx, "insert permission", `INSERT INTO permissions (id, agent_id, owner_id, instance, request_id, tool_name,
		description, input_preview, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.AgentID, p.OwnerID, p.Instance, p.RequestID, p.ToolName, p.Description, p.InputPreview, p.Status, ms(p.CreatedAt))
}

func (d queries) EndPermission(ctx context.Context, id, status, by string, at time.Time) error {
	return d.execOne(ctx, "end permission", `UPDATE permissions SET status = ?, decided_by = ?, decided_at = ?
		WHERE id = ? AND status = ?`, status, by, ms(at), id, hub.PermissionPending)
}
