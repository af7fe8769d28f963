package store

import (
	"context"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Rooms (§10.5): an agent's work in one conversation by processing state,
// and the context it rehydrates from.

func (d queries) Work(ctx context.Context, agentID, conversationID string, states []string, offset, limit int) ([]hub.InboxItem, int, error) {
	from := ` FROM deliveries d JOIN messages m ON m.id = d.message_id
		WHERE d.agent_id = ? AND d.conversation_id = ? AND d.state IN (?` + strings.Repeat(", ?", len(states)-1) + `)`
	args := []any{agentID, conversationID}
	for _, s := range states {
		args = append(args, s)
	}
	var total int
	if err := d.q.QueryRowContext(ctx, `SELECT COUNT(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, dbErr("work count", err)
	}
	if total <= offset {
		return nil, total, nil
	}
	items, err := queryAll(ctx, d.q, "work", func(row scanner) (hub.InboxItem, error) {
		var dd deliveryDest
		var msg scanTail
		err := row.Scan(append(dd.dest(), msg.dest()...)...)
		return hub.InboxItem{Delivery: dd.done(), Message: msg.message()}, err
	}, `SELECT `+deliveryCols+`, `+msgCols("m")+from+` ORDER BY d.id LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	return items, total, err
}

func (d queries) ChatContext(ctx context.Context, conversationID, agentID, handle string, offset, limit int) ([]*hub.Message, int, error) {
	// Mentions are stored space-separated, and a handle holds no space.
	from := ` FROM messages m WHERE m.conversation_id = ? AND m.status = '` + hub.MessageSent + `'
		AND (m.sender_id = ? OR (m.kind = '` + hub.MessageText + `' AND ' ' || COALESCE(m.mentions, '') || ' ' LIKE ?))`
	args := []any{conversationID, agentID, "% " + handle + " %"}
	var total int
	if err := d.q.QueryRowContext(ctx, `SELECT COUNT(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, dbErr("chat context count", err)
	}
	if total <= offset {
		return nil, total, nil
	}
	msgs, err := queryAll(ctx, d.q, "chat context", scanMessage, `SELECT `+msgCols("m")+from+` ORDER BY m.seq LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	return msgs, total, err
}

func (d queries) MessagesWhere(ctx context.Context, conversationID, kind string, since time.Time, offset, limit int) ([]*hub.Message, int, error) {
	from := ` FROM messages m WHERE m.conversation_id = ? AND m.status = '` + hub.MessageSent + `'`
	args := []any{conversationID}
	if kind != "" {
		from += ` AND m.kind = ?`
		args = append(args, kind)
	}
	if !since.IsZero() {
		from += ` AND m.created_at > ?`
		args = append(args, ms(since))
	}
	var total int
	if err := d.q.QueryRowContext(ctx, `SELECT COUNT(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, dbErr("messages count", err)
	}
	if total <= offset {
		return nil, total, nil
	}
	msgs, err := queryAll(ctx, d.q, "messages", scanMessage, `SELECT `+msgCols("m")+from+` ORDER BY m.seq LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	return msgs, total, err
}
