package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// indexed waits, ten seconds at most, for db's search index to hold
// every message committed so far.
func indexed(t testing.TB, db *store.DB) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.SearchIndexed(c); err != nil {
		t.Fatalf("search index: %v", err)
	}
}

// indexerPasses waits, ten seconds at most, for db's indexer to have
// ended n passes since db opened, none of them asked for.
func indexerPasses(t testing.TB, db *store.DB, n uint64) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := store.WaitIndexerPasses(c, db, n); err != nil {
		t.Fatalf("search indexer: %v", err)
	}
}

// searchEntries counts the rows of SQLite's search index, read beside the
// store: one per message indexed.
func searchEntries(t *testing.T, path string) int {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM message_search`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSearchIndexerWokenByTheWriter: a send's commit writes nothing of the
// search index; the writer wakes the indexer, which indexes it — with no
// look of its own for an hour, only the writer can have woken it.
func TestSearchIndexerWokenByTheWriter(t *testing.T) {
	store.SetIndexEvery(t, time.Hour)
	path := filepath.Join(t.TempDir(), "palaver.db")
	db, err := store.Open(ctx, store.Options{Database: path, Index: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := newSearchWorld(t, db)
	indexerPasses(t, db, 1) // the one at the start
	before := searchEntries(t, path)
	id := w.add("conv_a", "alice/a", hub.MessageSent, "", "the quarterly kumquat report")
	indexerPasses(t, db, 2)
	if got := searchEntries(t, path); got != before+1 {
		t.Errorf("index entries after one send: %d, want %d", got, before+1)
	}
	if diff := cmp.Diff([]string{id}, w.search(hub.SearchFilter{ParticipantID: "agt_a"}, "kumquat")); diff != "" {
		t.Errorf("the sent message (-want +got):\n%s", diff)
	}
}

// TestSearchIndexesHeldMessagesOnceApproved: a held message is passed over
// while held, whether the indexer's mark has passed it or not when its
// owner approves it; approved, it is indexed once, by its final words; a
// rejected one never is.
func TestSearchIndexesHeldMessagesOnceApproved(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSearchWorld(t, db)
		reader := hub.SearchFilter{ParticipantID: "agt_a"}
		passed := w.add("conv_a", "alice/a", hub.MessageHeld, "", "draft about plums")
		rejected := w.add("conv_a", "alice/a", hub.MessageHeld, "", "draft about plums too")
		w.add("conv_a", "carol", hub.MessageSent, "", "a word after them")
		if got := w.search(reader, "plums"); len(got) != 0 { // indexed up to "after"
			t.Fatalf("held messages found: %v", got)
		}
		ahead := w.add("conv_a", "alice/a", hub.MessageHeld, "", "draft about figs")
		decide := func(m *hub.Message) {
			t.Helper()
			m.DecidedBy, m.DecidedAt = "usr_alice", time.UnixMilli(2_000_000).UTC()
			if err := db.Update(ctx, func(tx hub.Tx) error { return tx.DecideMessage(ctx, m) }); err != nil {
				t.Fatal(err)
			}
		}
		decide(&hub.Message{ID: passed, Status: hub.MessageSent, Seq: 50, Body: "final words about apricots",
			OriginalBody: "draft about plums", Authority: hub.AuthorityEdited})
		decide(&hub.Message{ID: rejected, Status: hub.MessageRejected, Body: "draft about plums too", Authority: hub.AuthorityAgent})
		decide(&hub.Message{ID: ahead, Status: hub.MessageSent, Seq: 51, Body: "draft about figs", Authority: hub.AuthorityAgent})
		for query, want := range map[string][]string{"apricots": {passed}, "plums": {}, "figs": {ahead}} {
			if diff := cmp.Diff(want, w.search(reader, query)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", query, diff)
			}
		}
	})
}

// TestSearchIndexEntriesOnce: on SQLite every sent message has one row in
// the index, however the indexer came to it — after its send, after an
// approval ahead of the mark or behind it, looked at again.
func TestSearchIndexEntriesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palaver.db")
	db, err := store.Open(ctx, store.Options{Database: path, Index: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := newSearchWorld(t, db)
	behind := w.add("conv_a", "alice/a", hub.MessageHeld, "", "one")
	w.add("conv_a", "alice/a", hub.MessageSent, "", "two")
	indexed(t, db)
	ahead := w.add("conv_a", "alice/a", hub.MessageHeld, "", "three")
	err = db.Update(ctx, func(tx hub.Tx) error {
		for i, id := range []string{behind, ahead} {
			if err := tx.DecideMessage(ctx, &hub.Message{ID: id, Status: hub.MessageSent, Seq: int64(60 + i), Body: "approved",
				Authority: hub.AuthorityAgent, DecidedBy: "usr_alice", DecidedAt: time.UnixMilli(2_000_000).UTC()}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	indexed(t, db)
	indexed(t, db)
	if got := searchEntries(t, path); got != 3 {
		t.Errorf("index entries for three sent messages: %d", got)
	}
}

// TestSearchIndexCatchesUpAfterARestart: what was committed but not yet
// indexed when the process ended — here the whole index, emptied and its
// mark put back to the start — is indexed by the next start, on its own,
// in several batches (the first looks at 64), each message once.
func TestSearchIndexCatchesUpAfterARestart(t *testing.T) {
	const backlog = 300
	store.SetIndexEvery(t, time.Hour)
	path := filepath.Join(t.TempDir(), "palaver.db")
	db, err := store.Open(ctx, store.Options{Database: path, Index: true})
	if err != nil {
		t.Fatal(err)
	}
	w := newSearchWorld(t, db)
	for range backlog {
		w.add("conv_a", "alice/a", hub.MessageSent, "", "lost tangerines")
	}
	indexed(t, db)
	db.Close()

	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`INSERT INTO message_search (message_search) VALUES ('delete-all')`,
		`UPDATE meta SET value = '0' WHERE key = 'search_indexed_through'`} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			raw.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	if got := searchEntries(t, path); got != 0 {
		t.Fatalf("index entries left: %d", got)
	}

	db, err = store.Open(ctx, store.Options{Database: path, Index: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	indexerPasses(t, db, 1)
	if got := searchEntries(t, path); got != backlog {
		t.Errorf("index entries after the restart: %d, want %d", got, backlog)
	}
	q, err := fulltext.Parse("tangerines")
	if err != nil {
		t.Fatal(err)
	}
	found, err := db.SearchMessages(ctx, hub.SearchFilter{ParticipantID: "agt_a", Query: q}, backlog+1)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != backlog {
		t.Errorf("found %d of the %d messages after the restart", len(found), backlog)
	}
}

// TestSearchIndexedBeforeClose: Close indexes what the last moments sent,
// so a clean stop leaves nothing for the next start.
func TestSearchIndexedBeforeClose(t *testing.T) {
	store.SetIndexEvery(t, time.Hour)
	path := filepath.Join(t.TempDir(), "palaver.db")
	db, err := store.Open(ctx, store.Options{Database: path, Index: true})
	if err != nil {
		t.Fatal(err)
	}
	w := newSearchWorld(t, db)
	indexerPasses(t, db, 1)
	for range 3 {
		w.add("conv_a", "alice/a", hub.MessageSent, "", "last words")
	}
	db.Close()
	if got := searchEntries(t, path); got != 3 {
		t.Errorf("index entries after Close: %d, want 3", got)
	}
}

// TestOnlyTheServersOpenIndexes: an open without Index (an admin command's)
// runs no indexer, so it never holds the file's write lock for the index
// while the server sends; what it writes is indexed by the server's open,
// on its own look. Asked, the admin's open indexes what is left itself.
func TestOnlyTheServersOpenIndexes(t *testing.T) {
	store.SetIndexEvery(t, 10*time.Millisecond)
	path := filepath.Join(t.TempDir(), "palaver.db")
	admin, err := store.Open(ctx, store.Options{Database: path})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if store.Indexes(admin) {
		t.Fatal("an admin's open runs a search indexer")
	}
	w := newSearchWorld(t, admin)
	w.add("conv_a", "alice/a", hub.MessageSent, "", "written by the admin")

	server, err := store.Open(ctx, store.Options{Database: path, Index: true})
	if err != nil {
		t.Fatal(err)
	}
	indexerPasses(t, server, 1)
	if got := searchEntries(t, path); got != 1 {
		t.Errorf("index entries after the server's look: %d, want 1", got)
	}
	server.Close()

	w.add("conv_a", "alice/a", hub.MessageSent, "", "written with no server")
	indexed(t, admin)
	if got := searchEntries(t, path); got != 2 {
		t.Errorf("index entries after the admin's open was asked: %d, want 2", got)
	}
}

// TestIndexerPace: catching up, a batch that held the writer past twice
// the slice halves the next, one within half of it doubles it, within
// 16..1000; after a full batch the indexer rests as long as it took, and a
// batch that was not full ends the pass with no rest.
func TestIndexerPace(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		size, n int
		took    time.Duration
		next    int
		rest    time.Duration
		more    bool
	}{
		{64, 64, 1 * ms, 128, 1 * ms, true},
		{64, 64, 10 * ms, 64, 10 * ms, true},
		{64, 64, 150 * ms, 32, 150 * ms, true},
		{16, 16, 150 * ms, 16, 150 * ms, true},
		{1000, 1000, 1 * ms, 1000, 1 * ms, true},
		{64, 63, 150 * ms, 64, 0, false},
		{64, 0, 0, 64, 0, false},
	} {
		next, rest, more := store.PaceAfter(c.size, c.n, c.took)
		if next != c.next || rest != c.rest || more != c.more {
			t.Errorf("after %d of %d in %s: next %d, rest %s, more %v; want %d, %s, %v",
				c.n, c.size, c.took, next, rest, more, c.next, c.rest, c.more)
		}
	}
}

// TestIndexBatchReadsOnlyItsRows: the indexer's statement looks messages up
// by rowid, in its batch's range or from the pending table, and walks no
// range of messages below the mark (which grows with the history: 30 ms a
// batch at a million messages when it did).
func TestIndexBatchReadsOnlyItsRows(t *testing.T) {
	// The statement's own function is not registered on the plan's
	// connection; the plan does not depend on it.
	stmt := strings.ReplaceAll(store.IndexSearchSQL, "palaver_search_text", "lower")
	stmt = stmt[strings.Index(stmt, "SELECT"):]
	queryPlan(t, stmt, []any{10, 20, 10}, "SEARCH m USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)",
		"SEARCH p USING INTEGER PRIMARY KEY (rowid<?)", "SEARCH m USING INTEGER PRIMARY KEY (rowid=?)")
}
