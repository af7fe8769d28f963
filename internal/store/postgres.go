package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/hub"
)

var postgresDialect = &dialect{
	name:          "postgres",
	dollar:        true,
	migrationLock: `SELECT pg_advisory_xact_lock(7420001)`,
	eventTx:       true,
	foldSend:      true,
	eventHeld:     `tx >= palaver_event_horizon()`,
	// A conversation's lock is an advisory one, not its row's: a row lock
	// gives the transaction its id at once, and every reader's events
	// wait for the transactions with older ids (eventHeld). Under an
	// advisory lock a send takes its id at its first write, after its
	// checks, so fewer transactions stand before it. Its seq still comes
	// under the row's lock (NextSeq's UPDATE), so seq order is commit
	// order.
	lockConversation: `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`,
	lockProject:      `SELECT id FROM projects WHERE id = ? FOR UPDATE`,
	lockUsers:        `LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`,
	skipLocked:       ` FOR UPDATE OF c SKIP LOCKED`,
	// The last event below the horizon: every event before it has been
	// committed (or rolled back), and any to come stands after it. It
	// moves only when events are committed. Beside it, the newest
	// transaction among the committed events held back past the horizon.
	latestEvent: `SELECT h.tx, l.tx, l.id
		FROM (SELECT COALESCE(MAX(tx), 0) AS tx FROM events WHERE tx >= palaver_event_horizon()) h
		LEFT JOIN (SELECT tx, id FROM events WHERE tx < palaver_event_horizon() ORDER BY tx DESC, id DESC LIMIT 1) l ON TRUE`,
	retryable: func(err error) bool {
		var pe *pgconn.PgError
		// serialization_failure, deadlock_detected
		return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
	},
	search:         postgresSearch,
	afterMigrate:   rebaseEventTx,
	migrationSteps: map[int]func(context.Context, *sql.Tx) error{18: reindexSearch},
}

// reindexBatch is how many messages one statement of reindexSearch indexes.
const reindexBatch = 1000

// reindexSearch writes the search column of every sent message from its
// search words (migration 0018), a batch at a time, by id.
func reindexSearch(ctx context.Context, tx *sql.Tx) error {
	for after := ""; ; {
		rows, err := tx.QueryContext(ctx, `SELECT id, summary, body FROM messages WHERE status = 'sent' AND id > $1 ORDER BY id LIMIT $2`, after, reindexBatch)
		if err != nil {
			return fmt.Errorf("reindex search: %w", err)
		}
		var ids, summaries, bodies []string
		for rows.Next() {
			var id, summary, body string
			if err := rows.Scan(&id, &summary, &body); err != nil {
				rows.Close()
				return fmt.Errorf("reindex search: %w", err)
			}
			ids, summaries, bodies = append(ids, id), append(summaries, fulltext.Text(summary)), append(bodies, fulltext.Text(body))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("reindex search: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages m SET search = `+searchVector("v.summary", "v.body")+`
			FROM unnest($1::text[], $2::text[], $3::text[]) AS v (id, summary, body) WHERE m.id = v.id`, ids, summaries, bodies); err != nil {
			return fmt.Errorf("reindex search: %w", err)
		}
		after = ids[len(ids)-1]
	}
	_, err := tx.ExecContext(ctx, `ANALYZE messages`)
	return err
}

// searchVector is the SQL of a message's search column from its summary's
// (weight A) and body's (weight B) search words.
func searchVector(summary, body string) string {
	return `setweight(to_tsvector('simple', ` + summary + `), 'A') || setweight(to_tsvector('simple', ` + body + `), 'B')`
}

// rebaseEventTx keeps event positions growing when the database was
// restored from a dump into a cluster whose transaction counter is behind
// the stored events' (a fresh cluster starts counting again): it raises
// event_tx_base (migration 0017) so that every transaction to come is
// numbered after every stored event and the pruned-through mark.
func rebaseEventTx(ctx context.Context, tx *sql.Tx) error {
	var stored, next, base int64
	var pruned sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT MAX(tx) FROM events), 0),
		CAST(CAST(pg_snapshot_xmax(pg_current_snapshot()) AS TEXT) AS BIGINT), palaver_event_tx_base(),
		(SELECT value FROM meta WHERE key = $1)`, hub.MetaPrunedThrough).Scan(&stored, &next, &base, &pruned)
	if err != nil {
		return fmt.Errorf("event positions: %w", err)
	}
	if p, err := hub.ParsePos(pruned.String); err == nil {
		stored = max(stored, p.Tx)
	}
	if next+base > stored {
		return nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('event_tx_base', $1)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(stored-next+1, 10))
	if err != nil {
		return fmt.Errorf("event positions: %w", err)
	}
	return nil
}

// postgresSearch matches and ranks with the query written out in the
// statement, so the planner sees how common its words are: a rare word is
// found through the GIN index, a common one by walking the newest sent
// messages (messages_sent_newest) until the window is full.
var postgresSearch = searchDialect{
	inner:     `m.id AS r FROM messages m`,
	where:     `m.search @@ to_tsquery('simple', ?)`,
	newest:    `m.created_at DESC, m.id DESC`,
	outer:     `JOIN messages m ON m.id = h.r`,
	rank:      `ts_rank(m.search, to_tsquery('simple', ?)) DESC`,
	rankMatch: true,
	match:     func(q *fulltext.Query, _ []string) string { return tsqueryMatch(q) },
	// Planned afresh with each query's words, never a generic plan that
	// takes every word for a rare one.
	first:  pgx.QueryExecModeExec,
	vector: searchVector("?", "?"),
}

// openPostgres opens a connection pool shared by reads and writes.
func openPostgres(ctx context.Context, url string) (*sql.DB, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL: %w", err)
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return db, nil
}

// lockServing holds the database's serving lock on a connection of its
// own until release: shared for a replica serving it, exclusive (and
// refused at once while any replica holds it) for alone. The lock's key is
// the database's epoch, so databases in other schemas of one PostgreSQL
// database do not share it.
func lockServing(ctx context.Context, pool *sql.DB, alone bool) (release func(), err error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	lock := `SELECT pg_try_advisory_lock_shared(hashtextextended('palaver serving ' || value, 0)) FROM meta WHERE key = 'epoch'`
	if alone {
		lock = `SELECT pg_try_advisory_lock(hashtextextended('palaver serving ' || value, 0)) FROM meta WHERE key = 'epoch'`
	}
	var got bool
	if err := conn.QueryRowContext(ctx, lock).Scan(&got); err != nil {
		conn.Close()
		return nil, fmt.Errorf("serving lock: %w", err)
	}
	if !got {
		conn.Close()
		return nil, fmt.Errorf("the database is %w: palaver servers are serving it; stop every replica first, then run this again before any starts", ErrLocked)
	}
	return func() {
		// The connection goes back to the pool, so the lock is let go of
		// by name; a broken connection took it with it.
		conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock_all()`)
		conn.Close()
	}, nil
}

// postgresDuplicate reports PostgreSQL's unique_violation.
func postgresDuplicate(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
