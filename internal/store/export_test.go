package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// CountSent is tx's CountSent, the counts SendView reads where it does
// not fold them into the conversation's read.
func CountSent(ctx context.Context, tx hub.Tx, conversationID, senderID, body string, sameSince, recentSince time.Time, max int) (same, recent int, err error) {
	return tx.(queries).CountSent(ctx, conversationID, senderID, body, sameSince, recentSince, max)
}

// SetIndexEvery makes the search indexers opened during t look on their
// own only every d, so that a test sees what the writer wakes.
func SetIndexEvery(t testing.TB, d time.Duration) {
	old := indexEvery
	indexEvery = d
	t.Cleanup(func() { indexEvery = old })
}

// WaitIndexerPasses waits for db's search indexer to have ended n passes
// since db opened, without asking for any (SQLite).
func WaitIndexerPasses(ctx context.Context, db *DB, n uint64) error {
	return db.indexer.waitPasses(ctx, n)
}

// Indexes reports whether db runs a search indexer.
func Indexes(db *DB) bool { return db.indexer != nil }

// PaceAfter is the indexer's pace after a batch of n of size that took
// took: the next batch's size, the rest before it and whether there is more.
func PaceAfter(size, n int, took time.Duration) (next int, rest time.Duration, more bool) {
	p := pace{size: size}
	rest, more = p.after(n, took)
	return p.size, rest, more
}

// IndexSearchSQL is the indexer's statement, for a test of its plan.
const IndexSearchSQL = indexSearchSQL

// CountSentSQL and SentLogSQL are the brakes' looks at a sender's
// messages, for a test of their plans.
var (
	CountSentSQL = countSentSQL
	SentLogSQL   = sentLogSQL
)

// OpenThrough opens o's database with the migrations applied only through
// version n, as a palaver of that time left it. A test writes its rows there
// with raw SQL on Raw, as that palaver's code wrote them, and closes it; the
// next Open runs the later migrations once, as an upgrade does.
func OpenThrough(ctx context.Context, o Options, n int) (*DB, error) { return open(ctx, o, n) }

// Raw is db's writing connection, for SQL a test runs past the store's
// methods.
func Raw(db *DB) *sql.DB { return db.write }
