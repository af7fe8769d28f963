package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Deliveries (§5): one row per recipient agent and message; the inbox.

const deliveryCols = `d.message_id, d.agent_id, d.state, d.attempts, d.error, d.fetched_at, d.acked_at`

func scanDelivery(dst *hub.Delivery, fetched, acked *sql.NullInt64) []any {
	return []any{&dst.MessageID, &dst.AgentID, &dst.State, &dst.Attempts, &dst.Error, fetched, acked}
}

func (d queries) Delivery(ctx context.Context, agentID, messageID string) (*hub.Delivery, error) {
	var dl hub.Delivery
	var fetched, acked sql.NullInt64
	err := d.q.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM deliveries d WHERE d.agent_id = ? AND d.message_id = ?`, agentID, messageID).
		Scan(scanDelivery(&dl, &fetched, &acked)...)
	if err != nil {
		return nil, dbErr("delivery", err)
	}
	dl.FetchedAt, dl.AckedAt = fromMS(fetched), fromMS(acked)
	return &dl, nil
}

func (d queries) Inbox(ctx context.Context, agentID string, f hub.SessionFilter, limit int) ([]hub.InboxItem, int, error) {
	// Each waiting delivery looks up its conversation: the cost follows the
	// inbox, not how many conversations there are. Without a session the
	// count needs neither the message nor its hold.
	waiting := ` FROM deliveries d JOIN conversations c ON c.id = d.conversation_id AND c.status <> 'closed'`
	where := ` WHERE d.agent_id = ? AND d.acked_at IS NULL`
	from := waiting + ` JOIN messages m ON m.id = d.message_id
		LEFT JOIN holds h ON h.agent_id = d.agent_id AND h.conversation_id = d.conversation_id
		LEFT JOIN instances hi ON hi.agent_id = h.agent_id AND hi.name = h.instance` + where
	count := waiting + where
	args := []any{agentID}
	if f.Instance != "" {
		from += ` AND (m.to_instance = ? OR (m.to_instance = '' AND
			(h.instance IS NULL OR h.instance = ? OR hi.last_seen_at IS NULL OR hi.last_seen_at <= ?)))`
		count = from
		args = append(args, f.Instance, f.Instance, ms(f.LiveSince))
	}
	var total int
	if err := d.q.QueryRowContext(ctx, `SELECT COUNT(*)`+count, args...).Scan(&total); err != nil {
		return nil, 0, dbErr("inbox count", err)
	}
	if total == 0 {
		return nil, 0, nil
	}
	heldBy := `CASE WHEN hi.last_seen_at > ? THEN h.instance ELSE '' END`
	items, err := queryAll(ctx, d.q, "inbox", func(row scanner) (hub.InboxItem, error) {
		var it hub.InboxItem
		var fetched, acked sql.NullInt64
		var msg scanTail
		err := row.Scan(append(append(scanDelivery(&it.Delivery, &fetched, &acked), &it.HeldBy), msg.dest()...)...)
		it.Delivery.FetchedAt, it.Delivery.AckedAt = fromMS(fetched), fromMS(acked)
		it.Message = msg.message()
		return it, err
	}, `SELECT `+deliveryCols+", "+heldBy+", "+msgCols("m")+from+` ORDER BY d.id LIMIT ?`,
		append(append([]any{ms(f.LiveSince)}, args...), limit)...)
	return items, total, err
}

func (d queries) SiblingWords(ctx context.Context, agentID, instance string, limit int) ([]*hub.Message, int, error) {
	from := ` FROM messages m
		JOIN conversations c ON c.id = m.conversation_id
		JOIN participants p ON p.conversation_id = m.conversation_id AND p.principal_id = m.sender_id AND p.left_at IS NULL
		JOIN instances i ON i.agent_id = m.sender_id AND i.name = ?
		LEFT JOIN reads r ON r.conversation_id = m.conversation_id AND r.principal_id = m.sender_id AND r.instance = i.name
		WHERE m.sender_id = ? AND m.sender_instance <> i.name AND m.sender_instance <> '' AND m.created_at >= i.first_seen_at
			AND c.kind <> 'direct' AND c.status <> 'closed'
			AND m.seq > COALESCE(r.last_read_seq, 0) AND (m.to_instance = '' OR m.to_instance = i.name)`
	args := []any{instance, agentID}
	var total int
	if err := d.q.QueryRowContext(ctx, `SELECT COUNT(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, dbErr("sibling words count", err)
	}
	if total == 0 {
		return nil, 0, nil
	}
	msgs, err := queryAll(ctx, d.q, "sibling words", scanMessage, `SELECT `+msgCols("m")+from+` ORDER BY m.created_at, m.id LIMIT ?`, append(args, limit)...)
	return msgs, total, err
}

func (d queries) InsertDeliveries(ctx context.Context, m *hub.Message, agentIDs []string) error {
	for rows := range slices.Chunk(agentIDs, rowsPerInsert) {
		args := make([]any, 0, 3*len(rows))
		for _, id := range rows {
			args = append(args, m.ID, id, m.ConversationID)
		}
		if err := d.exec(ctx, "insert deliveries", `INSERT INTO deliveries (message_id, agent_id, conversation_id) VALUES `+valueRows(len(rows), 3), args...); err != nil {
			return err
		}
	}
	return nil
}

func (d queries) MarkFetched(ctx context.Context, agentID string, messageIDs []string, at time.Time) error {
	for _, id := range messageIDs {
		if err := d.exec(ctx, "mark fetched", `UPDATE deliveries SET fetched_at = ? WHERE agent_id = ? AND message_id = ? AND fetched_at IS NULL`, ms(at), agentID, id); err != nil {
			return err
		}
	}
	return nil
}

func (d queries) SetDeliveryState(ctx context.Context, agentID, messageID, state, errText string, at time.Time) error {
	switch state {
	case hub.DeliveryDone:
		return d.execOne(ctx, "acknowledge", `UPDATE deliveries SET state = ?, acked_at = ? WHERE agent_id = ? AND message_id = ?`, state, ms(at), agentID, messageID)
	case hub.DeliveryFailed:
		return d.execOne(ctx, "record failure", `UPDATE deliveries SET state = ?, attempts = attempts + 1, error = ? WHERE agent_id = ? AND message_id = ?`, state, errText, agentID, messageID)
	}
	return fmt.Errorf("set delivery state: unknown state %q", state)
}

func (d queries) WithdrawDeliveries(ctx context.Context, agentID, conversationID string, at time.Time) ([]string, error) {
	ids, err := queryAll(ctx, d.q, "withdraw deliveries", func(row scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `UPDATE deliveries SET state = '`+hub.DeliveryWithdrawn+`', acked_at = ?
		WHERE agent_id = ? AND conversation_id = ? AND acked_at IS NULL RETURNING message_id`, ms(at), agentID, conversationID)
	slices.Sort(ids)
	return ids, err
}
