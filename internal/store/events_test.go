package store_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// insertEventsAt inserts one event for recipient at each time (Unix ms), in
// order, each in its own commit, and returns them.
func insertEventsAt(t *testing.T, db *store.DB, recipient string, times ...int64) []*hub.Event {
	t.Helper()
	var out []*hub.Event
	for _, at := range times {
		e := &hub.Event{RecipientID: recipient, Type: hub.EventMessageNew, CreatedAt: time.UnixMilli(at).UTC()}
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.InsertEvents(ctx, []*hub.Event{e}) }); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func prune(t *testing.T, db *store.DB, before int64) hub.Pos {
	t.Helper()
	var through hub.Pos
	err := db.Update(ctx, func(tx hub.Tx) error {
		var err error
		through, err = tx.PruneEvents(ctx, time.UnixMilli(before).UTC())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return through
}

func eventIDs(t *testing.T, db *store.DB, recipient string, after hub.Pos) []int64 {
	t.Helper()
	var ids []int64
	for _, e := range storetest.EventsAfter(t, db, recipient, after, 1000) {
		ids = append(ids, e.ID)
	}
	return ids
}

// latestEvent is the store's LatestEvent once no committed event is held
// back past it (on PostgreSQL, behind other tests' transactions too).
func latestEvent(t *testing.T, db *store.DB) hub.Pos {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		latest, heldTx, err := db.LatestEvent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if heldTx == 0 || latest.Tx >= heldTx {
			return latest
		}
		if time.Now().After(deadline) {
			t.Fatalf("events still held back after 10 s, behind transaction %d", heldTx)
		}
		runtime.Gosched()
	}
}

// TestPruneEventsAtEachCutoff: events over a span of times, pruned at a
// cutoff before, inside and after the span, keep exactly those created at
// or after the cutoff, and the pruned-through mark is the last one
// deleted.
func TestPruneEventsAtEachCutoff(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		var times []int64
		for i := range 41 {
			times = append(times, 1_000_000+int64(i)*10)
		}
		events := insertEventsAt(t, db, "agt_a", times...)
		// Cutoffs from the oldest event's time to past the newest, each
		// pruning a few more.
		var cutoffs []int64
		for cutoff := times[0] - 5; cutoff < times[len(times)-1]; cutoff += 35 {
			cutoffs = append(cutoffs, cutoff)
		}
		for _, cutoff := range append(cutoffs, times[len(times)-1]+5) {
			through := prune(t, db, cutoff)
			var want []int64
			var last hub.Pos
			for _, e := range events {
				if e.CreatedAt.UnixMilli() >= cutoff {
					want = append(want, e.ID)
				} else {
					last = e.Pos()
				}
			}
			if got := eventIDs(t, db, "agt_a", hub.Pos{}); !slices.Equal(got, want) {
				t.Fatalf("events kept after pruning before %d: %v; want %v", cutoff, got, want)
			}
			if last != (hub.Pos{}) && through != last {
				t.Fatalf("pruning before %d: through %v; want %v, the last deleted", cutoff, through, last)
			}
		}
		if got := eventIDs(t, db, "agt_a", hub.Pos{}); len(got) != 0 {
			t.Fatalf("events kept after pruning past the newest: %v", got)
		}
	})
}

// TestEventIDsGrowAcrossPruning: after pruning some of the events, or all
// of them, the next event's id is above every id given before, so a
// cursor taken before the prune reads it.
func TestEventIDsGrowAcrossPruning(t *testing.T) {
	for _, c := range []struct {
		name   string
		cutoff int64 // the events are at 1000, 2000, 3000
	}{{"some", 2500}, {"all", 5000}, {"all, twice", 5000}} {
		t.Run(c.name, func(t *testing.T) {
			storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
				events := insertEventsAt(t, db, "agt_a", 1000, 2000, 3000)
				insertEventsAt(t, db, "agt_b", 3500) // the newest, another's
				cursor := latestEvent(t, db)
				prune(t, db, c.cutoff)
				if strings.HasSuffix(c.name, "twice") {
					prune(t, db, c.cutoff)
				}
				if latest := latestEvent(t, db); latest != cursor {
					t.Fatalf("latest event after pruning = %v; want %v, as before", latest, cursor)
				}
				next := insertEventsAt(t, db, "agt_a", 6000)[0]
				if next.ID <= cursor.ID || next.Pos().Compare(cursor) <= 0 {
					t.Fatalf("the event after pruning has id %d; want above %d, the newest before", next.ID, cursor.ID)
				}
				want := []int64{next.ID}
				if c.cutoff < 3000 {
					want = []int64{events[2].ID, next.ID}
				}
				if got := eventIDs(t, db, "agt_a", hub.Pos{}); !slices.Equal(got, want) {
					t.Fatalf("agt_a's events: %v; want %v", got, want)
				}
				if got := eventIDs(t, db, "agt_a", cursor); !slices.Equal(got, []int64{next.ID}) {
					t.Fatalf("agt_a's events after the cursor taken before pruning: %v; want %d", got, next.ID)
				}
				// The recipients of the events kept: no one else, not
				// even no one.
				got, err := db.EventRecipients(ctx, hub.Pos{}, next.Pos())
				slices.Sort(got)
				wantTo := []string{"agt_a"}
				if c.cutoff < 3500 {
					wantTo = []string{"agt_a", "agt_b"}
				}
				if err != nil || !slices.Equal(got, wantTo) {
					t.Fatalf("recipients of the kept events: %q, %v; want %q", got, err, wantTo)
				}
				// Pruning past the new event, a newer one still gets a
				// higher id.
				prune(t, db, 7000)
				if again := insertEventsAt(t, db, "agt_a", 8000)[0]; again.ID <= next.ID {
					t.Fatalf("the event after pruning again has id %d; want above %d", again.ID, next.ID)
				}
			})
		})
	}
}

