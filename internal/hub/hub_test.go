package hub_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

var ctx = context.Background()

// code is an error's wire code, as hubtest.Code says it.
var code = hubtest.Code

// world is the hub the leaves' tests run against too (hubtest: a hub on a
// fresh store with alice's agents planner and reviewer and bob's helper),
// with the leaves the hub's own tests reach through it.
type world struct {
	*hubtest.World
	projects *projects.Projects // over hub and store
	reach    *reach.Reach       // over hub and store
}

func newWorld(t testing.TB) *world {
	t.Helper()
	return newWorldWith(t, hub.DefaultSettings())
}

// newWorldWith is newWorld with other settings.
func newWorldWith(t testing.TB, settings hub.Settings) *world {
	t.Helper()
	return newWorldOn(t, settings, nil)
}

// newWorldOn is newWorldWith on the store wrap returns (nil: the store as
// it is), for tests that make the store fail.
func newWorldOn(t testing.TB, settings hub.Settings, wrap func(hub.Store) hub.Store) *world {
	t.Helper()
	var db hub.Store = storetest.Open(t)
	if wrap != nil {
		db = wrap(db)
	}
	return newWorldOnStore(t, settings, db)
}

// newWorldOnStore is newWorldWith on db.
func newWorldOnStore(t testing.TB, settings hub.Settings, db hub.Store) *world {
	t.Helper()
	w := &world{World: hubtest.OpenOn(t, settings, db)}
	w.leaves()
	return w
}

// reopen starts the hub afresh over the world's store, as a server does
// when it starts.
func (w *world) reopen(t testing.TB) {
	t.Helper()
	w.Reopen(t)
	w.leaves()
}

func (w *world) leaves() {
	w.projects, w.reach = projects.New(w.Hub, w.Store), reach.New(w.Hub, w.Store)
}

// observe has the hubs reopen starts tell o what they do.
func (w *world) observe(o hub.Observer) { w.Options = func(opts *hub.Options) { opts.Observer = o } }

// server is a hub over db as a server starts one, on the real clock; it
// shuts down with the test.
func server(t testing.TB, db hub.Store, settings hub.Settings) *hub.Hub {
	t.Helper()
	h, err := hub.New(ctx, hub.Options{Store: db, Waker: notify.NewLocal(), Logger: slog.New(slog.DiscardHandler), Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	return h
}
