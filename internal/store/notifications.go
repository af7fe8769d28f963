package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Owner notifications (DESIGN.md §19): people's time zones, their devices
// and topics with what notifies them on each, and their quiet hours.

func (d queries) SetUserTimeZone(ctx context.Context, userID, name string) error {
	return d.exec(ctx, "set time zone", `UPDATE users SET time_zone = ? WHERE id = ?`, name, userID)
}

const notifyTargetCols = `id, user_id, kind, url, p256dh, auth, token, label, kinds, created_at`

func scanNotifyTarget(row scanner) (*hub.NotifyTarget, error) {
	var t hub.NotifyTarget
	var kinds string
	var created sql.NullInt64
	err := row.Scan(&t.ID, &t.UserID, &t.Kind, &t.URL, &t.P256dh, &t.Auth, &t.Token, &t.Label, &kinds, &created)
	t.Kinds, t.CreatedAt = splitKinds(kinds), fromMS(created)
	return &t, err
}

// splitKinds reads kinds of notification as they are kept, comma-separated.
func splitKinds(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

func (d queries) NotifyTargets(ctx context.Context, userID string) ([]*hub.NotifyTarget, error) {
	return queryAll(ctx, d.q, "notify targets", scanNotifyTarget,
		`SELECT `+notifyTargetCols+` FROM notify_targets WHERE user_id = ? ORDER BY created_at, id`, userID)
}

func (d queries) NotifyTarget(ctx context.Context, id string) (*hub.NotifyTarget, error) {
	t, err := scanNotifyTarget(d.q.QueryRowContext(ctx, `SELECT `+notifyTargetCols+` FROM notify_targets WHERE id = ?`, id))
	return t, dbErr("notify target", err)
}

func (d queries) InsertNotifyTarget(ctx context.Context, t *hub.NotifyTarget) error {
	return d.exec(ctx, "insert notify target", `INSERT INTO notify_targets (`+notifyTargetCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.UserID, t.Kind, t.URL, t.P256dh, t.Auth, t.Token, t.Label, strings.Join(t.Kinds, ","), ms(t.CreatedAt))
}

func (d queries) SetNotifyTargetKinds(ctx context.Context, id string, kinds []string) error {
	return d.exec(ctx, "set notify target kinds", `UPDATE notify_targets SET kinds = ? WHERE id = ?`, strings.Join(kinds, ","), id)
}

func (d queries) DeleteNotifyTarget(ctx context.Context, id string) error {
	for _, q := range []string{`DELETE FROM notifications WHERE target_id = ?`, `DELETE FROM notify_targets WHERE id = ?`} {
		if err := d.exec(ctx, "delete notify target", q, id); err != nil {
			return err
		}
	}
	return nil
}

func (d queries) NotifyPrefs(ctx context.Context, userID string) (hub.NotifyPrefs, error) {
	var p hub.NotifyPrefs
	var urgent int
	err := d.q.QueryRowContext(ctx, `SELECT quiet_from, quiet_to, quiet_urgent FROM notify_prefs WHERE user_id = ?`, userID).
		Scan(&p.QuietFrom, &p.QuietTo, &urgent)
	if err != nil {
		return hub.NotifyPrefs{}, dbErr("notify prefs", err)
	}
	p.QuietUrgent = urgent != 0
	return p, nil
}

func (d queries) SetNotifyPrefs(ctx context.Context, userID string, p hub.NotifyPrefs) error {
	urgent := 0
	if p.QuietUrgent {
		urgent = 1
	}
	return d.exec(ctx, "set notify prefs", `INSERT INTO notify_prefs (user_id, quiet_from, quiet_to, quiet_urgent) VALUES (?, ?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET quiet_from = excluded.quiet_from, quiet_to = excluded.quiet_to,
		quiet_urgent = excluded.quiet_urgent`, userID, p.QuietFrom, p.QuietTo, urgent)
}

func (d queries) RecentNotifications(ctx context.Context, userID string, since time.Time) (int, error) {
	var n int
	err := d.q.QueryRowContext(ctx, `SELECT COUNT(DISTINCT item) FROM notifications WHERE user_id = ? AND created_at >= ?`, userID, ms(since)).Scan(&n)
	return n, dbErr("recent notifications", err)
}

func (d queries) DueNotifyTargets(ctx context.Context, now time.Time) ([]string, error) {
	return queryAll(ctx, d.q, "due notify targets", func(row scanner) (string, error) {
		var id string
		var due int64
		return id, row.Scan(&id, &due)
	}, `SELECT target_id, MIN(due_at) AS due FROM notifications WHERE sent_at IS NULL AND due_at <= ?
		GROUP BY target_id ORDER BY due, target_id`, ms(now))
}

func (d queries) InsertNotifications(ctx context.Context, ns []*hub.Notification) error {
	for _, n := range ns {
		payload, err := json.Marshal(n.Payload)
		if err != nil {
			return err
		}
		if err := d.exec(ctx, "insert notification", `INSERT INTO notifications (id, target_id, user_id, kind, item, payload, created_at, due_at, attempts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (target_id, item) DO NOTHING`,
			n.ID, n.TargetID, n.UserID, n.Kind, n.Item, string(payload), ms(n.CreatedAt), ms(n.DueAt), n.Attempts); err != nil {
			return err
		}
	}
	return nil
}

func (d queries) ClaimNotifications(ctx context.Context, targetID string, now, until time.Time, limit int) ([]*hub.Notification, error) {
	ns, err := queryAll(ctx, d.q, "claim notifications", func(row scanner) (*hub.Notification, error) {
		var n hub.Notification
		var payload string
		var created sql.NullInt64
		err := row.Scan(&n.ID, &n.TargetID, &n.UserID, &n.Kind, &n.Item, &payload, &created, &n.Attempts)
		if err == nil {
			err = json.Unmarshal([]byte(payload), &n.Payload)
		}
		n.CreatedAt, n.DueAt = fromMS(created), until
		return &n, err
	}, `UPDATE notifications SET due_at = ? WHERE id IN (SELECT c.id FROM notifications c
		WHERE c.target_id = ? AND c.sent_at IS NULL AND c.due_at <= ? ORDER BY c.due_at, c.id LIMIT ?`+d.dialect.skipLocked+`)
		RETURNING id, target_id, user_id, kind, item, payload, created_at, attempts`, ms(until), targetID, ms(now), limit)
	if err != nil || len(ns) == 0 {
		return nil, err
	}
	slices.SortFunc(ns, func(a, b *hub.Notification) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	t, err := d.NotifyTarget(ctx, targetID)
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		n.To = t
	}
	return ns, nil
}

func (d queries) MarkNotificationSent(ctx context.Context, id string, at time.Time) error {
	return d.exec(ctx, "mark notification sent", `UPDATE notifications SET sent_at = ? WHERE id = ?`, ms(at), id)
}

func (d queries) RescheduleNotification(ctx context.Context, n *hub.Notification) error {
	return d.exec(ctx, "reschedule notification", `UPDATE notifications SET attempts = ?, due_at = ? WHERE id = ?`, n.Attempts, ms(n.DueAt), n.ID)
}

func (d queries) InsertNotifyAttempt(ctx context.Context, a *hub.NotifyAttempt, keep int) error {
	if err := d.exec(ctx, "insert notify attempt", `INSERT INTO notify_log (id, user_id, target_id, notification_id, kind, at, status, error)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, a.UserID, a.TargetID, a.NotificationID, a.Kind, ms(a.At), a.Status, a.Error); err != nil {
		return err
	}
	return d.exec(ctx, "trim notify log", `DELETE FROM notify_log WHERE user_id = ? AND id NOT IN
		(SELECT id FROM notify_log WHERE user_id = ? ORDER BY at DESC, id DESC LIMIT ?)`, a.UserID, a.UserID, keep)
}

func (d queries) NotifyAttempts(ctx context.Context, userID string, limit int) ([]hub.NotifyAttempt, error) {
	return queryAll(ctx, d.q, "notify log", func(row scanner) (hub.NotifyAttempt, error) {
		var a hub.NotifyAttempt
		var at sql.NullInt64
		err := row.Scan(&a.ID, &a.UserID, &a.TargetID, &a.NotificationID, &a.Kind, &at, &a.Status, &a.Error)
		a.At = fromMS(at)
		return a, err
	}, `SELECT id, user_id, target_id, notification_id, kind, at, status, error FROM notify_log
		WHERE user_id = ? ORDER BY at DESC, id DESC LIMIT ?`, userID, limit)
}

func (d queries) PruneNotifications(ctx context.Context, before time.Time) error {
	return d.exec(ctx, "prune notifications", `DELETE FROM notifications WHERE sent_at IS NOT NULL AND created_at < ?`, ms(before))
}
