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
	if err := row.Scan(&u.ID, &u.Handle, &u.Name, &created); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMS(created)
	return &u, nil
}

const userCols = `id, handle, name, created_at`

func (d queries) UserByID(ctx context.Context, id string) (*hub.User, error) {
	u, err := scanUser(d.q.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
	return u, dbErr("user", err)
}

func (d queries) UserByHandle(ctx context.Context, handle string) (*hub.User, error) {
	u, err := scanUser(d.q.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE handle = ?`, handle))
	return u, dbErr("user by handle", err)
}

func (d queries) InsertUser(ctx context.Context, u *hub.User) error {
	return d.exec(ctx, "insert user", `INSERT INTO users (id, handle, name, created_at) VALUES (?, ?, ?, ?)`,
		u.ID, u.Handle, u.Name, ms(u.CreatedAt))
}
