package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestEventIDsFollowCommitOrder: on PostgreSQL a transaction that started
// inserting events first but commits last must not leave a reader's cursor
// past events it has not seen. Transaction A inserts an event and stalls
// before committing; B then inserts one and must wait for A, so B's id is
// higher and a reader who saw A's event (cursor = A's id) still gets B's.
func TestEventIDsFollowCommitOrder(t *testing.T) {
	url := storetest.Schema(t)
	db, err := store.Open(ctx, store.Options{Database: url})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	stall, release := make(chan struct{}), make(chan struct{})
	var idA, idB int64
	doneA, doneB := make(chan error, 1), make(chan error, 1)
	go func() {
		doneA <- db.Update(ctx, func(tx hub.Tx) error {
			e := &hub.Event{RecipientID: "agt_r", Type: hub.EventMessageNew, CreatedAt: time.Now()}
			if err := tx.InsertEvents(ctx, []*hub.Event{e}); err != nil {
				return err
			}
			idA = e.ID
			close(stall)
			<-release // A holds its transaction open
			return nil
		})
	}()
	<-stall
	go func() {
		doneB <- db.Update(ctx, func(tx hub.Tx) error {
			e := &hub.Event{RecipientID: "agt_r", Type: hub.EventMessageNew, CreatedAt: time.Now()}
			err := tx.InsertEvents(ctx, []*hub.Event{e})
			idB = e.ID
			return err
		})
	}()
	// B is waiting for A's turn: its lock request shows in pg_locks.
	admin, err := sql.Open("pgx", os.Getenv(storetest.EnvURL))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		admin.QueryRow(`SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting)
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("B never waited for A")
		}
		runtime.Gosched()
	}
	if latest, _ := db.LatestEventID(ctx); latest != 0 {
		t.Fatalf("latest event id while A is uncommitted = %d, want 0", latest)
	}
	close(release)
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	if err := <-doneB; err != nil {
		t.Fatal(err)
	}
	if idB <= idA {
		t.Fatalf("B's event id %d is not after A's %d although B committed after A", idB, idA)
	}
	events, err := db.EventsAfter(ctx, "agt_r", idA, 10)
	if err != nil || len(events) != 1 || events[0].ID != idB {
		t.Fatalf("a reader at A's cursor gets %+v, %v; want B's event", events, err)
	}
}

// TestSchemasMatch: both dialects' migrations make the same tables with the
// same columns.
func TestSchemasMatch(t *testing.T) {
	url := storetest.Schema(t)
	pg, err := store.Open(ctx, store.Options{Database: url})
	if err != nil {
		t.Fatal(err)
	}
	pg.Close()
	path := filepath.Join(t.TempDir(), "palaver.db")
	lite, err := store.Open(ctx, store.Options{Database: path})
	if err != nil {
		t.Fatal(err)
	}
	lite.Close()

	columns := func(db *sql.DB, q string) map[string][]string {
		t.Helper()
		rows, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string][]string{}
		for rows.Next() {
			var table, column string
			if err := rows.Scan(&table, &column); err != nil {
				t.Fatal(err)
			}
			// The full-text index is the one thing each dialect keeps
			// its own way (§18): FTS5's tables, a tsvector column.
			if strings.HasPrefix(table, "sqlite_") || strings.HasPrefix(table, "message_search") || table == "messages" && column == "search" {
				continue
			}
			out[table] = append(out[table], column)
		}
		for table := range out {
			slices.Sort(out[table])
		}
		return out
	}
	pgdb, _ := sql.Open("pgx", url)
	defer pgdb.Close()
	schema := url[strings.LastIndex(url, "=")+1:]
	fromPG := columns(pgdb, `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = '`+schema+`'`)
	litedb, _ := sql.Open("sqlite", path)
	defer litedb.Close()
	fromLite := columns(litedb, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'`)
	if len(fromLite) < 10 {
		t.Fatalf("SQLite has only %d tables", len(fromLite))
	}
	if diff := cmp.Diff(fromLite, fromPG); diff != "" {
		t.Errorf("tables and columns differ (-sqlite +postgres):\n%s", diff)
	}
}
