package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Event streams (§6): appended in order (hub.Pos), read after a cursor,
// pruned after the retention period. On PostgreSQL the events of one
// transaction share its transaction id: readers take events in (tx, id)
// order and only below the horizon, the oldest transaction still running,
// so no transaction takes turns with another to insert events.

// eventsPast is the condition that an event's position stands in relation
// op (">", "<=") to p, with its arguments.
func (d *dialect) eventsPast(op string, p hub.Pos) (string, []any) {
	if d.eventTx {
		return "(tx, id) " + op + " (?, ?)", []any{p.Tx, p.ID}
	}
	return "id " + op + " ?", []any{p.ID}
}

// eventOrder orders events by position, dir "" or " DESC".
func (d *dialect) eventOrder(dir string) string {
	if d.eventTx {
		return "tx" + dir + ", id" + dir
	}
	return "id" + dir
}

// InsertEvents inserts up to rowsPerInsert events a statement. Ids grow in
// the order rows are inserted: on SQLite they are consecutive up to
// LastInsertId; elsewhere the returned ids, sorted, are the events' in
// order.
func (d queries) InsertEvents(ctx context.Context, events []*hub.Event) error {
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
		var tx int64
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
				return id, row.Scan(&id, &tx)
			}, insert+` RETURNING id, tx`, args...)
			if err != nil {
				return err
			}
		}
		if len(ids) != len(rows) {
			return fmt.Errorf("insert events: %d ids for %d events", len(ids), len(rows))
		}
		slices.Sort(ids)
		for i, e := range rows {
			e.ID, e.Tx = ids[i], tx
		}
	}
	return nil
}

func (d queries) EventsAfter(ctx context.Context, recipientID string, after hub.Pos, limit int) ([]*hub.Event, int64, error) {
	past, args := d.dialect.eventsPast(">", after)
	return d.eventsWithMessages(ctx, "events after", recipientID, `SELECT `+eventCols+`, `+d.dialect.eventHeld+`
		FROM events WHERE recipient_id = ? AND `+past+` ORDER BY `+d.dialect.eventOrder("")+` LIMIT ?`,
		append(append([]any{recipientID}, args...), limit)...)
}

// eventCols are the columns eventsWithMessages reads.
const eventCols = `tx, id, type, conversation_id, message_id, data, created_at`

// eventsWithMessages runs query, which selects recipientID's events in
// order (eventCols, then whether each is held back: at or past the
// horizon), and fills in the message each names with one more read. It
// leaves out the events held back, which come last, and returns the
// newest transaction among them (0 if none). what names it in errors.
func (d queries) eventsWithMessages(ctx context.Context, what, recipientID, query string, args ...any) ([]*hub.Event, int64, error) {
	rows, err := d.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, 0, dbErr(what, err)
	}
	defer rows.Close()
	var out []*hub.Event
	var msgIDs []any
	var heldTx int64
	for rows.Next() {
		e := &hub.Event{RecipientID: recipientID}
		var data sql.NullString
		var created sql.NullInt64
		var held bool
		if err := rows.Scan(&e.Tx, &e.ID, &e.Type, &e.ConversationID, &e.MessageID, &data, &created, &held); err != nil {
			return nil, 0, dbErr(what, err)
		}
		if held {
			heldTx = e.Tx
			continue
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
		return out, heldTx, dbErr(what, err)
	}
	rows.Close()
	msgs, err := d.messagesByID(ctx, msgIDs)
	if err != nil {
		return nil, 0, err
	}
	for _, e := range out {
		e.Message = msgs[e.MessageID]
	}
	return out, heldTx, nil
}

func (d queries) LatestEvent(ctx context.Context) (hub.Pos, int64, error) {
	var heldTx int64
	var tx, id sql.NullInt64
	if err := d.q.QueryRowContext(ctx, d.dialect.latestEvent).Scan(&heldTx, &tx, &id); err != nil {
		return hub.Pos{}, 0, dbErr("latest event", err)
	}
	if id.Valid {
		return hub.Pos{Tx: tx.Int64, ID: id.Int64}, heldTx, nil
	}
	text, err := d.Meta(ctx, hub.MetaPrunedThrough)
	if err != nil {
		return hub.Pos{}, 0, err
	}
	p, err := hub.ParsePos(text)
	return p, heldTx, err
}

func (d queries) EventRecipients(ctx context.Context, after, upTo hub.Pos) ([]string, error) {
	past, args := d.dialect.eventsPast(">", after)
	upto, more := d.dialect.eventsPast("<=", upTo)
	return queryAll(ctx, d.q, "event recipients", func(row scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT DISTINCT recipient_id FROM events WHERE `+past+` AND `+upto, append(args, more...)...)
}

func (d queries) PruneEvents(ctx context.Context, before time.Time) (hub.Pos, error) {
	var tx, id sql.NullInt64
	err := d.q.QueryRowContext(ctx, `SELECT tx, id FROM events WHERE created_at < ? ORDER BY created_at DESC, `+d.dialect.eventOrder(" DESC")+` LIMIT 1`, ms(before)).Scan(&tx, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return hub.Pos{}, nil
	}
	if err != nil {
		return hub.Pos{}, dbErr("prune events", err)
	}
	through := hub.Pos{Tx: tx.Int64, ID: id.Int64}
	past, args := d.dialect.eventsPast("<=", through)
	if err := d.exec(ctx, "prune events", `DELETE FROM events WHERE `+past, args...); err != nil {
		return hub.Pos{}, err
	}
	return through, d.SetMeta(ctx, hub.MetaPrunedThrough, through.String())
}
