package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/palaverhq/palaver/internal/hub"
)

var postgresDialect = &dialect{
	name:          "postgres",
	dollar:        true,
	migrationLock: `SELECT pg_advisory_xact_lock(7420001)`,
	// Transactions that insert events take turns from the first event to
	// the commit, so identity values are handed out in commit order.
	eventLock:        `SELECT pg_advisory_xact_lock(7420002)`,
	lockConversation: `SELECT id FROM conversations WHERE id = ? FOR UPDATE`,
	lockProject:      `SELECT id FROM projects WHERE id = ? FOR UPDATE`,
	lockUsers:        `LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`,
	skipLocked:       ` FOR UPDATE OF c SKIP LOCKED`,
	// Only committed rows are seen; after pruning everything, the
	// recorded high-water mark stands in.
	latestEvent: `SELECT GREATEST(COALESCE((SELECT MAX(id) FROM events), 0),
		COALESCE((SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'events_pruned_through'), 0))`,
	retryable: func(err error) bool {
		var pe *pgconn.PgError
		// serialization_failure, deadlock_detected
		return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
	},
	search: postgresSearch,
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
	match:     func(q *hub.Query, _ []string) string { return tsqueryMatch(q) },
	// Planned afresh with each query's words, never a generic plan that
	// takes every word for a rare one.
	first: pgx.QueryExecModeExec,
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

// postgresDuplicate reports PostgreSQL's unique_violation.
func postgresDuplicate(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
