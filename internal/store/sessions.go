package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// An agent's named sessions (§5): their names, the conversations they
// hold, and every principal's place in a conversation (reads).

func (d queries) Instances(ctx context.Context, agentID string) ([]hub.Instance, error) {
	return queryAll(ctx, d.q, "instances", func(row scanner) (hub.Instance, error) {
		var i hub.Instance
		var seen sql.NullInt64
		err := row.Scan(&i.Name, &i.Note, &seen)
		i.LastSeen = fromMS(seen)
		return i, err
	}, `SELECT name, note, last_seen_at FROM instances WHERE agent_id = ? ORDER BY last_seen_at DESC, name`, agentID)
}

func (d queries) UpsertInstance(ctx context.Context, agentID, name, note string, at time.Time) error {
	return d.exec(ctx, "upsert instance", `INSERT INTO instances (agent_id, name, note, last_seen_at, first_seen_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (agent_id, name) DO UPDATE SET last_seen_at = excluded.last_seen_at,
		note = CASE WHEN excluded.note = '' THEN instances.note ELSE excluded.note END`, agentID, name, note, ms(at), ms(at))
}

func (d queries) DeleteInstance(ctx context.Context, agentID, name string) error {
	return d.exec(ctx, "delete instance", `DELETE FROM instances WHERE agent_id = ? AND name = ?`, agentID, name)
}

const holdCols = `h.conversation_id, h.instance, h.since, i.last_seen_at FROM holds h
	LEFT JOIN instances i ON i.agent_id = h.agent_id AND i.name = h.instance`

func scanHold(row scanner) (hub.Hold, error) {
	var h hub.Hold
	var since, seen sql.NullInt64
	err := row.Scan(&h.ConversationID, &h.Instance, &since, &seen)
	h.Since, h.LastSeen = fromMS(since), fromMS(seen)
	return h, err
}

func (d queries) Holds(ctx context.Context, agentID string) ([]hub.Hold, error) {
	return queryAll(ctx, d.q, "holds", scanHold, `SELECT `+holdCols+` WHERE h.agent_id = ?`, agentID)
}

func (d queries) Hold(ctx context.Context, agentID, conversationID string) (hub.Hold, error) {
	h, err := scanHold(d.q.QueryRowContext(ctx, `SELECT `+holdCols+` WHERE h.agent_id = ? AND h.conversation_id = ?`, agentID, conversationID))
	return h, dbErr("hold", err)
}

func (d queries) SetHold(ctx context.Context, agentID, conversationID, instance string, at time.Time) error {
	return d.exec(ctx, "set hold", `INSERT INTO holds (agent_id, conversation_id, instance, since) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent_id, conversation_id) DO UPDATE SET instance = excluded.instance, since = excluded.since`,
		agentID, conversationID, instance, ms(at))
}

func (d queries) Unread(ctx context.Context, conversationID, principalID string) (int, error) {
	var n int
	err := d.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE conversation_id = ? AND sender_id <> ? AND seq >
		COALESCE((SELECT last_read_seq FROM reads WHERE conversation_id = ? AND principal_id = ? AND instance = ''), 0)`,
		conversationID, principalID, conversationID, principalID).Scan(&n)
	return n, dbErr("unread", err)
}

func (d queries) Reads(ctx context.Context, conversationID string) ([]hub.Read, error) {
	return queryAll(ctx, d.q, "reads", func(row scanner) (hub.Read, error) {
		var r hub.Read
		var updated sql.NullInt64
		err := row.Scan(&r.PrincipalID, &r.Handle, &r.Instance, &r.LastReadSeq, &updated)
		r.UpdatedAt = fromMS(updated)
		return r, err
	}, `SELECT r.principal_id, CASE WHEN a.id IS NOT NULL THEN ou.handle || '/' || a.slug ELSE COALESCE(pu.handle, '') END,
			r.instance, r.last_read_seq, r.updated_at
		FROM reads r
		LEFT JOIN agents a ON a.id = r.principal_id
		LEFT JOIN users ou ON ou.id = a.owner_id
		LEFT JOIN users pu ON pu.id = r.principal_id
		WHERE r.conversation_id = ? ORDER BY 2, r.instance`, conversationID)
}

func (d queries) MoveRead(ctx context.Context, conversationID, principalID, instance string, seq int64, forward bool, at time.Time) error {
	if !forward {
		return d.exec(ctx, "move read back", `UPDATE reads SET last_read_seq = ?, updated_at = ?
			WHERE conversation_id = ? AND principal_id = ? AND instance = ? AND last_read_seq > ?`,
			seq, ms(at), conversationID, principalID, instance, seq)
	}
	return d.exec(ctx, "move read", `INSERT INTO reads (conversation_id, principal_id, instance, last_read_seq, updated_at) VALUES (?, ?, ?, ?, ?)`+readForward,
		conversationID, principalID, instance, seq, ms(at))
}

// readForward ends an INSERT of a place in reads: one already there moves
// only forward.
const readForward = `
		ON CONFLICT (conversation_id, principal_id, instance) DO UPDATE SET last_read_seq = excluded.last_read_seq, updated_at = excluded.updated_at
		WHERE excluded.last_read_seq > reads.last_read_seq`