// TestEventIDsMigratedPastTheCounter: migration 0031 takes AUTOINCREMENT
// and events_created off a SQLite database whose counter stands above its
// largest kept id (pruning had deleted the newest events, or all), and ids
// keep growing past the counter.
func TestEventIDsMigratedPastTheCounter(t *testing.T) {
	for _, kept := range []int{0, 2} {
		t.Run(fmt.Sprintf("%d kept", kept), func(t *testing.T) {
			// Five events given by palaver at migration 0030 (ids by
			// AUTOINCREMENT, an index on created_at), the newest ones
			// deleted, and the mark of pruning at the last:
			// AUTOINCREMENT's counter stays at 5.
			path := filepath.Join(t.TempDir(), "palaver.db")
			old := openThrough(t, path, 30,
				`INSERT INTO events (recipient_id, type, created_at) VALUES ('agt_a', 'message.new', 1000), ('agt_a', 'message.new', 2000),
					('agt_a', 'message.new', 3000), ('agt_a', 'message.new', 4000), ('agt_a', 'message.new', 5000)`,
				fmt.Sprintf(`DELETE FROM events WHERE id > %d`, kept),
				`INSERT INTO meta (key, value) VALUES ('events_pruned_through', '5') ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
			var seq int64
			err := store.Raw(old).QueryRow(`SELECT seq FROM sqlite_sequence WHERE name = 'events'`).Scan(&seq)
			old.Close()
			if err != nil || seq != 5 {
				t.Fatalf("AUTOINCREMENT's counter before the migration: %d, %v; want 5", seq, err)
			}

			db, err := store.Open(ctx, store.Options{Database: path})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			raw := store.Raw(db)
			var schema string
			if err := raw.QueryRow(`SELECT group_concat(sql, '; ') FROM sqlite_master WHERE tbl_name = 'events'`).Scan(&schema); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(schema, "AUTOINCREMENT") || strings.Contains(schema, "events_created") || !strings.Contains(schema, "events_recipient") {
				t.Errorf("the events' schema after the migration: %s; want no AUTOINCREMENT, no events_created, events_recipient", schema)
			}
			if latest, _, err := db.LatestEvent(ctx); err != nil || latest.ID != 5 {
				t.Fatalf("latest event after the migration: %v, %v; want 5", latest, err)
			}
			var want []int64
			for i := 1; i <= kept; i++ {
				want = append(want, int64(i))
			}
			if got := eventIDs(t, db, "agt_a", hub.Pos{}); !slices.Equal(got, want) {
				t.Fatalf("events kept by the migration: %v; want %v", got, want)
			}
			next := insertEventsAt(t, db, "agt_a", 6000)[0]
			if next.ID != 6 {
				t.Fatalf("the first event after the migration has id %d; want 6, past the counter's 5", next.ID)
			}
			if got := eventIDs(t, db, "agt_a", hub.Pos{ID: 5}); !slices.Equal(got, []int64{6}) {
				t.Fatalf("events after a cursor at 5: %v; want 6", got)
			}
			// The row that held the counter is pruned with the events
			// older than it.
			prune(t, db, 5500)
			if got := eventIDs(t, db, "agt_a", hub.Pos{}); !slices.Equal(got, []int64{6}) {
				t.Fatalf("events after pruning: %v; want 6", got)
			}
			var rows int
			if err := raw.QueryRow(`SELECT COUNT(*) FROM events`).Scan(&rows); err != nil || rows != 1 {
				t.Fatalf("rows after pruning: %d, %v; want only event 6", rows, err)
			}
		})
	}
}

// TestPruneEventsAfterTheClockSteppedBack: with the hub's clock stepped
// back between two events, pruning deletes no event newer than the cutoff
// by more than the step, and its mark is an event older than the cutoff.
func TestPruneEventsAfterTheClockSteppedBack(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		const step = 5
		events := insertEventsAt(t, db, "agt_a", 10, 20, 30, 30-step, 35, 40)
		const cutoff = 28
		through := prune(t, db, cutoff)
		kept := eventIDs(t, db, "agt_a", hub.Pos{})
		var mark *hub.Event
		for _, e := range events {
			if e.Pos() == through {
				mark = e
			}
			at := e.CreatedAt.UnixMilli()
			if gone := !slices.Contains(kept, e.ID); gone && at >= cutoff+step || gone != (e.Pos().Compare(through) <= 0) {
				t.Errorf("event %d at %d: gone %v, pruned through %v", e.ID, at, gone, through)
			}
		}
		if mark == nil || mark.CreatedAt.UnixMilli() >= cutoff {
			t.Fatalf("pruned through %v, %+v; want an event older than %d", through, mark, cutoff)
		}
	})
}
