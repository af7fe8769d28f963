package oauth_test

import (
	"log/slog"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/oauth"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// world is the Authority and its hub on a fresh store (PALAVER_TEST_STORE
// chooses which), with alice (agents planner and reviewer, each with a
// static token) and bob.
type world struct {
	hub     *hub.Hub
	auth    *oauth.Authority
	clock   *hubtest.Clock
	store   hub.Store
	options func(*hub.Options, *oauth.AuthorityOptions) // changes what each reopen makes
}

func newWorld(t testing.TB) *world {
	t.Helper()
	w := &world{clock: hubtest.NewClock(hubtest.Start), store: storetest.Open(t)}
	w.reopen(t)
	for _, u := range []string{"alice", "bob"} {
		if _, err := w.hub.CreateUser(ctx, u, ""); err != nil {
			t.Fatal(err)
		}
	}
	// Each agent has a static token, as one made on the dashboard does.
	for _, slug := range []string{"planner", "reviewer"} {
		if _, err := w.hub.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/" + slug}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.hub.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: slug}); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// reopen starts the hub and the Authority afresh over the world's store,
// as a server does when it starts.
func (w *world) reopen(t testing.TB) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	o := hub.Options{Store: w.store, Waker: notify.NewLocal(), Clock: w.clock, Logger: log}
	ao := oauth.AuthorityOptions{Store: w.store, Logger: log}
	if w.options != nil {
		w.options(&o, &ao)
	}
	h, err := hub.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	ao.Hub = h
	w.hub, w.auth = h, oauth.NewAuthority(ao)
}

func (w *world) person(t testing.TB, handle string) *hub.User {
	t.Helper()
	u, err := w.hub.User(ctx, handle)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
