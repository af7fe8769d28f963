package store

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Webhooks (§18): agents' endpoints, the outbox of calls still to make,
// and each endpoint's delivery log.

const webhookCols = `w.id, w.agent_id, u.handle || '/' || a.slug, w.url, w.created_at, w.disabled_at, w.disabled_reason,
	(SELECT COUNT(*) FROM webhook_calls c WHERE c.webhook_id = w.id)`

const webhookFrom = ` FROM webhooks w JOIN agents a ON a.id = w.agent_id JOIN users u ON u.id = a.owner_id`

func scanWebhook(row scanner) (*hub.Webhook, error) {
	var w hub.Webhook
	var created, disabled sql.NullInt64
	if err := row.Scan(&w.ID, &w.AgentID, &w.AgentHandle, &w.URL, &created, &disabled, &w.DisabledReason, &w.Pending); err != nil {
		return nil, err
	}
	w.CreatedAt, w.DisabledAt = fromMS(created), fromMS(disabled)
	return &w, nil
}

func (d queries) Webhooks(ctx context.Context, agentID string) ([]*hub.Webhook, error) {
	return queryAll(ctx, d.q, "webhooks", scanWebhook, `SELECT `+webhookCols+webhookFrom+` WHERE w.agent_id = ? ORDER BY w.created_at, w.id`, agentID)
}

