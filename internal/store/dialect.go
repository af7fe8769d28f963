package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// dialect is what differs between SQLite and PostgreSQL beyond the
// migrations: placeholders, how writes are committed, and a few statements.
type dialect struct {
	name string // the migrations folder
	// groupCommit: one writer goroutine commits queued Updates together
	// (SQLite); otherwise each Update is its own transaction (PostgreSQL).
	groupCommit bool
	// dollar: placeholders are $1, $2 … instead of ?.
	dollar bool
	// prepare: keep prepared statements in a stmtCache. pgx caches them per
	// connection itself, and preparing on a pool from inside a transaction
	// could wait for a connection that the waiting transactions hold.
	prepare bool
	// migrationLock is run first in the migration transaction.
	migrationLock string
	// eventTx: events are ordered by (tx, id), and read only below the
	// horizon, the oldest transaction still running (PostgreSQL, where
	// replicas commit side by side; §13: a cursor never skips an event
	// whose transaction committed late). Otherwise one writer commits in
	// id order, and tx is always 0.
	eventTx bool
	// eventHeld is true of an event read past the horizon, which must
	// wait for the transactions before it to end.
	eventHeld string
	// consecutiveIDs: the rows of one multi-row INSERT get consecutive
	// ids, the last reported by LastInsertId (SQLite, one writer);
	// otherwise the ids come back by RETURNING.
	consecutiveIDs bool
	// foldSend: a send's reads and its writes are each one statement
	// (PostgreSQL, where a WITH may write and a LATERAL join reads beside
	// a row): SendView and AppendMessage; otherwise they run their
	// statements in turn.
	foldSend bool
	// rowidEvents: a new event's id is one past the largest in the table
	// (SQLite's rowid, without AUTOINCREMENT: migration 0031), and ids
	// follow the events' times (one writer commits in id order). Pruning
	// keeps the newest event's row, blanked, so that no id is given
	// twice, and finds its bound by a binary search over ids rather than
	// an index on created_at (events.go).
	rowidEvents bool
	// lockConversation holds a conversation for the transaction,
	// lockProject a project's row, lockUsers the people's table against
	// new rows.
	lockConversation string
	lockProject      string
	lockUsers        string
	// skipLocked ends the select of a claim: rows another transaction
	// holds are passed over rather than waited for ("" where one writer
	// commits everything). The claimed table is named c.
	skipLocked string
	// latestEvent selects the newest transaction of events held back
	// past the horizon (0 if none), then the position (tx, id) of the
	// last event committed before them (NULL if none; the pruned-through
	// mark stands in after pruning everything).
	latestEvent string
	// retryable reports an error after which the whole transaction may be
	// run again.
	retryable func(error) bool
	// search is how full-text search is said (§18, search.go).
	search searchDialect
	// afterMigrate, if set, runs in the migration transaction after the
	// migrations.
	afterMigrate func(context.Context, *sql.Tx) error
	// migrationSteps are the steps in Go that move data a migration's SQL
	// cannot, by the migration's version: each runs right after its
	// migration, in the same transaction.
	migrationSteps map[int]func(context.Context, *sql.Tx) error
}

// rebind turns ? placeholders into the dialect's. Palaver's SQL has no ?
// inside string literals.
func (d *dialect) rebind(query string) string {
	if !d.dollar || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
