package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

var ctx = context.Background()

func insertUser(t *testing.T, db *store.DB, handle string) *hub.User {
	t.Helper()
	u := &hub.User{ID: "usr_" + handle, Handle: handle, CreatedAt: time.UnixMilli(1000).UTC()}
	if err := db.Update(ctx, func(tx hub.Tx) error { return tx.InsertUser(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestUpdateGroupCommitIsolatesFailures(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		// 50 concurrent Updates share commits; every odd one fails after
		// writing, and only its own write is rolled back.
		var wg sync.WaitGroup
		errs := make([]error, 50)
		for i := range 50 {
			wg.Go(func() {
				errs[i] = db.Update(ctx, func(tx hub.Tx) error {
					u := &hub.User{ID: fmt.Sprintf("usr_%02d", i), Handle: fmt.Sprintf("user-%02d", i), CreatedAt: time.Now()}
					if err := tx.InsertUser(ctx, u); err != nil {
						return err
					}
					if i%2 == 1 {
						return errors.New("refused")
					}
					return nil
				})
			})
		}
		wg.Wait()
		for i, err := range errs {
			_, lookErr := db.UserByHandle(ctx, fmt.Sprintf("user-%02d", i))
			if i%2 == 1 {
				if err == nil || err.Error() != "refused" {
					t.Errorf("update %d: err = %v, want refused", i, err)
				}
				if !errors.Is(lookErr, hub.ErrNoRows) {
					t.Errorf("user-%02d of a failed update: lookup err = %v, want ErrNoRows", i, lookErr)
				}
				continue
			}
			if err != nil || lookErr != nil {
				t.Errorf("update %d: err = %v, lookup err = %v", i, err, lookErr)
			}
		}
	})
}

func TestUniqueViolationIsDuplicate(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		insertUser(t, db, "alice")
		err := db.Update(ctx, func(tx hub.Tx) error {
			return tx.InsertUser(ctx, &hub.User{ID: "usr_other", Handle: "alice", CreatedAt: time.Now()})
		})
		if !errors.Is(err, hub.ErrDuplicate) {
			t.Fatalf("err = %v, want ErrDuplicate", err)
		}
		if _, err := db.UserByHandle(ctx, "nobody"); !errors.Is(err, hub.ErrNoRows) {
			t.Fatalf("missing user: err = %v, want ErrNoRows", err)
		}
	})
}

