package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Event streams (§6): appended in commit order, read after a cursor,
// pruned after the retention period.

// InsertEvents inserts up to rowsPerInsert events a statement. Ids grow in
// the order rows are inserted: on SQLite they are consecutive up to
// LastInsertId; elsewhere the returned ids, sorted, are the events' in
// order.
func (d queries) InsertEvents(ctx context.Context, events []*hub.Event) error {
	if len(events) > 0 && d.dialect.eventLock != "" {
		if err := d.exec(ctx, "event lock", d.dialect.eventLock); err != nil {
			return err
		}
	}
	for rows := range slices.Chunk(events, rowsPerInsert) {
		args := make([]any, 0, 6*len(rows))
		for _, e := range rows {
			var data any
			if len(e.Data) > 0 {
				data = string(e.Data)
			}
			args = append(args, e.RecipientID, e.Type, e.ConversationID, e.MessageID, data, ms(e.CreatedAt))
		}
		insert := `INSERT INTO events (recipient_id, type, conversation_id, message_id, data, created_at) VALUES ` + valueRows(len(rows), 6)
		var ids []int64
		if d.dialect.consecutiveIDs {
			res, err := d.q.ExecContext(ctx, insert, args...)
			if err != nil {
				return dbErr("insert events", err)
			}
			last, err := res.LastInsertId()
			if err != nil {
				return dbErr("insert events", err)
			}
			for i := range rows {
				ids = append(ids, last-int64(len(rows)-1-i))
			}
		} else {
			var err error
			ids, err = queryAll(ctx, d.q, "insert events", func(row scanner) (int64, error) {
				var id int64
				return id, row.Scan(&id)
			}, insert+` RETURNING id`, args...)
			if err != nil {
				return err
			}
		}
		if len(ids) != len(rows) {
			return fmt.Errorf("insert events: %d ids for %d events", len(ids), len(rows))
		}
		slices.Sort(ids)
		for i, e := range rows {
			e.ID = ids[i]
		}
	}
	return nil
}

func (d queries) EventsAfter(ctx context.Context, recipientID string, after int64, limit int) ([]*hub.Event, error) {
	return d.eventsWithMessages(ctx, "events after", recipientID, `SELECT id, type, conversation_id, message_id, data, created_at
		FROM events WHERE recipient_id = ? AND id > ? ORDER BY id LIMIT ?`, recipientID, after, limit)
}

// eventsWithMessages runs query, which selects recipientID's events (id,
// type, conversation_id, message_id, data, created_at), and fills in the
// message each names with one more read. what names it in errors.
func (d queries) eventsWithMessages(ctx context.Context, what, recipientID, query string, args ...any) ([]*hub.Event, error) {
	rows, err := d.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, dbErr(what, err)
	}
	defer rows.Close()
	var out []*hub.Event
	var msgIDs []any
	for rows.Next() {
		e := &hub.Event{RecipientID: recipientID}
		var data sql.NullString
		var created sql.NullInt64
		if err := rows.Scan(&e.ID, &e.Type, &e.ConversationID, &e.MessageID, &data, &created); err != nil {
			return nil, dbErr(what, err)
		}
		if data.Valid {
			e.Data = json.RawMessage(data.String)
		}
		e.CreatedAt = fromMS(created)
		if e.MessageID != "" {
			msgIDs = append(msgIDs, e.MessageID)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil || len(msgIDs) == 0 {
		return out, dbErr(what, err)
	}
	rows.Close()
	msgs, err := d.messagesByID(ctx, msgIDs)
	if err != nil {
		return nil, err
	}
	for _, e := range out {
		e.Message = msgs[e.MessageID]
	}
	return out, nil
}

func (d queries) LatestEventID(ctx context.Context) (int64, error) {
	var id int64
	err := d.q.QueryRowContext(ctx, d.dialect.latestEvent).Scan(&id)
	return id, dbErr("latest event", err)
}

func (d queries) EventRecipients(ctx context.Context, after, upTo int64) ([]string, error) {
	return queryAll(ctx, d.q, "event recipients", func(row scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT DISTINCT recipient_id FROM events WHERE id > ? AND id <= ?`, after, upTo)
}

func (d queries) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	var through sql.NullInt64
	if err := d.q.QueryRowContext(ctx, `SELECT MAX(id) FROM events WHERE created_at < ?`, ms(before)).Scan(&through); err != nil {
		return 0, dbErr("prune events", err)
	}
	if !through.Valid {
		return 0, nil
	}
	if err := d.exec(ctx, "prune events", `DELETE FROM events WHERE id <= ?`, through.Int64); err != nil {
		return 0, err
	}
	return through.Int64, d.SetMeta(ctx, hub.MetaPrunedThrough, strconv.FormatInt(through.Int64, 10))
}
