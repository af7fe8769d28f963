package store

import (
	"context"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// What the Bridge reads (§11): a person's latest events of some types, and
// the paused conversations their agents are in.

func (d queries) RecentEvents(ctx context.Context, recipientID string, upTo hub.Pos, types []string, limit int) ([]*hub.Event, error) {
	upto, args := d.dialect.eventsPast("<=", upTo)
	args = append([]any{recipientID}, args...)
	for _, t := range types {
		args = append(args, t)
	}
	args = append(args, limit)
	// Every event up to a latest position is below the horizon: none is
	// held back.
	events, _, err := d.eventsWithMessages(ctx, "recent events", recipientID, `SELECT `+eventCols+`, 0 = 1 FROM events
		WHERE recipient_id = ? AND `+upto+` AND type IN (?`+strings.Repeat(", ?", len(types)-1)+`) ORDER BY `+d.dialect.eventOrder(" DESC")+` LIMIT ?`, args...)
	return events, err
}

func (d queries) PausedConversations(ctx context.Context, ownerID string) ([]*hub.Conversation, error) {
	return queryAll(ctx, d.q, "paused conversations", scanConversation, `SELECT `+convCols+` FROM conversations
		WHERE status = 'open' AND paused_at IS NOT NULL
		AND id IN (SELECT conversation_id FROM participants WHERE owner_id = ? AND left_at IS NULL)
		ORDER BY paused_at DESC, id DESC`, ownerID)
}