func TestNextSeqCountsPerConversation(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		for _, id := range []string{"conv_a", "conv_b"} {
			c := &hub.Conversation{ID: id, Kind: hub.KindGroup, Status: hub.StatusOpen, CreatorID: "agt_x", CreatedAt: time.Now(), UpdatedAt: time.Now()}
			if err := db.Update(ctx, func(tx hub.Tx) error { return tx.InsertConversation(ctx, c) }); err != nil {
				t.Fatal(err)
			}
		}
		var got []int64
		for _, id := range []string{"conv_a", "conv_a", "conv_b", "conv_a"} {
			err := db.Update(ctx, func(tx hub.Tx) error {
				seq, err := tx.NextSeq(ctx, id, time.Now())
				got = append(got, seq)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff([]int64{1, 2, 1, 3}, got); diff != "" {
			t.Errorf("seqs (-want +got):\n%s", diff)
		}
	})
}

func TestLatestEventSurvivesPruning(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		old := time.UnixMilli(1_000_000).UTC()
		err := db.Update(ctx, func(tx hub.Tx) error {
			return tx.InsertEvents(ctx, []*hub.Event{
				{RecipientID: "agt_a", Type: hub.EventMessageNew, CreatedAt: old},
				{RecipientID: "agt_a", Type: hub.EventMessageNew, CreatedAt: old},
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		var through hub.Pos
		err = db.Update(ctx, func(tx hub.Tx) error {
			through, err = tx.PruneEvents(ctx, old.Add(time.Second))
			return err
		})
		if err != nil || through.ID != 2 {
			t.Fatalf("prune: through = %v, err = %v; want event 2", through, err)
		}
		latest, _, err := db.LatestEvent(ctx)
		if err != nil || latest.Compare(through) < 0 {
			t.Fatalf("latest event after pruning everything = %v, %v; want %v or later", latest, err, through)
		}
		events, _, err := db.EventsAfter(ctx, "agt_a", hub.Pos{}, 10)
		if err != nil || len(events) != 0 {
			t.Fatalf("events after pruning = %d, %v; want none", len(events), err)
		}
	})
}

func TestSecondExclusiveOpenRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palaver.db")
	opts := store.Options{Database: path, Exclusive: true, Logger: slog.New(slog.DiscardHandler)}
	first, err := store.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(ctx, opts)
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "another palaver server is already using it") {
		t.Fatalf("second exclusive open: err = %v, want ErrLocked with an explanation", err)
	}
	// An admin command (not exclusive) may still open it.
	admin, err := store.Open(ctx, store.Options{Database: path, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("non-exclusive open beside a server: %v", err)
	}
	admin.Close()
	first.Close()
	again, err := store.Open(ctx, opts)
	if err != nil {
		t.Fatalf("exclusive open after the first closed: %v", err)
	}
	again.Close()
}

func TestReopenKeepsEpochAndData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palaver.db")
	opts := store.Options{Database: path, Logger: slog.New(slog.DiscardHandler)}
	db, err := store.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	epoch, _ := db.Meta(ctx, hub.MetaEpoch)
	insertUser(t, db, "alice")
	db.Close()
	if err := db.Update(ctx, func(hub.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Update after Close: err = %v, want ErrClosed", err)
	}

	db, err = store.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	again, _ := db.Meta(ctx, hub.MetaEpoch)
	if epoch == "" || again != epoch {
		t.Fatalf("epoch = %q after reopen, want %q", again, epoch)
	}
	if _, err := db.UserByHandle(ctx, "alice"); err != nil {
		t.Fatalf("user after reopen: %v", err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palaver.db")
	db, err := store.Open(ctx, store.Options{Database: path, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err = store.Open(ctx, store.Options{Database: path, Logger: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "upgrade palaver") {
		t.Fatalf("opening a database from a newer palaver: %v, want a refusal saying to upgrade", err)
	}
}

// openThrough opens database migrated only through version through and
// runs stmts on it: rows written with raw SQL as the code of that time
// wrote them, not by today's methods, whose columns follow the newest
// schema. The caller closes it; the next store.Open runs the migrations
// after through once, as an upgrade does.
func openThrough(t *testing.T, database string, through int, stmts ...string) *store.DB {
	t.Helper()
	db, err := store.OpenThrough(ctx, store.Options{Database: database, Logger: slog.New(slog.DiscardHandler)}, through)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range stmts {
		if _, err := store.Raw(db).ExecContext(ctx, q); err != nil {
			db.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db
}

func TestBackupIsAConsistentCopy(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(ctx, store.Options{Database: filepath.Join(dir, "palaver.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	insertUser(t, db, "alice")
	epoch, _ := db.Meta(ctx, hub.MetaEpoch)
	copyPath := filepath.Join(dir, "backup.db")
	if err := db.Backup(ctx, copyPath); err != nil {
		t.Fatal(err)
	}
	if err := db.Backup(ctx, copyPath); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("backing up over a file: %v", err)
	}
	restored, err := store.Open(ctx, store.Options{Database: copyPath, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	if got, _ := restored.Meta(ctx, hub.MetaEpoch); got != epoch {
		t.Fatalf("the copy's epoch %q, want %q (cursors must stay valid)", got, epoch)
	}
	if _, err := restored.UserByHandle(ctx, "alice"); err != nil {
		t.Fatalf("the copy lost a user: %v", err)
	}
}

// TestInsertEventsGivesEachItsID: events inserted together, over more than
// one statement's worth of rows, each get the id their row was stored
// under, in order.
func TestInsertEventsGivesEachItsID(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		var events []*hub.Event
		for i := range 40 { // more than one multi-row INSERT
			events = append(events, &hub.Event{RecipientID: fmt.Sprintf("agt_%02d", i), Type: hub.EventMessageNew, CreatedAt: time.UnixMilli(1000).UTC()})
		}
		for range 2 {
			if err := db.Update(ctx, func(tx hub.Tx) error { return tx.InsertEvents(ctx, events) }); err != nil {
				t.Fatal(err)
			}
			for i, e := range events {
				if i > 0 && e.ID <= events[i-1].ID {
					t.Fatalf("event %d has id %d after %d", i, e.ID, events[i-1].ID)
				}
				stored := storetest.EventsAfter(t, db, e.RecipientID, hub.Pos{Tx: e.Tx, ID: e.ID - 1}, 1)
				if len(stored) != 1 || stored[0].ID != e.ID {
					t.Fatalf("event %d for %s: given id %d, stored %+v", i, e.RecipientID, e.ID, stored)
				}
			}
		}
	})
}

// TestWritesCountCommitsAndPages: each commit is counted, and on SQLite
// the pages it wrote to the WAL, which palaver bench divides to give a
// send's write set (§17); PostgreSQL counts no pages.
func TestWritesCountCommitsAndPages(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		commits, pages := db.Writes()
		insertUser(t, db, "writes")
		afterCommits, afterPages := db.Writes()
		if afterCommits != commits+1 {
			t.Errorf("commits went from %d to %d, want one more", commits, afterCommits)
		}
		sqlite := !strings.HasPrefix(t.Name(), "TestWritesCountCommitsAndPages/postgres")
		if grew := afterPages > pages; grew != sqlite {
			t.Errorf("pages went from %d to %d; want them to grow only on SQLite (%v)", pages, afterPages, sqlite)
		}
	})
}
