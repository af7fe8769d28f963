package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Dashboard sign-ins and invitations (§11.1), each kept by its secret's
// hash.

func (d queries) LoginByHash(ctx context.Context, hash []byte) (*hub.Login, error) {
	var l hub.Login
	var created, expires, seen sql.NullInt64
	err := d.q.QueryRowContext(ctx, `SELECT id, hash, user_id, created_at, expires_at, last_seen_at FROM logins WHERE hash = ?`, hash).
		Scan(&l.ID, &l.Hash, &l.UserID, &created, &expires, &seen)
	if err != nil {
		return nil, dbErr("login", err)
	}
	l.CreatedAt, l.ExpiresAt, l.LastSeenAt = fromMS(created), fromMS(expires), fromMS(seen)
	return &l, nil
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

func (d queries) InviteByHash(ctx context.Context, hash []byte) (*hub.Invite, error) {
	var inv hub.Invite
	var created, expires, used sql.NullInt64
	err := d.q.QueryRowContext(ctx, `SELECT id, hash, created_by, created_at, expires_at, used_at, used_by FROM invites WHERE hash = ?`, hash).
		Scan(&inv.ID, &inv.Hash, &inv.CreatedBy, &created, &expires, &used, &inv.UsedBy)
	if err != nil {
		return nil, dbErr("invite", err)
	}
	inv.CreatedAt, inv.ExpiresAt, inv.UsedAt = fromMS(created), fromMS(expires), fromMS(used)
	return &inv, nil
}

func (d queries) InsertInvite(ctx context.Context, inv *hub.Invite) error {
	return d.exec(ctx, "insert invite", `INSERT INTO invites (id, hash, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		inv.ID, inv.Hash, inv.CreatedBy, ms(inv.CreatedAt), ms(inv.ExpiresAt))
}

func (d queries) UseInvite(ctx context.Context, id, userID string, at time.Time) error {
	return d.execOne(ctx, "use invite", `UPDATE invites SET used_at = ?, used_by = ? WHERE id = ? AND used_at IS NULL`, ms(at), userID, id)
}
