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
