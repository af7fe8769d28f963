package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// What the Bridge reads (§11): a person's latest events of some types, and
// the paused conversations their agents are in.

func (d queries) RecentEvents(ctx context.Context, recipientID string, upTo int64, types []string, limit int) ([]*hub.Event, error) {
	args := []any{recipientID, upTo}
	for _, t := range types {
		args = append(args, t)
	}
	args = append(args, limit)
	rows, err := d.q.QueryContext(ctx, `SELECT id, type, conversation_id, message_id, data, created_at FROM events
		WHERE recipient_id = ? AND id <= ? AND type IN (?`+strings.Repeat(", ?", len(types)-1)+`) ORDER BY id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, dbErr("recent events", err)
	}
	defer rows.Close()
	var out []*hub.Event
	var msgIDs []any
	for rows.Next() {
		e := &hub.Event{RecipientID: recipientID}
		var data sql.NullString
		var created sql.NullInt64
		if err := rows.Scan(&e.ID, &e.Type, &e.ConversationID, &e.MessageID, &data, &created); err != nil {
			return nil, dbErr("recent events", err)
		}
		if data.Valid {
			e.Data = json.RawMessage(data.String)
		}
		e.CreatedAt = fromMS(created)
		if e.MessageID != "" {
			msgIDs = append(msgIDs, e.MessageID)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil || len(msgIDs) == 0 {
		return out, dbErr("recent events", err)
	}
	rows.Close()
	msgs, err := d.messagesByID(ctx, msgIDs)
	if err != nil {
		return nil, err
	}
	for _, e := range out {
		e.Message = msgs[e.MessageID]
	}
	return out, nil
}

func (d queries) PausedConversations(ctx context.Context, ownerID string) ([]*hub.Conversation, error) {
	return queryAll(ctx, d.q, "paused conversations", scanConversation, `SELECT `+convCols+` FROM conversations
		WHERE status = 'open' AND paused_at IS NOT NULL
		AND id IN (SELECT conversation_id FROM participants WHERE owner_id = ? AND left_at IS NULL)
		ORDER BY paused_at DESC, id DESC`, ownerID)
}
