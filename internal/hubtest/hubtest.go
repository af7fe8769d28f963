// Package hubtest is a hub on a test store (storetest.Open: SQLite, or
// PostgreSQL with PALAVER_TEST_STORE) for the tests of the leaves carved
// out of the hub (internal/webhook, internal/a2aclient): a settable clock,
// alice (agents planner and reviewer) and bob (agent helper), and the few
// calls a test starts from. It is for tests only.
package hubtest

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
	"github.com/palaverhq/palaver/internal/store/storetest"
)

var ctx = context.Background()

// Clock is a settable hub.Clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// World is a hub on a test store with alice (agents planner and reviewer)
// and bob (agent helper).
type World struct {
	Hub                       *hub.Hub
	Clock                     *Clock
	Waker                     *notify.Local
	Store                     hub.Store
	Planner, Reviewer, Helper *hub.Caller
	// Options changes the options of each hub Reopen makes.
	Options func(*hub.Options)
}

// New is a World on a fresh test store.
func New(t testing.TB) *World {
	t.Helper()
	return NewOn(t, storetest.Open(t))
}

// NewOn is a World on db.
func NewOn(t testing.TB, db hub.Store) *World {
	t.Helper()
	w := &World{Clock: &Clock{now: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}, Store: db}
	w.Reopen(t)
	for _, u := range []string{"alice", "bob"} {
		if _, err := w.Hub.CreateUser(ctx, u, ""); err != nil {
			t.Fatal(err)
		}
	}
	w.Planner = w.Agent(t, "alice/planner")
	w.Reviewer = w.Agent(t, "alice/reviewer")
	w.Helper = w.Agent(t, "bob/helper")
	return w
}

// HubOn is a hub over db on the world's clock, with its Options, as a
// server starts one.
func (w *World) HubOn(t testing.TB, db hub.Store, waker hub.Waker) *hub.Hub {
	t.Helper()
	o := hub.Options{Store: db, Waker: waker, Clock: w.Clock, Logger: slog.New(slog.DiscardHandler)}
	if w.Options != nil {
		w.Options(&o)
	}
	h, err := hub.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Reopen starts the hub afresh over the world's store, as a server does
// when it starts.
func (w *World) Reopen(t testing.TB) {
	t.Helper()
	w.Waker = notify.NewLocal()
	w.Hub = w.HubOn(t, w.Store, w.Waker)
}

// Agent creates an agent unless it exists, mints it a token and
// authenticates it.
func (w *World) Agent(t testing.TB, handle string) *hub.Caller {
	t.Helper()
	if _, err := w.Hub.Agent(ctx, handle); err != nil {
		if _, err := w.Hub.CreateAgent(ctx, hub.AgentSpec{Handle: handle, Description: "test agent " + handle}); err != nil {
			t.Fatal(err)
		}
	}
	owner, slug, _ := hub.ParseHandle(handle)
	_, secret, err := w.Hub.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug})
	if err != nil {
		t.Fatal(err)
	}
	c, err := w.Hub.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Alice is the person alice.
func (w *World) Alice(t testing.TB) *hub.User {
	t.Helper()
	u, err := w.Hub.User(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Open opens the direct conversation between from and the handles.
func (w *World) Open(t testing.TB, from *hub.Caller, handles ...string) string {
	t.Helper()
	v, err := w.Hub.OpenConversation(ctx, from, handles)
	if err != nil {
		t.Fatal(err)
	}
	return v.Conversation.ID
}

// Send sends body into the conversation as from.
func (w *World) Send(t testing.TB, from *hub.Caller, conv, body string) *hub.SendResult {
	t.Helper()
	r, err := w.Hub.SendMessage(ctx, from, hub.SendInput{ConversationID: conv, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Parked waits until n waits are parked on the waker, or fails after 10s.
func (w *World) Parked(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.Waker.Waiters() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waits parked, want %d", w.Waker.Waiters(), n)
		}
		runtime.Gosched()
	}
}

// Code is an error's wire code ("" for nil; "denied:<word>" for a
// Refusal).
func Code(err error) string {
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
