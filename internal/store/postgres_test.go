package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestEventsWaitForEarlierTransactions: on PostgreSQL a transaction that
// inserted events first but commits last must not leave a reader's cursor
// past events it has not seen, and replicas do not take turns to commit.
// A, on one replica, inserts an event and stalls before committing; B, on
// the other, inserts one and commits. B's event is held back until A ends
// — a reader sees nothing but knows something waits — and then both come,
// A's first.
func TestEventsWaitForEarlierTransactions(t *testing.T) {
	dbs := storetest.Replicas(t, 2)
	one, two := dbs[0], dbs[1]
	start, _, err := one.LatestEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	event := func() *hub.Event {
		return &hub.Event{RecipientID: "agt_r", Type: hub.EventMessageNew, CreatedAt: time.Now()}
	}
	stall, release := make(chan struct{}), make(chan struct{})
	commitA := sync.OnceFunc(func() { close(release) })
	t.Cleanup(commitA) // before the stores close, also when the test fails
	a := event()
	doneA := make(chan error, 1)
	go func() {
		doneA <- one.Update(ctx, func(tx hub.Tx) error {
			if err := tx.InsertEvents(ctx, []*hub.Event{a}); err != nil {
				return err
			}
			close(stall)
			<-release // A holds its transaction open
			return nil
		})
	}()
	<-stall
	b := event()
	if err := two.Update(ctx, func(tx hub.Tx) error { return tx.InsertEvents(ctx, []*hub.Event{b}) }); err != nil {
		t.Fatalf("B, committing while A is open: %v", err)
	}
	events, heldTx, err := one.EventsAfter(ctx, "agt_r", start, 10)
	if err != nil || len(events) != 0 || heldTx != b.Tx {
		t.Fatalf("while A is open a reader gets %d events, held up to transaction %d, %v; want none, B's %d held back", len(events), heldTx, err, b.Tx)
	}
	if latest, heldTx, err := two.LatestEvent(ctx); err != nil || latest.Compare(a.Pos()) > 0 || heldTx != b.Tx {
		t.Fatalf("latest while A is open = %v, held up to transaction %d, %v; want at or before A's %v, held up to B's %d", latest, heldTx, err, a.Pos(), b.Tx)
	}
	commitA()
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	// Other transactions on the cluster may hold both back a moment more.
	events = storetest.EventsAfter(t, two, "agt_r", start, 10)
	if len(events) != 2 || events[0].ID != a.ID || events[1].ID != b.ID {
		t.Fatalf("after A commits a reader gets %+v; want A's event %d then B's %d", events, a.ID, b.ID)
	}
}

// TestAConversationsLockHoldsNoEventsBack: a send holds its conversation
// from its start, but takes its transaction id only at its first write,
// after its checks; until then it holds back no other transaction's
// events. With the conversation's row locked instead (FOR UPDATE gives
// the transaction its id at once), B's event stays held back.
func TestAConversationsLockHoldsNoEventsBack(t *testing.T) {
	dbs := storetest.Replicas(t, 2)
	one, two := dbs[0], dbs[1]
	now := time.Now()
	conv := &hub.Conversation{ID: "cnv_locked", Kind: hub.KindDirect, Status: hub.StatusOpen, CreatorID: "agt_c", CreatedAt: now, UpdatedAt: now}
	if err := one.Update(ctx, func(tx hub.Tx) error { return tx.InsertConversation(ctx, conv) }); err != nil {
		t.Fatal(err)
	}
	start, _, err := one.LatestEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	locked, release := make(chan struct{}), make(chan struct{})
	endA := sync.OnceFunc(func() { close(release) })
	t.Cleanup(endA) // before the stores close, also when the test fails
	doneA := make(chan error, 1)
	go func() {
		doneA <- one.Update(ctx, func(tx hub.Tx) error {
			if err := tx.LockConversation(ctx, conv.ID); err != nil {
				return err
			}
			if _, err := tx.ConversationView(ctx, conv.ID); err != nil { // a send's checks read
				return err
			}
			close(locked)
			<-release // A holds the conversation, and has written nothing yet
			return nil
		})
	}()
	<-locked
	b := &hub.Event{RecipientID: "agt_r", Type: hub.EventMessageNew, CreatedAt: now}
	if err := two.Update(ctx, func(tx hub.Tx) error { return tx.InsertEvents(ctx, []*hub.Event{b}) }); err != nil {
		t.Fatal(err)
	}
	// Other transactions on the cluster may hold B back a moment; A must
	// not hold it back for as long as A lasts.
	if events := storetest.EventsAfter(t, two, "agt_r", start, 10); len(events) != 1 || events[0].ID != b.ID {
		t.Fatalf("while A holds the conversation a reader gets %+v; want B's event %d", events, b.ID)
	}
	endA()
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
}

// TestEventsFromTwoReplicasNeitherSkippedNorRepeated: writers on two
// replicas commit events for one recipient side by side, some holding
// their transactions open a little, while a reader follows the stream
// with its cursor. The reader gets every committed event exactly once.
func TestEventsFromTwoReplicasNeitherSkippedNorRepeated(t *testing.T) {
	dbs := storetest.Replicas(t, 2)
	start, _, err := dbs[0].LatestEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const writers, txs = 8, 40 // per replica; 1–3 events a transaction
	var wg sync.WaitGroup
	var mu sync.Mutex
	var committed []int64
	errs := make(chan error, 2*writers)
	for r, db := range dbs {
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range txs {
					var ids []int64
					err := db.Update(ctx, func(tx hub.Tx) error {
						ids = ids[:0]
						n := 1 + (r+w+i)%3
						for range n {
							e := &hub.Event{RecipientID: "agt_r", Type: hub.EventMessageNew, CreatedAt: time.Now()}
							if err := tx.InsertEvents(ctx, []*hub.Event{e}); err != nil {
								return err
							}
							ids = append(ids, e.ID)
						}
						if i%4 == 0 { // a slow transaction, committing after later ones
							return tx.SetMeta(ctx, fmt.Sprintf("slow-%d-%d", r, w), strings.Repeat("x", 1+i))
						}
						return nil
					})
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					committed = append(committed, ids...)
					mu.Unlock()
				}
			}()
		}
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	seen := map[int64]int{}
	cursor := start
	read := func() {
		for {
			events, _, err := dbs[1].EventsAfter(ctx, "agt_r", cursor, 50)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range events {
				seen[e.ID]++
				cursor = e.Pos()
			}
			if len(events) < 50 {
				return
			}
		}
	}
	for done := false; !done; {
		select {
		case <-writing:
			done = true
		default:
		}
		read()
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// What committed last, once nothing of it is held back behind another
	// transaction on the cluster.
	for _, e := range storetest.EventsAfter(t, dbs[1], "agt_r", cursor, 100_000) {
		seen[e.ID]++
	}
	for _, id := range committed {
		if seen[id] != 1 {
			t.Errorf("event %d was handed to the reader %d times, want once", id, seen[id])
		}
	}
	if len(seen) != len(committed) {
		t.Errorf("the reader got %d events, %d were committed", len(seen), len(committed))
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
