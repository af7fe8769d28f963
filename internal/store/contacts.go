package store

import (
	"context"
	"database/sql"

	"github.com/palaverhq/palaver/internal/hub"
)

// Contacts between people (§3).

const contactCols = `id, user_a, user_b, status, requested_by, decided_by, requested_at, decided_at, message`

func scanContact(row scanner) (*hub.Contact, error) {
	var c hub.Contact
	var req, dec sql.NullInt64
	if err := row.Scan(&c.ID, &c.UserA, &c.UserB, &c.Status, &c.RequestedBy, &c.DecidedBy, &req, &dec, &c.Message); err != nil {
		return nil, err
	}
	c.RequestedAt, c.DecidedAt = fromMS(req), fromMS(dec)
	return &c, nil
}

func (d queries) Contact(ctx context.Context, userA, userB string) (*hub.Contact, error) {
	a, b := min(userA, userB), max(userA, userB)
	c, err := scanContact(d.q.QueryRowContext(ctx, `SELECT `+contactCols+` FROM contacts WHERE user_a = ? AND user_b = ?`, a, b))
	return c, dbErr("contact", err)
}

func (d queries) ContactsOf(ctx context.Context, userID string) ([]*hub.Contact, error) {
	return queryAll(ctx, d.q, "contacts of", scanContact, `SELECT `+contactCols+` FROM contacts WHERE user_a = ? OR user_b = ? ORDER BY requested_at`, userID, userID)
}

func (d queries) PutContact(ctx context.Context, c *hub.Contact) error {
	c.UserA, c.UserB = min(c.UserA, c.UserB), max(c.UserA, c.UserB)
	return d.exec(ctx, "put contact", `INSERT INTO contacts (`+contactCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_a, user_b) DO UPDATE SET id = excluded.id, status = excluded.status, requested_by = excluded.requested_by,
		decided_by = excluded.decided_by, requested_at = excluded.requested_at, decided_at = excluded.decided_at,
		message = excluded.message`,
		c.ID, c.UserA, c.UserB, c.Status, c.RequestedBy, c.DecidedBy, ms(c.RequestedAt), ms(c.DecidedAt), c.Message)
}

func (d queries) ContactByID(ctx context.Context, id string) (*hub.Contact, error) {
	c, err := scanContact(d.q.QueryRowContext(ctx, `SELECT `+contactCols+` FROM contacts WHERE id = ?`, id))
	return c, dbErr("contact by id", err)
}
