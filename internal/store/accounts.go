package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Dashboard sign-ins and invitations (§11.1), each kept by its secret's
// hash.

const loginCols = `id, hash, user_id, created_at, expires_at, last_seen_at`

func scanLogin(row scanner) (*hub.Login, error) {
	var l hub.Login
	var created, expires, seen sql.NullInt64
	if err := row.Scan(&l.ID, &l.Hash, &l.UserID, &created, &expires, &seen); err != nil {
		return nil, err
	}
	l.CreatedAt, l.ExpiresAt, l.LastSeenAt = fromMS(created), fromMS(expires), fromMS(seen)
	return &l, nil
}

func (d queries) LoginByHash(ctx context.Context, hash []byte) (*hub.Login, error) {
	l, err := scanLogin(d.q.QueryRowContext(ctx, `SELECT `+loginCols+` FROM logins WHERE hash = ?`, hash))
	return l, dbErr("login", err)
}

func (d queries) LoginsOf(ctx context.Context, userID string) ([]*hub.Login, error) {
	return queryAll(ctx, d.q, "logins of", scanLogin, `SELECT `+loginCols+` FROM logins WHERE user_id = ? ORDER BY last_seen_at DESC, id`, userID)
}

func (d queries) DeleteLoginsExcept(ctx context.Context, userID, keepID string) error {
	return d.exec(ctx, "delete other logins", `DELETE FROM logins WHERE user_id = ? AND id <> ?`, userID, keepID)
}

func (d queries) InsertLogin(ctx context.Context, l *hub.Login) error {
	return d.exec(ctx, "insert login", `INSERT INTO logins (id, hash, user_id, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)`,
		l.ID, l.Hash, l.UserID, ms(l.CreatedAt), ms(l.ExpiresAt), ms(l.LastSeenAt))
}

func (d queries) TouchLogin(ctx context.Context, id string, at time.Time) error {
	return d.exec(ctx, "touch login", `UPDATE logins SET last_seen_at = ? WHERE id = ?`, ms(at), id)
}

func (d queries) DeleteLogin(ctx context.Context, id string) error {
	return d.exec(ctx, "delete login", `DELETE FROM logins WHERE id = ?`, id)
}

func (d queries) DeleteLogins(ctx context.Context, userID string) error {
	return d.exec(ctx, "delete logins", `DELETE FROM logins WHERE user_id = ?`, userID)
}

const inviteCols = `id, hash, created_by, created_at, expires_at, used_at, used_by`

func scanInvite(row scanner) (*hub.Invite, error) {
	var inv hub.Invite
	var created, expires, used sql.NullInt64
	if err := row.Scan(&inv.ID, &inv.Hash, &inv.CreatedBy, &created, &expires, &used, &inv.UsedBy); err != nil {
		return nil, err
	}
	inv.CreatedAt, inv.ExpiresAt, inv.UsedAt = fromMS(created), fromMS(expires), fromMS(used)
	return &inv, nil
}

func (d queries) InviteByHash(ctx context.Context, hash []byte) (*hub.Invite, error) {
	inv, err := scanInvite(d.q.QueryRowContext(ctx, `SELECT `+inviteCols+` FROM invites WHERE hash = ?`, hash))
	return inv, dbErr("invite", err)
}

func (d queries) OpenInvites(ctx context.Context, now time.Time) ([]*hub.Invite, error) {
	return queryAll(ctx, d.q, "open invites", scanInvite, `SELECT `+inviteCols+` FROM invites WHERE used_at IS NULL AND expires_at > ? ORDER BY created_at DESC, id`, ms(now))
}

func (d queries) DeleteInvite(ctx context.Context, id string) error {
	return d.execOne(ctx, "delete invite", `DELETE FROM invites WHERE id = ? AND used_at IS NULL`, id)
}

func (d queries) InsertInvite(ctx context.Context, inv *hub.Invite) error {
	return d.exec(ctx, "insert invite", `INSERT INTO invites (id, hash, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		inv.ID, inv.Hash, inv.CreatedBy, ms(inv.CreatedAt), ms(inv.ExpiresAt))
}

func (d queries) UseInvite(ctx context.Context, id, userID string, at time.Time) error {
	return d.execOne(ctx, "use invite", `UPDATE invites SET used_at = ?, used_by = ? WHERE id = ? AND used_at IS NULL`, ms(at), userID, id)
}
