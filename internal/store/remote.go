package store

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Remote A2A agents (§18): where each is, and the outbox of calls to them.

func (d queries) RemoteAgents(ctx context.Context, ownerID string) ([]*hub.RemoteAgent, error) {
	return queryAll(ctx, d.q, "remote agents", func(row scanner) (*hub.RemoteAgent, error) {
		var r hub.RemoteAgent
		var skills string
		var created, fetched, last sql.NullInt64
		err := row.Scan(&r.AgentID, &r.Handle, &r.CardURL, &r.HasCredential, &r.Name, &r.Description, &r.Provider, &skills,
			&r.Endpoint, &r.Version, &created, &fetched, &last, &r.LastError, &r.Pending)
		if skills != "" {
			r.Skills = strings.Split(skills, "\n")
		}
		r.CreatedAt, r.FetchedAt, r.LastAt = fromMS(created), fromMS(fetched), fromMS(last)
		_, r.Slug, _ = strings.Cut(r.Handle, "/")
		return &r, err
	}, `SELECT r.agent_id, u.handle || '/' || a.slug, r.card_url, r.credential <> '', r.name, r.description, r.provider, r.skills,
		r.endpoint, r.version, r.created_at, r.fetched_at, r.last_at, r.last_error,
		(SELECT COUNT(*) FROM remote_calls c WHERE c.agent_id = r.agent_id)
		FROM remote_agents r JOIN agents a ON a.id = r.agent_id JOIN users u ON u.id = a.owner_id
		WHERE a.owner_id = ? AND r.removed_at IS NULL ORDER BY r.created_at, r.agent_id`, ownerID)
}

