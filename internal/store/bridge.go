package store

import (
	"context"
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
	return d.eventsWithMessages(ctx, "recent events", recipientID, `SELECT id, type, conversation_id, message_id, data, created_at FROM events
		WHERE recipient_id = ? AND id <= ? AND type IN (?`+strings.Repeat(", ?", len(types)-1)+`) ORDER BY id DESC LIMIT ?`, args...)
}

func (d queries) PausedConversations(ctx context.Context, ownerID string) ([]*hub.Conversation, error) {
	return queryAll(ctx, d.q, "paused conversations", scanConversation, `SELECT `+convCols+` FROM conversations
		WHERE status = 'open' AND paused_at IS NOT NULL
		AND id IN (SELECT conversation_id FROM participants WHERE owner_id = ? AND left_at IS NULL)
		ORDER BY paused_at DESC, id DESC`, ownerID)
}