func (d queries) WebhookAgents(ctx context.Context) ([]string, error) {
	return queryAll(ctx, d.q, "webhook agents", func(row scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT DISTINCT agent_id FROM webhooks WHERE disabled_at IS NULL`)
}

func (d queries) Webhook(ctx context.Context, id string) (*hub.Webhook, error) {
	w, err := scanWebhook(d.q.QueryRowContext(ctx, `SELECT `+webhookCols+webhookFrom+` WHERE w.id = ?`, id))
	return w, dbErr("webhook", err)
}

func scanAttempt(row scanner) (hub.WebhookAttempt, error) {
	var a hub.WebhookAttempt
	var at sql.NullInt64
	var dur int64
	err := row.Scan(&a.ID, &a.WebhookID, &a.CallID, &a.Type, &at, &a.Status, &a.Error, &dur)
	a.At, a.Duration = fromMS(at), time.Duration(dur)*time.Millisecond
	return a, err
}

func (d queries) WebhookAttempts(ctx context.Context, webhookID string, limit int) ([]hub.WebhookAttempt, error) {
	return queryAll(ctx, d.q, "webhook attempts", scanAttempt, `SELECT id, webhook_id, call_id, type, at, status, error, duration_ms
		FROM webhook_attempts WHERE webhook_id = ? ORDER BY at DESC, id DESC LIMIT ?`, webhookID, limit)
}

func (d queries) DueWebhooks(ctx context.Context, now time.Time) ([]string, error) {
	return queryAll(ctx, d.q, "due webhooks", func(row scanner) (string, error) {
		var id string
		var due int64
		return id, row.Scan(&id, &due)
	}, `SELECT c.webhook_id, MIN(c.due_at) AS due FROM webhook_calls c JOIN webhooks w ON w.id = c.webhook_id
		WHERE c.due_at <= ? AND w.disabled_at IS NULL GROUP BY c.webhook_id ORDER BY due, c.webhook_id`, ms(now))
}

func (d queries) InsertWebhook(ctx context.Context, w *hub.Webhook, secret string) error {
	return d.exec(ctx, "insert webhook", `INSERT INTO webhooks (id, agent_id, url, secret, created_at) VALUES (?, ?, ?, ?, ?)`,
		w.ID, w.AgentID, w.URL, secret, ms(w.CreatedAt))
}

func (d queries) DeleteWebhook(ctx context.Context, id string) error {
	for _, q := range []string{`DELETE FROM webhook_calls WHERE webhook_id = ?`, `DELETE FROM webhook_attempts WHERE webhook_id = ?`, `DELETE FROM webhooks WHERE id = ?`} {
		if err := d.exec(ctx, "delete webhook", q, id); err != nil {
			return err
		}
	}
	return nil
}

func (d queries) SetWebhookDisabled(ctx context.Context, id string, at time.Time, reason string) error {
	if err := d.exec(ctx, "disable webhook", `UPDATE webhooks SET disabled_at = ?, disabled_reason = ? WHERE id = ?`, ms(at), reason, id); err != nil || at.IsZero() {
		return err
	}
	return d.exec(ctx, "disable webhook", `DELETE FROM webhook_calls WHERE webhook_id = ?`, id)
}

func (d queries) InsertWebhookCalls(ctx context.Context, calls []*hub.WebhookCall) error {
	for rows := range slices.Chunk(calls, rowsPerInsert) {
		args := make([]any, 0, 8*len(rows))
		for _, c := range rows {
			args = append(args, c.ID, c.WebhookID, c.EventID, c.Type, string(c.Payload), ms(c.CreatedAt), ms(c.DueAt), c.Attempts)
		}
		if err := d.exec(ctx, "insert webhook calls", `INSERT INTO webhook_calls (id, webhook_id, event_id, type, payload, created_at, due_at, attempts)
			VALUES `+valueRows(len(rows), 8), args...); err != nil {
			return err
		}
	}
	return nil
}

func (d queries) ClaimWebhookCalls(ctx context.Context, webhookID string, now, until time.Time, limit int) ([]*hub.WebhookCall, error) {
	calls, err := queryAll(ctx, d.q, "claim webhook calls", func(row scanner) (*hub.WebhookCall, error) {
		var c hub.WebhookCall
		var payload string
		var created sql.NullInt64
		err := row.Scan(&c.ID, &c.WebhookID, &c.EventID, &c.Type, &payload, &created, &c.Attempts)
		c.Payload, c.CreatedAt, c.DueAt = []byte(payload), fromMS(created), until
		return &c, err
	}, `UPDATE webhook_calls SET due_at = ? WHERE id IN (SELECT c.id FROM webhook_calls c JOIN webhooks w ON w.id = c.webhook_id
		WHERE c.webhook_id = ? AND c.due_at <= ? AND w.disabled_at IS NULL ORDER BY c.due_at, c.id LIMIT ?`+d.dialect.skipLocked+`)
		RETURNING id, webhook_id, event_id, type, payload, created_at, attempts`, ms(until), webhookID, ms(now), limit)
	if err != nil || len(calls) == 0 {
		return nil, err
	}
	// In the order they were made.
	slices.SortFunc(calls, func(a, b *hub.WebhookCall) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	var url, secret, agentID, agent, ownerID string
	err = d.q.QueryRowContext(ctx, `SELECT w.url, w.secret, w.agent_id, u.handle || '/' || a.slug, a.owner_id`+webhookFrom+` WHERE w.id = ?`,
		webhookID).Scan(&url, &secret, &agentID, &agent, &ownerID)
	if err != nil {
		return nil, dbErr("claim webhook calls", err)
	}
	for _, c := range calls {
		c.URL, c.Secret, c.AgentID, c.AgentHandle, c.OwnerID = url, secret, agentID, agent, ownerID
	}
	return calls, nil
}

func (d queries) DeleteWebhookCall(ctx context.Context, id string) error {
	return d.exec(ctx, "delete webhook call", `DELETE FROM webhook_calls WHERE id = ?`, id)
}

func (d queries) RescheduleWebhookCall(ctx context.Context, c *hub.WebhookCall) error {
	return d.exec(ctx, "reschedule webhook call", `UPDATE webhook_calls SET attempts = ?, due_at = ? WHERE id = ?`, c.Attempts, ms(c.DueAt), c.ID)
}

func (d queries) InsertWebhookAttempt(ctx context.Context, a *hub.WebhookAttempt, keep int) error {
	// An endpoint removed while its call was in flight logs nothing.
	var n int
	if err := d.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhooks WHERE id = ?`, a.WebhookID).Scan(&n); err != nil || n == 0 {
		return dbErr("insert webhook attempt", err)
	}
	if err := d.exec(ctx, "insert webhook attempt", `INSERT INTO webhook_attempts (id, webhook_id, call_id, type, at, status, error, duration_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, a.WebhookID, a.CallID, a.Type, ms(a.At), a.Status, a.Error, a.Duration.Milliseconds()); err != nil {
		return err
	}
	return d.exec(ctx, "trim webhook attempts", `DELETE FROM webhook_attempts WHERE webhook_id = ? AND id NOT IN
		(SELECT id FROM webhook_attempts WHERE webhook_id = ? ORDER BY at DESC, id DESC LIMIT ?)`, a.WebhookID, a.WebhookID, keep)
}
