package store

import (
	"context"
	"database/sql"
)

// The meta table: the database epoch and other single values the hub keeps.

func (d queries) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := d.q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return v, dbErr("meta", err)
}

func (d queries) SetMeta(ctx context.Context, key, value string) error {
	return d.exec(ctx, "set meta", `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
}

func (d queries) InitMeta(ctx context.Context, key, value string) error {
	return d.exec(ctx, "init meta", `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, value)
}
