package store

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/palaverhq/palaver/internal/hub"
)

// Items (§8) and the history of their changes.

const itemCols = `id, project_id, kind, title, note, url, status, created_at, updated_at`

func scanItem(row scanner) (*hub.Item, error) {
	var it hub.Item
	var created, updated sql.NullInt64
	if err := row.Scan(&it.ID, &it.ProjectID, &it.Kind, &it.Title, &it.Note, &it.URL, &it.Status, &created, &updated); err != nil {
		return nil, err
	}
	it.CreatedAt, it.UpdatedAt = fromMS(created), fromMS(updated)
	return &it, nil
}

func (d queries) Item(ctx context.Context, id string) (*hub.Item, error) {
	it, err := scanItem(d.q.QueryRowContext(ctx, `SELECT `+itemCols+` FROM items WHERE id = ?`, id))
	return it, dbErr("item", err)
}

func (d queries) Items(ctx context.Context, projectID string) ([]*hub.Item, error) {
	return queryAll(ctx, d.q, "items", scanItem, `SELECT `+itemCols+` FROM items WHERE project_id = ? ORDER BY created_at, id`, projectID)
}

func (d queries) InsertItem(ctx context.Context, it *hub.Item) error {
	return d.exec(ctx, "insert item", `INSERT INTO items (`+itemCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		it.ID, it.ProjectID, it.Kind, it.Title, it.Note, it.URL, it.Status, ms(it.CreatedAt), ms(it.UpdatedAt))
}

func (d queries) UpdateItem(ctx context.Context, it *hub.Item) error {
	return d.execOne(ctx, "update item", `UPDATE items SET title = ?, note = ?, url = ?, status = ?, updated_at = ? WHERE id = ?`,
		it.Title, it.Note, it.URL, it.Status, ms(it.UpdatedAt), it.ID)
}

func (d queries) ItemChanges(ctx context.Context, itemID string) ([]hub.ItemChange, error) {
	return queryAll(ctx, d.q, "item changes", func(row scanner) (hub.ItemChange, error) {
		c := hub.ItemChange{ItemID: itemID}
		var changes string
		var at sql.NullInt64
		if err := row.Scan(&c.ByID, &c.ByHandle, &c.Instance, &changes, &at); err != nil {
			return c, err
		}
		c.At = fromMS(at)
		return c, json.Unmarshal([]byte(changes), &c.Changes)
	}, `SELECT by_id, by_handle, instance, changes, at FROM item_changes WHERE item_id = ? ORDER BY id`, itemID)
}

func (d queries) InsertItemChange(ctx context.Context, c *hub.ItemChange) error {
	changes, err := json.Marshal(c.Changes)
	if err != nil {
		return err
	}
	return d.exec(ctx, "insert item change", `INSERT INTO item_changes (item_id, by_id, by_handle, instance, changes, at) VALUES (?, ?, ?, ?, ?, ?)`,
		c.ItemID, c.ByID, c.ByHandle, c.Instance, string(changes), ms(c.At))
}
