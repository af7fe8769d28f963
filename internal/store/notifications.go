package store

import (
	"context"
	"database/sql"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// Owner notifications (DESIGN.md §19): people's time zones, their devices
// and topics, and what notifies them.

func (d queries) SetUserTimeZone(ctx context.Context, userID, name string) error {
	return d.exec(ctx, "set time zone", `UPDATE users SET time_zone = ? WHERE id = ?`, name, userID)
}

const notifyTargetCols = `id, user_id, kind, url, p256dh, auth, token, label, created_at`

func scanNotifyTarget(row scanner) (*hub.NotifyTarget, error) {
	var t hub.NotifyTarget
	var created sql.NullInt64
	err := row.Scan(&t.ID, &t.UserID, &t.Kind, &t.URL, &t.P256dh, &t.Auth, &t.Token, &t.Label, &created)
	t.CreatedAt = fromMS(created)
	return &t, err
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
	return d.exec(ctx, "insert notify target", `INSERT INTO notify_targets (`+notifyTargetCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.UserID, t.Kind, t.URL, t.P256dh, t.Auth, t.Token, t.Label, ms(t.CreatedAt))
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
	var kinds string
	var urgent int
	err := d.q.QueryRowContext(ctx, `SELECT kinds, quiet_from, quiet_to, quiet_urgent FROM notify_prefs WHERE user_id = ?`, userID).
		Scan(&kinds, &p.QuietFrom, &p.QuietTo, &urgent)
	if err != nil {
		return p, dbErr("notify prefs", err)
	}
	p.Kinds, p.QuietUrgent = []string{}, urgent != 0
	if kinds != "" {
		p.Kinds = strings.Split(kinds, ",")
	}
	return p, nil
}

func (d queries) SetNotifyPrefs(ctx context.Context, userID string, p hub.NotifyPrefs) error {
	urgent := 0
	if p.QuietUrgent {
		urgent = 1
	}
	return d.exec(ctx, "set notify prefs", `INSERT INTO notify_prefs (user_id, kinds, quiet_from, quiet_to, quiet_urgent) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET kinds = excluded.kinds, quiet_from = excluded.quiet_from, quiet_to = excluded.quiet_to,
		quiet_urgent = excluded.quiet_urgent`, userID, strings.Join(p.Kinds, ","), p.QuietFrom, p.QuietTo, urgent)
}
