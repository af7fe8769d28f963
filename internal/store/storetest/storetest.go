// Package storetest runs store tests on every backend (CONVENTIONS "Tests").
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to make and drop test schemas

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
)

// EnvURL names the environment variable holding the PostgreSQL URL that
// tests use (a database they may create schemas in).
const EnvURL = "PALAVER_TEST_DATABASE_URL"

// ForEachBackend runs f as a subtest on each backend with a fresh, migrated
// database: SQLite in a temp file always; PostgreSQL, in a schema of its own,
// when PALAVER_TEST_DATABASE_URL is set (skipped with a message otherwise).
func ForEachBackend(t *testing.T, f func(t *testing.T, db *store.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { f(t, OpenSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, OpenPostgres(t)) })
}

// Backends runs f as a subtest per backend with a function that opens the
// backend's database: the same database each time it is called within one
// subtest (as replicas of one deployment do).
func Backends(t *testing.T, f func(t *testing.T, open func() *store.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "palaver.db")
		f(t, func() *store.DB { return open(t, path) })
	})
	t.Run("postgres", func(t *testing.T) {
		url := Schema(t)
		f(t, func() *store.DB { return open(t, url) })
	})
}

// OpenSQLite opens a fresh SQLite database in t's temp dir, closed at the
// end of the test.
func OpenSQLite(t testing.TB) *store.DB {
	t.Helper()
	return open(t, filepath.Join(t.TempDir(), "palaver.db"))
}

// OpenPostgres opens a fresh PostgreSQL database (a schema of its own),
// or skips t when PALAVER_TEST_DATABASE_URL is not set.
func OpenPostgres(t testing.TB) *store.DB {
	t.Helper()
	return open(t, Schema(t))
}

// Replicas opens n stores on one fresh PostgreSQL schema, as n replicas
// of a server share one database, or skips t when
// PALAVER_TEST_DATABASE_URL is not set.
func Replicas(t testing.TB, n int) []*store.DB {
	t.Helper()
	url := Schema(t)
	dbs := make([]*store.DB, n)
	for i := range dbs {
		dbs[i] = open(t, url)
	}
	return dbs
}

// SearchIndexed waits, ten seconds at most, until db's search index holds
// every message committed so far: SQLite's is filled after the commit
// (DESIGN.md §17), so a test that searches right after a send waits for
// it. db is a *store.DB, or a store that says when its index is filled.
func SearchIndexed(t testing.TB, db hub.Store) {
	t.Helper()
	s, ok := db.(interface{ SearchIndexed(context.Context) error })
	if !ok {
		t.Fatalf("store %T cannot say when its search index is filled", db)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.SearchIndexed(ctx); err != nil {
		t.Fatalf("search index: %v", err)
	}
}

func open(t testing.TB, database string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Options{Database: database, Index: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Schema makes an empty schema for t in the test PostgreSQL database,
// dropped at the end of the test, and returns a URL whose connections use
// it. It skips t when PALAVER_TEST_DATABASE_URL is not set.
func Schema(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		t.Skip("PostgreSQL tests skipped: set " + EnvURL + " (like postgres://postgres@127.0.0.1:5432/test) to run them")
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "palaver_test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema
}

// EnvStore names the environment variable that runs the hub and end-to-end
// suites on PostgreSQL instead of SQLite: PALAVER_TEST_STORE=postgres (with
// PALAVER_TEST_DATABASE_URL).
const EnvStore = "PALAVER_TEST_STORE"

// Open opens a fresh database on the backend PALAVER_TEST_STORE names
// (SQLite by default), so a whole suite can run on either.
func Open(t testing.TB) *store.DB {
	t.Helper()
	db, _ := OpenAnalyzed(t)
	return db
}

// OpenAnalyzed is Open, and a function that brings the database up to
// date as a server has it a while after rows arrive: a benchmark that
// fills the database calls it before it measures. On PostgreSQL it brings
// the query planner's statistics up to date, as autovacuum does; on
// SQLite (which plans without them) it waits for the search index, which
// is filled after the commit.
func OpenAnalyzed(t testing.TB) (*store.DB, func()) {
	t.Helper()
	if os.Getenv(EnvStore) != "postgres" {
		db := OpenSQLite(t)
		return db, func() { t.Helper(); SearchIndexed(t, db) }
	}
	url := Schema(t)
	return open(t, url), func() {
		t.Helper()
		db, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("ANALYZE"); err != nil {
			t.Fatal(err)
		}
	}
}

// EventsAfter is the store's EventsAfter once no committed event of the
// recipient is held back (hub.Pos): on PostgreSQL an event committed a
// moment ago waits for every older transaction on the cluster to end,
// other tests' included. It fails t if they are still held after 10 s.
func EventsAfter(t testing.TB, s interface {
	EventsAfter(ctx context.Context, recipientID string, after hub.Pos, limit int) ([]*hub.Event, int64, error)
}, recipientID string, after hub.Pos, limit int) []*hub.Event {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		events, heldTx, err := s.EventsAfter(context.Background(), recipientID, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		if heldTx == 0 {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("events of %s still held back after 10 s, behind transaction %d", recipientID, heldTx)
		}
		runtime.Gosched()
	}
}
