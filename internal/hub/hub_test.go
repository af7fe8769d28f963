package hub_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

var ctx = context.Background()

// clock is a settable hub.Clock; with step it moves on at every reading.
type clock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// world is a hub on a fresh SQLite store with alice (agents planner and
// reviewer) and bob (agent helper).
type world struct {
	hub                       *hub.Hub
	clock                     *clock
	waker                     *notify.Local
	store                     hub.Store
	projects                  *projects.Projects // over hub and store
	reach                     *reach.Reach       // over hub and store
	settings                  hub.Settings
	observer                  hub.Observer // nil: none
	planner, reviewer, helper *hub.Caller
	tokens                    map[string]string  // handle → secret
	options                   func(*hub.Options) // changes the options of each hub reopen makes
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
	w := &world{clock: &clock{now: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}, tokens: map[string]string{}, store: db, settings: settings}
	w.reopen(t)
	for _, u := range []string{"alice", "bob"} {
		if _, err := w.hub.CreateUser(ctx, u, ""); err != nil {
			t.Fatal(err)
		}
	}
	w.planner = w.agent(t, "alice/planner")
	w.reviewer = w.agent(t, "alice/reviewer")
	w.helper = w.agent(t, "bob/helper")
	return w
}

// reopen starts the hub afresh over the world's store, as a server does
// when it starts.
func (w *world) reopen(t testing.TB) {
	t.Helper()
	w.waker = notify.NewLocal()
	o := hub.Options{Store: w.store, Waker: w.waker, Clock: w.clock, Logger: slog.New(slog.DiscardHandler), Settings: w.settings, Observer: w.observer}
	if w.options != nil {
		w.options(&o)
	}
	h, err := hub.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	w.hub, w.projects, w.reach = h, projects.New(h, w.store), reach.New(h, w.store)
}

// agent creates an agent, mints a token and authenticates it.
func (w *world) agent(t testing.TB, handle string, scopes ...string) *hub.Caller {
	t.Helper()
	if _, err := w.hub.Agent(ctx, handle); err != nil {
		if _, err := w.hub.CreateAgent(ctx, hub.AgentSpec{Handle: handle, Description: "test agent " + handle}); err != nil {
			t.Fatal(err)
		}
	}
	owner, slug, _ := hub.ParseHandle(handle)
	var sc []string
	if len(scopes) > 0 {
		sc = scopes
	}
	_, secret, err := w.hub.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug, Scopes: sc})
	if err != nil {
		t.Fatal(err)
	}
	w.tokens[handle] = secret
	c, err := w.hub.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// open opens the direct conversation between from and the handles.
func (w *world) open(t *testing.T, from *hub.Caller, handles ...string) string {
	t.Helper()
	v, err := w.hub.OpenConversation(ctx, from, handles)
	if err != nil {
		t.Fatal(err)
	}
	return v.Conversation.ID
}

func (w *world) send(t *testing.T, from *hub.Caller, conv, body string) *hub.SendResult {
	t.Helper()
	r, err := w.hub.SendMessage(ctx, from, hub.SendInput{ConversationID: conv, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// code is an error's wire code ("" for nil; "denied:<word>" for a Refusal).
func code(err error) string {
	var r *hub.Refusal
	var e *hub.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &r) && r.Status == "pending_approval":
		return "pending_approval:pending_approval"
	case errors.As(err, &r):
		return r.Status + ":" + r.Word()

	case errors.As(err, &e):
		return e.WireCode()
	}
	return "untyped: " + err.Error()
}

// latest is c's cursor at the end of the event log now, as its whoami
// gives it.
func (w *world) latest(t testing.TB, c *hub.Caller) *string {
	t.Helper()
	cursor, err := w.hub.LatestCursor(ctx, c.Agent.ID)
	if err != nil {
		t.Fatal(err)
	}
	return &cursor
}

// parked waits until n waits are parked on the waker, or fails after 10s.
func (w *world) parked(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.waker.Waiters() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waits parked, want %d", w.waker.Waiters(), n)
		}
		runtime.Gosched()
	}
}
