package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Inbound asks (§3): another owner's agent asking a person to be let in.

const inboundCols = `id, agent_id, user_id, handles, status, created_at, decided_at`

func scanInbound(row scanner) (*hub.InboundAsk, error) {
	var a hub.InboundAsk
	var handles string
	var created, decided sql.NullInt64
	if err := row.Scan(&a.ID, &a.AgentID, &a.UserID, &handles, &a.Status, &created, &decided); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(handles), &a.Handles); err != nil {
		return nil, err
	}
	a.CreatedAt, a.DecidedAt = fromMS(created), fromMS(decided)
	return &a, nil
}

func (d queries) InboundAsk(ctx context.Context, agentID, userID string) (*hub.InboundAsk, error) {
	a, err := scanInbound(d.q.QueryRowContext(ctx, `SELECT `+inboundCols+` FROM inbound_asks WHERE agent_id = ? AND user_id = ?`, agentID, userID))
	return a, dbErr("inbound ask", err)
}

func (d queries) InboundAskByID(ctx context.Context, id string) (*hub.InboundAsk, error) {
	a, err := scanInbound(d.q.QueryRowContext(ctx, `SELECT `+inboundCols+` FROM inbound_asks WHERE id = ?`, id))
	return a, dbErr("inbound ask", err)
}

func (d queries) InboundAsks(ctx context.Context, userID string, pending bool) ([]*hub.InboundAsk, error) {
	return queryAll(ctx, d.q, "inbound asks", scanInbound, `SELECT `+inboundCols+` FROM inbound_asks WHERE user_id = ? AND (status = 'pending' OR NOT ?)
		ORDER BY created_at, id`, userID, pending)
}

func (d queries) DeleteInboundAsk(ctx context.Context, id string) error {
	return d.exec(ctx, "delete inbound ask", `DELETE FROM inbound_asks WHERE id = ?`, id)
}

func (d queries) PutInboundAsk(ctx context.Context, a *hub.InboundAsk) error {
	handles, err := json.Marshal(a.Handles)
	if err != nil {
		return err
	}
	return d.exec(ctx, "put inbound ask", `INSERT INTO inbound_asks (`+inboundCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent_id, user_id) DO UPDATE SET handles = excluded.handles, status = excluded.status,
		created_at = excluded.created_at, decided_at = excluded.decided_at`,
		a.ID, a.AgentID, a.UserID, string(handles), a.Status, ms(a.CreatedAt), ms(a.DecidedAt))
}

func (d queries) SetInboundAskStatus(ctx context.Context, id, status string, at time.Time) (bool, error) {
	res, err := d.q.ExecContext(ctx, `UPDATE inbound_asks SET status = ?, decided_at = ? WHERE id = ? AND status <> ?`, status, ms(at), id, status)
	if err != nil {
		return false, dbErr("decide inbound ask", err)
	}
	n, err := res.RowsAffected()
	return n > 0, dbErr("decide inbound ask", err)
}
