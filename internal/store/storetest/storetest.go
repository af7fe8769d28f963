// Package storetest runs store tests on every backend (CONVENTIONS "Tests").
package storetest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/palaverhq/palaver/internal/store"
)

// ForEachBackend runs f as a subtest on each backend with a fresh, migrated
// database: SQLite in a temp file always; PostgreSQL when
// PALAVER_TEST_DATABASE_URL is set — the PostgreSQL store is not built yet,
// so that subtest says so and skips.
func ForEachBackend(t *testing.T, f func(t *testing.T, db *store.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		f(t, OpenSQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv("PALAVER_TEST_DATABASE_URL") == "" {
			t.Skip("PostgreSQL tests skipped: set PALAVER_TEST_DATABASE_URL to run them")
		}
		t.Skip("PostgreSQL tests skipped: the PostgreSQL store is not built yet")
	})
}

// OpenSQLite opens a fresh SQLite database in t's temp dir, closed at the
// end of the test.
func OpenSQLite(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Options{Path: filepath.Join(t.TempDir(), "palaver.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
