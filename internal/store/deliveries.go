package store

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Deliveries (§5): one row per recipient agent and message; the inbox.

const deliveryCols = `d.message_id, d.agent_id, d.state, d.attempts, d.error, d.started_at, d.fetched_at, d.acked_at`

// deliveryDest is where a row's delivery columns (deliveryCols) scan to;
// done finishes the times.
type deliveryDest struct {
	d                       hub.Delivery
	started, fetched, acked sql.NullInt64
}

func (d *deliveryDest) dest() []any {
	dl := &d.d
	return []any{&dl.MessageID, &dl.AgentID, &dl.State, &dl.Attempts, &dl.Error, &d.started, &d.fetched, &d.acked}
}

func (d *deliveryDest) done() hub.Delivery {
	d.d.StartedAt, d.d.FetchedAt, d.d.AckedAt = fromMS(d.started), fromMS(d.fetched), fromMS(d.acked)
	return d.d
}

func (d queries) Delivery(ctx context.Context, agentID, messageID string) (*hub.Delivery, error) {
	var dd deliveryDest
	err := d.q.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM deliveries d WHERE d.agent_id = ? AND d.message_id = ?`, agentID, messageID).Scan(dd.dest()...)
	if err != nil {
		return nil, dbErr("delivery", err)
	}
	dl := dd.done()
	return &dl, nil
}

// inboxSQL is the inbox's two statements (§5): how many wait, and the
// rows — stuck attempts first (oldest first, through their own index),
// then every waiting delivery in order, in one statement. Each has a form
// for the agent and one for a named session.
type inboxSQL struct{ count, rows string }

var inboxQueries = func() [2]inboxSQL {
	// Each waiting delivery looks up its conversation: the cost follows the
	// inbox, not how many conversations there are. Without a session the
	// count needs neither the message nor its hold.
	waiting := ` FROM deliveries d JOIN conversations c ON c.id = d.conversation_id AND c.status <> 'closed'`
	where := ` WHERE d.agent_id = ? AND d.acked_at IS NULL`
	from := waiting + ` JOIN messages m ON m.id = d.message_id
		LEFT JOIN holds h ON h.agent_id = d.agent_id AND h.conversation_id = d.conversation_id
		LEFT JOIN instances hi ON hi.agent_id = h.agent_id AND hi.name = h.instance` + where
	session := ` AND (m.to_instance = ? OR (m.to_instance = '' AND
			(h.instance IS NULL OR h.instance = ? OR hi.last_seen_at IS NULL OR hi.last_seen_at <= ?)))`
	rows := func(from string) string {
		sel := `, ` + deliveryCols + `, CASE WHEN hi.last_seen_at > ? THEN h.instance ELSE '' END, ` + msgCols("m") + from
		return `SELECT * FROM (SELECT 0 AS part, d.started_at AS k, d.id AS i` + sel + ` AND d.state = 'processing' AND d.started_at <= ? ORDER BY d.started_at, d.id LIMIT ?) AS stuck
			UNION ALL SELECT * FROM (SELECT 1, 0, d.id` + sel + ` ORDER BY d.id LIMIT ?) AS waiting
			ORDER BY part, k, i`
	}
	return [2]inboxSQL{
		{count: `SELECT COUNT(*)` + waiting + where, rows: rows(from)},
		{count: `SELECT COUNT(*)` + from + session, rows: rows(from + session)},
	}
}()

func (d queries) Inbox(ctx context.Context, agentID string, f hub.SessionFilter, limit int) ([]hub.InboxItem, int, error) {
	q, args := inboxQueries[0], []any{agentID}
	if f.Instance != "" {
		q, args = inboxQueries[1], []any{agentID, f.Instance, f.Instance, ms(f.LiveSince)}
	}
	var total int
	if err := d.q.QueryRowContext(ctx, q.count, args...).Scan(&total); err != nil {
		return nil, 0, dbErr("inbox count", err)
	}
	if total == 0 {
		return nil, 0, nil
	}
	part := append([]any{ms(f.LiveSince)}, args...)
	scan := func(row scanner) (hub.InboxItem, error) {
		var it hub.InboxItem
		var dd deliveryDest
		var msg scanTail
		var part, k, i int64
		err := row.Scan(append(append(append([]any{&part, &k, &i}, dd.dest()...), &it.HeldBy), msg.dest()...)...)
		it.Delivery, it.Message = dd.done(), msg.message()
		return it, err
	}
	// The statement gives the first limit stuck rows, then the first limit
	// waiting ones, where a stuck row comes again: each repeat stands for
	// one waiting row, so the page still fills.
	all := append(append(append(slices.Clip(part), ms(f.StuckSince), limit), part...), limit)
	rows, err := queryAll(ctx, d.q, "inbox", scan, q.rows, all...)
	if err != nil {
		return nil, 0, err
	}
	items := rows[:0]
	seen := make(map[string]bool, len(rows))
	for _, it := range rows {
		if !seen[it.Delivery.MessageID] && len(items) < limit {
			seen[it.Delivery.MessageID] = true
			items = append(items, it)
		}
	}
	return items, total, nil
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

func (d queries) UnmarkFetched(ctx context.Context, agentID, conversationID string, fromSeq int64) error {
	return d.exec(ctx, "unmark fetched", `UPDATE deliveries SET fetched_at = NULL
		WHERE agent_id = ? AND acked_at IS NULL AND conversation_id = ? AND fetched_at IS NOT NULL
			AND message_id IN (SELECT id FROM messages WHERE conversation_id = ? AND seq >= ?)`, agentID, conversationID, conversationID, fromSeq)
}

func (d queries) SetDeliveryState(ctx context.Context, dl *hub.Delivery) error {
	return d.execOne(ctx, "set delivery state", `UPDATE deliveries SET state = ?, attempts = ?, error = ?, started_at = ?, acked_at = ?
		WHERE agent_id = ? AND message_id = ?`, dl.State, dl.Attempts, dl.Error, ms(dl.StartedAt), ms(dl.AckedAt), dl.AgentID, dl.MessageID)
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
