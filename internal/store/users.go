package store

import (
	"context"
	"database/sql"

	"github.com/palaverhq/palaver/internal/hub"
)

// People (DESIGN.md §1).

func scanUser(row scanner) (*hub.User, error) {
	var u hub.User
	var created sql.NullInt64
	if err := row.Scan(&u.ID, &u.Handle, &u.Name, &u.Email, &u.Admin, &created, &u.TimeZone); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMS(created)
	return &u, nil
}

const userCols = `id, handle, name, email, admin, created_at, time_zone`

func (d queries) UserByID(ctx context.Context, id string) (*hub.User, error) {
	u, err := scanUser(d.q.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
	return u, dbErr("user", err)
}

func (d queries) UserByHandle(ctx context.Context, handle string) (*hub.User, error) {
	u, err := scanUser(d.q.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE handle = ?`, handle))
	return u, dbErr("user by handle", err)
}

func (d queries) LockUsers(ctx context.Context) error {
	if d.dialect.lockUsers == "" {
		return nil
	}
	return d.exec(ctx, "lock users", d.dialect.lockUsers)
}

func (d queries) InsertUser(ctx context.Context, u *hub.User) error {
	return d.exec(ctx, "insert user", `INSERT INTO users (id, handle, name, email, admin, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		u.ID, u.Handle, u.Name, u.Email, u.Admin, ms(u.CreatedAt))
}

func (d queries) SetUserName(ctx context.Context, userID, name string) error {
	return d.execOne(ctx, "set user name", `UPDATE users SET name = ? WHERE id = ?`, name, userID)
}

func (d queries) SetUserEmail(ctx context.Context, userID, email string) error {
	return d.execOne(ctx, "set user email", `UPDATE users SET email = ? WHERE id = ?`, email, userID)
}

func (d queries) Users(ctx context.Context) ([]*hub.User, error) {
	return queryAll(ctx, d.q, "users", scanUser, `SELECT `+userCols+` FROM users ORDER BY created_at, id`)
}

func (d queries) PasswordHash(ctx context.Context, userID string) (string, error) {
	var h string
	err := d.q.QueryRowContext(ctx, `SELECT password_hash FROM users WHERE id = ?`, userID).Scan(&h)
	return h, dbErr("password hash", err)
}

func (d queries) SetPasswordHash(ctx context.Context, userID, hash string) error {
	return d.execOne(ctx, "set password", `UPDATE users SET password_hash = ? WHERE id = ?`, hash, userID)
}
