package store_test

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestOneSendWritesTheseBTrees names every B-tree (table or index) a
// one-send commit writes on SQLite, read off the WAL's frames after a
// checkpoint emptied it. Each is a write a send pays for on its own
// commit (§17: each index a send writes is justified by a read that needs
// it, docs/performance.md says which), so a new one fails here until it
// is added with its reason. Page 1, whose header SQLite rewrites when the
// file grows, is not a B-tree of the send's; nor is the search index,
// which the indexer fills after the commit (§17).
func TestOneSendWritesTheseBTrees(t *testing.T) {
	path := filepath.Join(t.TempDir(), "writeset.db")
	db, err := store.Open(ctx, store.Options{Database: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w := hubtest.OpenOn(t, hub.DefaultSettings(), db)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	for i := range 5 { // the conversation's and the agents' first rows are written
		w.Send(t, w.Planner, conv, fmt.Sprintf("warming up, %d", i))
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	written := map[string]bool{}
	for round := range 3 {
		storetest.SearchIndexed(t, db) // the indexer has nothing left to write
		var busy, log, done int
		if err := raw.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done); err != nil || busy != 0 {
			t.Fatalf("checkpoint: busy %d, %v", busy, err)
		}
		w.Send(t, w.Planner, conv, fmt.Sprintf("the send measured, %d", round))
		wal, err := os.ReadFile(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		// The WAL: a 32-byte header, then frames of a 24-byte header
		// (the page's number, then the database's size in pages on the
		// last frame of a commit, 0 on the others) and the page. Only
		// the first commit is the send's: the search indexer commits on
		// its own, later.
		pageSize := int(binary.BigEndian.Uint32(wal[8:12]))
		for off, last := 32, false; !last && off+24+pageSize <= len(wal); off += 24 + pageSize {
			page := binary.BigEndian.Uint32(wal[off : off+4])
			last = binary.BigEndian.Uint32(wal[off+4:off+8]) != 0
			var name string
			if err := raw.QueryRow("SELECT name FROM dbstat WHERE pageno = ?", page).Scan(&name); err != nil {
				t.Fatalf("page %d: %v", page, err)
			}
			if name != "sqlite_schema" {
				written[name] = true
			}
		}
	}
	want := []string{
		"conversations",                                                     // the conversation's next seq
		"deliveries", "deliveries_waiting", "sqlite_autoindex_deliveries_1", // the recipient's delivery
		"events", "events_recipient", // the recipient's event and the owner's
		"messages", "messages_recent", "messages_sender", "sqlite_autoindex_messages_1", "sqlite_autoindex_messages_2",
		"reads", // the sender's place
	}
	slices.Sort(want)
	got := slices.Sorted(func(yield func(string) bool) {
		for name := range written {
			if !yield(name) {
				return
			}
		}
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("B-trees a one-send commit writes (-want +got):\n%s", diff)
	}
}

// TestTheBrakesReadTheSendersIndex: the duplicate and budget brakes' looks
// at a sender's messages, and the writer's kept counts, read the one index
// of a sender's messages a send writes (messages_sender), the counts from
// it alone.
func TestTheBrakesReadTheSendersIndex(t *testing.T) {
	queryPlan(t, store.CountSentSQL, []any{"agt_a", "conv_a", "hash", 0, "words", 10, "agt_a", "conv_a", 0, 10},
		"SCAN CONSTANT ROW",
		"SEARCH messages USING INDEX messages_sender (sender_id=? AND conversation_id=? AND created_at>?)", "SCAN same",
		"SEARCH messages USING COVERING INDEX messages_sender (sender_id=? AND conversation_id=? AND created_at>?)", "SCAN recent")
	queryPlan(t, store.SentLogSQL, []any{"agt_a", "conv_a", 0, 10},
		"SEARCH messages USING COVERING INDEX messages_sender (sender_id=? AND conversation_id=? AND created_at>?)")
}

// queryPlan checks the tables and indexes a statement reads (the SEARCH
// and SCAN lines of its plan, in order) on a new SQLite database.
func queryPlan(t *testing.T, stmt string, args []any, want ...string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "palaver.db")
	db, err := store.Open(ctx, store.Options{Database: path})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.QueryContext(ctx, "EXPLAIN QUERY PLAN "+stmt, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan, got []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
		if strings.HasPrefix(detail, "SEARCH") || strings.HasPrefix(detail, "SCAN") {
			got = append(got, detail)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the plan:\n%s\nwant its reads to be:\n%s", strings.Join(plan, "\n"), strings.Join(want, "\n"))
	}
}

// TestIndexerCommitsAreCountedApart: the search indexer's commits of its
// own, after the sends', are counted in IndexWrites and not in Writes,
// whose pages a commit are a send's write set (§17).
func TestIndexerCommitsAreCountedApart(t *testing.T) {
	db, err := store.Open(ctx, store.Options{Database: filepath.Join(t.TempDir(), "palaver.db"), Index: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w := hubtest.OpenOn(t, hub.DefaultSettings(), db)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	storetest.SearchIndexed(t, db)
	commits, pages := db.Writes()
	indexCommits, indexPages := db.IndexWrites()
	w.Send(t, w.Planner, conv, "words for the index")
	sentCommits, sentPages := db.Writes()
	storetest.SearchIndexed(t, db)
	afterCommits, afterPages := db.Writes()
	afterIndexCommits, afterIndexPages := db.IndexWrites()
	if sentCommits != commits+1 || sentPages <= pages {
		t.Errorf("the send: commits %d → %d, pages %d → %d; want one commit more, and pages", commits, sentCommits, pages, sentPages)
	}
	if afterCommits != sentCommits || afterPages != sentPages {
		t.Errorf("the indexer's pass moved Writes: commits %d → %d, pages %d → %d; want them apart", sentCommits, afterCommits, sentPages, afterPages)
	}
	if afterIndexCommits != indexCommits+1 || afterIndexPages <= indexPages {
		t.Errorf("IndexWrites: commits %d → %d, pages %d → %d; want the indexer's one commit and its pages", indexCommits, afterIndexCommits, indexPages, afterIndexPages)
	}
}
