package store

import (
	"context"
	"testing"
	"time"
)

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
const (
	CountSentSQL = countSentSQL
	SentLogSQL   = sentLogSQL
)