func (d queries) RemoteAgentIDs(ctx context.Context) ([]string, error) {
	return queryAll(ctx, d.q, "remote agent ids", func(row scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT agent_id FROM remote_agents WHERE removed_at IS NULL`)
}

func (d queries) DueRemotes(ctx context.Context, now time.Time) ([]string, error) {
	return queryAll(ctx, d.q, "due remotes", func(row scanner) (string, error) {
		var id string
		var due int64
		return id, row.Scan(&id, &due)
	}, `SELECT c.agent_id, MIN(c.due_at) AS due FROM remote_calls c JOIN remote_agents r ON r.agent_id = c.agent_id
		WHERE c.due_at <= ? AND r.removed_at IS NULL GROUP BY c.agent_id ORDER BY due, c.agent_id`, ms(now))
}

func (d queries) InsertRemoteAgent(ctx context.Context, r *hub.RemoteAgent, credential string) error {
	return d.exec(ctx, "insert remote agent", `INSERT INTO remote_agents (agent_id, card_url, credential, name, description, provider, skills,
		endpoint, version, created_at, fetched_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.AgentID, r.CardURL, credential, r.Name, r.Description, r.Provider, strings.Join(r.Skills, "\n"), r.Endpoint, r.Version,
		ms(r.CreatedAt), ms(r.FetchedAt))
}

func (d queries) RemoveRemoteAgent(ctx context.Context, agentID string, at time.Time) error {
	if err := d.exec(ctx, "remove remote agent", `DELETE FROM remote_calls WHERE agent_id = ?`, agentID); err != nil {
		return err
	}
	if err := d.exec(ctx, "remove remote agent", `DELETE FROM remote_tasks WHERE agent_id = ?`, agentID); err != nil {
		return err
	}
	return d.exec(ctx, "remove remote agent", `UPDATE remote_agents SET removed_at = ?, credential = '' WHERE agent_id = ?`, ms(at), agentID)
}

func (d queries) InsertRemoteCalls(ctx context.Context, calls []*hub.RemoteCall) error {
	for rows := range slices.Chunk(calls, rowsPerInsert) {
		args := make([]any, 0, 9*len(rows))
		for _, c := range rows {
			args = append(args, c.ID, c.AgentID, c.ConversationID, c.MessageID, c.SenderHandle, c.Body, ms(c.CreatedAt), ms(c.DueAt), c.Attempts)
		}
		if err := d.exec(ctx, "insert remote calls", `INSERT INTO remote_calls (id, agent_id, conversation_id, message_id, sender_handle, body,
			created_at, due_at, attempts) VALUES `+valueRows(len(rows), 9), args...); err != nil {
			return err
		}
	}
	return nil
}

func (d queries) ClaimRemoteCalls(ctx context.Context, agentID string, now, until time.Time, limit int) ([]*hub.RemoteCall, error) {
	calls, err := queryAll(ctx, d.q, "claim remote calls", func(row scanner) (*hub.RemoteCall, error) {
		var c hub.RemoteCall
		var created sql.NullInt64
		err := row.Scan(&c.ID, &c.AgentID, &c.ConversationID, &c.MessageID, &c.SenderHandle, &c.Body, &c.TaskID, &c.TaskStatus, &created, &c.Attempts, &c.LastError)
		c.CreatedAt, c.DueAt = fromMS(created), until
		return &c, err
	}, `UPDATE remote_calls SET due_at = ? WHERE id IN (SELECT c.id FROM remote_calls c JOIN remote_agents r ON r.agent_id = c.agent_id
		WHERE c.agent_id = ? AND c.due_at <= ? AND r.removed_at IS NULL ORDER BY c.due_at, c.id LIMIT ?`+d.dialect.skipLocked+`)
		RETURNING id, agent_id, conversation_id, message_id, sender_handle, body, task_id, task_status, created_at, attempts, last_error`,
		ms(until), agentID, ms(now), limit)
	if err != nil || len(calls) == 0 {
		return nil, err
	}
	slices.SortFunc(calls, func(a, b *hub.RemoteCall) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	var cardURL, endpoint, version, credential string
	if err := d.q.QueryRowContext(ctx, `SELECT card_url, endpoint, version, credential FROM remote_agents WHERE agent_id = ?`, agentID).
		Scan(&cardURL, &endpoint, &version, &credential); err != nil {
		return nil, dbErr("claim remote calls", err)
	}
	type waiting struct{ conv, task string }
	tasks, err := queryAll(ctx, d.q, "claim remote calls", func(row scanner) (waiting, error) {
		var w waiting
		return w, row.Scan(&w.conv, &w.task)
	}, `SELECT conversation_id, task_id FROM remote_tasks WHERE agent_id = ?`, agentID)
	if err != nil {
		return nil, err
	}
	for _, c := range calls {
		c.CardURL, c.Endpoint, c.Version, c.Credential = cardURL, endpoint, version, credential
		for _, w := range tasks {
			if w.conv == c.ConversationID {
				c.Continues = w.task
			}
		}
	}
	return calls, nil
}

func (d queries) RescheduleRemoteCall(ctx context.Context, c *hub.RemoteCall) error {
	return d.exec(ctx, "reschedule remote call", `UPDATE remote_calls SET attempts = ?, due_at = ?, task_id = ?, task_status = ?, last_error = ? WHERE id = ?`,
		c.Attempts, ms(c.DueAt), c.TaskID, c.TaskStatus, c.LastError, c.ID)
}

func (d queries) DeleteRemoteCall(ctx context.Context, id string) error {
	return d.exec(ctx, "delete remote call", `DELETE FROM remote_calls WHERE id = ?`, id)
}

func (d queries) SetRemoteDelivery(ctx context.Context, agentID string, at time.Time, problem string) error {
	return d.exec(ctx, "set remote delivery", `UPDATE remote_agents SET last_at = ?, last_error = ? WHERE agent_id = ?`, ms(at), problem, agentID)
}

func (d queries) StaleRemoteCards(ctx context.Context, before time.Time) ([]*hub.RemoteCall, error) {
	return queryAll(ctx, d.q, "stale remote cards", func(row scanner) (*hub.RemoteCall, error) {
		var c hub.RemoteCall
		return &c, row.Scan(&c.AgentID, &c.CardURL, &c.Credential)
	}, `SELECT agent_id, card_url, credential FROM remote_agents WHERE removed_at IS NULL AND fetched_at < ?
		ORDER BY fetched_at, agent_id`, ms(before))
}

func (d queries) UpdateRemoteCard(ctx context.Context, r *hub.RemoteAgent) error {
	if err := d.exec(ctx, "update remote card", `UPDATE remote_agents SET name = ?, description = ?, provider = ?, skills = ?,
		endpoint = ?, version = ?, fetched_at = ? WHERE agent_id = ? AND removed_at IS NULL`,
		r.Name, r.Description, r.Provider, strings.Join(r.Skills, "\n"), r.Endpoint, r.Version, ms(r.FetchedAt), r.AgentID); err != nil {
		return err
	}
	return d.exec(ctx, "update remote card", `UPDATE agents SET description = ? WHERE id = ?`, r.Description, r.AgentID)
}

func (d queries) SetRemoteTask(ctx context.Context, agentID, conversationID, taskID string) error {
	if err := d.exec(ctx, "set remote task", `DELETE FROM remote_tasks WHERE agent_id = ? AND conversation_id = ?`, agentID, conversationID); err != nil {
		return err
	}
	return d.exec(ctx, "set remote task", `INSERT INTO remote_tasks (agent_id, conversation_id, task_id) VALUES (?, ?, ?)`,
		agentID, conversationID, taskID)
}

func (d queries) ClearRemoteTask(ctx context.Context, agentID, conversationID, taskID string) error {
	return d.exec(ctx, "clear remote task", `DELETE FROM remote_tasks WHERE agent_id = ? AND conversation_id = ? AND task_id = ?`,
		agentID, conversationID, taskID)
}
