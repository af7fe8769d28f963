package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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
	}, `SELECT DISTINCT recipient_id FROM events WHERE recipient_id <> '' AND `+past+` AND `+upto, append(args, more...)...)
}

func (d queries) PruneEvents(ctx context.Context, before time.Time) (hub.Pos, error) {
	var through hub.Pos
	if d.dialect.rowidEvents {
		id, found, err := d.lastEventBefore(ctx, before.UnixMilli())
		if err != nil || !found {
			return hub.Pos{}, err
		}
		through.ID = id
		// The newest event's row is blanked rather than deleted: a new
		// id is one past the largest in the table, so it holds every id
		// given so far. No reader asks for recipient '' (EventRecipients
		// leaves it out), and the next prune after a newer event deletes
		// it.
		if err := d.exec(ctx, "prune events", `DELETE FROM events WHERE id <= ? AND id < (SELECT MAX(id) FROM events)`, id); err != nil {
			return hub.Pos{}, err
		}
		if err := d.exec(ctx, "prune events", `UPDATE events SET recipient_id = '', type = '', conversation_id = '', message_id = '', data = NULL WHERE id = ?`, id); err != nil {
			return hub.Pos{}, err
		}
		return through, d.SetMeta(ctx, hub.MetaPrunedThrough, through.String())
	}
	var tx, id sql.NullInt64
	err := d.q.QueryRowContext(ctx, `SELECT tx, id FROM events WHERE created_at < ? ORDER BY created_at DESC, `+d.dialect.eventOrder(" DESC")+` LIMIT 1`, ms(before)).Scan(&tx, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return hub.Pos{}, nil
	}
	if err != nil {
		return hub.Pos{}, dbErr("prune events", err)
	}
	through = hub.Pos{Tx: tx.Int64, ID: id.Int64}
	past, args := d.dialect.eventsPast("<=", through)
	if err := d.exec(ctx, "prune events", `DELETE FROM events WHERE `+past, args...); err != nil {
		return hub.Pos{}, err
	}
	return through, d.SetMeta(ctx, hub.MetaPrunedThrough, through.String())
}

// lastEventBefore finds the last event created before cutoff (ms) where
// ids follow the events' times (rowidEvents), so that those created
// before it are the ones up to some id: a binary search over ids, each
// step one lookup by id (about 22 for a million ids, at most 65), with no
// index on created_at. found is false when no event is that old.
//
// If the hub's clock stepped back (or an Update dated its events before
// another's that committed first), times are out of id order there, and
// the search stops at some event created before cutoff whose next one was
// not. Events are then pruned a little early or late, which is accepted:
// one deleted though created after cutoff stands before an older one in
// id order, so it is newer than cutoff by no more than the step; one
// older than cutoff past the bound waits for a later prune. Cursors stay
// valid either way: what is deleted is what lies at or below the mark.
func (d queries) lastEventBefore(ctx context.Context, cutoff int64) (int64, bool, error) {
	at := func(query string, arg int64) (id, created int64, ok bool, err error) {
		err = d.q.QueryRowContext(ctx, query, arg).Scan(&id, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, 0, false, nil
		}
		return id, created, err == nil, dbErr("prune events", err)
	}
	// The first event at or after an id.
	const from = `SELECT id, created_at FROM events WHERE id >= ? ORDER BY id LIMIT 1`
	lo, created, ok, err := at(from, math.MinInt64)
	if err != nil || !ok || created >= cutoff {
		return 0, false, err
	}
	hi, created, _, err := at(`SELECT id, created_at FROM events WHERE id >= ? ORDER BY id DESC LIMIT 1`, math.MinInt64)
	if err != nil || created < cutoff {
		return hi, err == nil, err
	}
	// lo's event was created before cutoff; the first event at or after
	// hi was not.
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		id, created, _, err := at(from, mid)
		if err != nil {
			return 0, false, err
		}
		if created < cutoff {
			lo = id // below hi: the first event at or after hi is not this one
		} else {
			hi = mid
		}
	}
	return lo, true, nil
}
