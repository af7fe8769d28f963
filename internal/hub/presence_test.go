package hub_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// replicaOf is a second hub on another store of w's database, on w's
// clock, as another replica of one deployment (or, on SQLite, another
// process on the file).
func replicaOf(t *testing.T, w *world, db hub.Store) *hub.Hub {
	t.Helper()
	return w.HubOn(t, db, notify.NewLocal())
}

// presenceOf is what c's whoami on h says of agent handle: its state and
// its sessions' states by name.
func presenceOf(t *testing.T, h *hub.Hub, c *hub.Caller, handle string) (string, map[string]string) {
	t.Helper()
	me, err := h.Whoami(ctx, c, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range append([]*hub.Agent{c.Agent}, me.Siblings...) {
		if a.Handle() != handle {
			continue
		}
		p := me.Presence[a.ID]
		sessions := map[string]string{}
		for _, s := range p.Sessions {
			sessions[s.Name] = s.State
		}
		return p.State, sessions
	}
	t.Fatalf("whoami of %s lists no %s", c.Agent.Handle(), handle)
	return "", nil
}

// TestPresenceStates (§19): an agent and its named session are listening
// while a wait of theirs is parked — seen from another replica (SQLite:
// another process on the file), through the rows of who listens — then,
// once the wait ended and the replica swept, active from their last call,
// idle after two minutes, offline after thirty; and a send counts the
// recipients listening then.
func TestPresenceStates(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, open func() *store.DB) {
		w := newWorldOnStore(t, hub.DefaultSettings(), open())
		b := replicaOf(t, w, open())
		reviewer, err := b.Authenticate(ctx, w.Tokens["alice/reviewer"])
		if err != nil {
			t.Fatal(err)
		}
		conv := w.Direct(t, w.Reviewer, "alice/planner")
		if _, err := w.Hub.Whoami(ctx, w.Planner, "main", ""); err != nil {
			t.Fatal(err)
		}
		check := func(step, want string, wantSessions map[string]string) {
			t.Helper()
			got, sessions := presenceOf(t, b, reviewer, "alice/planner")
			if got != want {
				t.Errorf("%s: alice/planner is %s, want %s", step, got, want)
			}
			if diff := cmp.Diff(wantSessions, sessions); diff != "" {
				t.Errorf("%s: sessions (-want +got):\n%s", step, diff)
			}
		}
		check("called just now", hub.PresenceActive, map[string]string{"main": hub.PresenceActive})

		end := w.ParkWait(t, w.Planner, "main")
		check("a wait parked on the other replica", hub.PresenceListening, map[string]string{"main": hub.PresenceListening})
		if got, _ := presenceOf(t, w.Hub, w.Reviewer, "alice/planner"); got != hub.PresenceListening {
			t.Errorf("on the wait's own replica: %s, want listening", got)
		}
		sent, err := b.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: conv, Body: "are you there?"})
		if err != nil || sent.Listening != 1 || sent.Recipients != 1 {
			t.Fatalf("a send to the listening planner: %+v, %v; want listening 1 of 1 recipient", sent, err)
		}
		end()
		check("its wait just ended", hub.PresenceListening, map[string]string{"main": hub.PresenceListening})

		w.Clock.Advance(6 * time.Second) // past the grace of a wait that ends
		w.Hub.SweepPresence(ctx)
		check("the wait ended and was swept", hub.PresenceActive, map[string]string{"main": hub.PresenceActive})
		sent, err = b.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: conv, Body: "still there?"})
		if err != nil || sent.Listening != 0 {
			t.Fatalf("a send to the planner not listening: %+v, %v; want listening 0", sent, err)
		}

		w.Clock.Advance(2 * time.Minute)
		check("two minutes after its last call", hub.PresenceIdle, map[string]string{"main": hub.PresenceIdle})
		w.Clock.Advance(28 * time.Minute)
		check("thirty minutes after", hub.PresenceOffline, map[string]string{"main": hub.PresenceOffline})

		// A wait without a session name makes the agent listen, not a
		// session of it.
		end = w.ParkWait(t, w.Planner, "")
		check("an unnamed wait parked", hub.PresenceListening, map[string]string{"main": hub.PresenceOffline})
		end()
	})
}

// putCounter counts the rows of who listens written.
type putCounter struct {
	hub.Store
	puts atomic.Int64
}

func (s *putCounter) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return s.Store.Update(ctx, func(tx hub.Tx) error { return fn(putCounterTx{tx, s}) })
}

type putCounterTx struct {
	hub.Tx
	s *putCounter
}

func (t putCounterTx) PutListener(ctx context.Context, l *hub.Listener) error {
	t.s.puts.Add(1)
	return t.Tx.PutListener(ctx, l)
}

// TestPresenceWritesNoRowPerWait (§19): a session that waits again at
// once after each event — as a channel does — writes its row when it
// begins to listen and then once a minute, however many waits come and
// go; the lease a renewal writes keeps another replica seeing it listen
// past the first lease; and its end is written once, by the sweep.
func TestPresenceWritesNoRowPerWait(t *testing.T) {
	counter := &putCounter{Store: storetest.Open(t)}
	w := newWorldOnStore(t, hub.DefaultSettings(), counter)
	b := replicaOf(t, w, counter.Store)
	reviewer, err := b.Authenticate(ctx, w.Tokens["alice/reviewer"])
	if err != nil {
		t.Fatal(err)
	}
	for range 150 { // 150 waits, a second apart: two and a half minutes
		end := w.ParkWait(t, w.Planner, "main")
		w.Clock.Advance(time.Second)
		w.Hub.SweepPresence(ctx)
		end()
	}
	if got := counter.puts.Load(); got != 3 {
		t.Errorf("150 waits over 150 s wrote %d rows, want 3 (the first, and a renewal each minute)", got)
	}
	if got, _ := presenceOf(t, b, reviewer, "alice/planner"); got != hub.PresenceListening {
		t.Errorf("after 150 s of waits, past the first row's lease: %s on the other replica, want listening", got)
	}
	w.Clock.Advance(5 * time.Second)
	w.Hub.SweepPresence(ctx)
	w.Hub.SweepPresence(ctx)
	if got := counter.puts.Load(); got != 4 {
		t.Errorf("the listening's end wrote %d rows in all, want 4", got)
	}
	if got, _ := presenceOf(t, b, reviewer, "alice/planner"); got != hub.PresenceActive {
		t.Errorf("after the last wait ended: %s on the other replica, want active", got)
	}
}
