package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/palaverhq/palaver/internal/hub"
)

// A2A (§18): which agents their owners expose to A2A clients, with the
// skills their cards list, and which messages were A2A requests.

func (d queries) A2AExposure(ctx context.Context, agentID string) (*hub.A2AExposure, error) {
	e := hub.A2AExposure{AgentID: agentID}
	var skills string
	var updated sql.NullInt64
	err := d.q.QueryRowContext(ctx, `SELECT exposed, skills, updated_at FROM a2a_agents WHERE agent_id = ?`, agentID).Scan(&e.Exposed, &skills, &updated)
	if err != nil {
		return nil, dbErr("a2a exposure", err)
	}
	if err := json.Unmarshal([]byte(skills), &e.Skills); err != nil {
		return nil, fmt.Errorf("a2a exposure: skills of %s: %w", agentID, err)
	}
	e.UpdatedAt = fromMS(updated)
	return &e, nil
}

func (d queries) ExposedAgents(ctx context.Context, ownerID string) ([]*hub.Agent, error) {
	return queryAll(ctx, d.q, "exposed agents", scanAgent, `SELECT `+agentCols+agentFrom+` JOIN a2a_agents x ON x.agent_id = a.id
		WHERE a.owner_id = ? AND x.exposed AND a.archived_at IS NULL ORDER BY a.slug`, ownerID)
}

func (d queries) PutA2AExposure(ctx context.Context, e *hub.A2AExposure) error {
	skills := e.Skills
	if skills == nil {
		skills = []hub.Skill{}
	}
	b, err := json.Marshal(skills)
	if err != nil {
		return fmt.Errorf("put a2a exposure: %w", err)
	}
	return d.exec(ctx, "put a2a exposure", `INSERT INTO a2a_agents (agent_id, exposed, skills, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET exposed = excluded.exposed, skills = excluded.skills, updated_at = excluded.updated_at`,
		e.AgentID, e.Exposed, string(b), ms(e.UpdatedAt))
}

func (d queries) A2ARequest(ctx context.Context, messageID string) (*hub.A2ARequest, error) {
	var r hub.A2ARequest
	var created sql.NullInt64
	err := d.q.QueryRowContext(ctx, `SELECT message_id, agent_id, caller_id, conversation_id, created_at FROM a2a_tasks WHERE message_id = ?`, messageID).
		Scan(&r.MessageID, &r.AgentID, &r.CallerID, &r.ConversationID, &created)
	if err != nil {
		return nil, dbErr("a2a request", err)
	}
	r.CreatedAt = fromMS(created)
	return &r, nil
}

func (d queries) A2ACallers(ctx context.Context, conversationID, agentID string) ([]string, error) {
	return queryAll(ctx, d.q, "a2a callers", func(row scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT DISTINCT caller_id FROM a2a_tasks WHERE conversation_id = ? AND agent_id = ? ORDER BY caller_id`, conversationID, agentID)
}

func (d queries) InsertA2ARequest(ctx context.Context, r *hub.A2ARequest) error {
	return d.exec(ctx, "insert a2a request", `INSERT INTO a2a_tasks (message_id, agent_id, caller_id, conversation_id, created_at) VALUES (?, ?, ?, ?, ?)`,
		r.MessageID, r.AgentID, r.CallerID, r.ConversationID, ms(r.CreatedAt))
}

func (d queries) A2ARequestsFrom(ctx context.Context, callerID, agentID, conversationID string, before *hub.A2ARequest, limit int) ([]*hub.A2ARequest, int, error) {
	where, args := ` FROM a2a_tasks WHERE caller_id = ? AND agent_id = ?`, []any{callerID, agentID}
	if conversationID != "" {
		where += ` AND conversation_id = ?`
		args = append(args, conversationID)
	}
	var total int
	if err := d.q.QueryRowContext(ctx, `SELECT COUNT(*)`+where, args...).Scan(&total); err != nil {
		return nil, 0, dbErr("a2a requests from", err)
	}
	if before != nil {
		where += ` AND (created_at < ? OR (created_at = ? AND message_id < ?))`
		args = append(args, ms(before.CreatedAt), ms(before.CreatedAt), before.MessageID)
	}
	reqs, err := queryAll(ctx, d.q, "a2a requests from", func(row scanner) (*hub.A2ARequest, error) {
		var r hub.A2ARequest
		var created sql.NullInt64
		err := row.Scan(&r.MessageID, &r.AgentID, &r.CallerID, &r.ConversationID, &created)
		r.CreatedAt = fromMS(created)
		return &r, err
	}, `SELECT message_id, agent_id, caller_id, conversation_id, created_at`+where+` ORDER BY created_at DESC, message_id DESC LIMIT ?`, append(args, limit)...)
	return reqs, total, err
}
