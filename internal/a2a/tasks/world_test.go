package tasks_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

var ctx = context.Background()

// clock is the hub's clock in these tests: it moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// world is the Tasks and their hub on a fresh store (the backend
// PALAVER_TEST_STORE names) with alice (agents planner and reviewer) and
// bob (agent helper).
type world struct {
	hub             *hub.Hub
	tasks           *tasks.Tasks
	clock           *clock
	planner, helper *hub.Caller
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, hub.DefaultSettings())
}

// newWorldWith is newWorld with other settings.
func newWorldWith(t *testing.T, settings hub.Settings) *world {
	t.Helper()
	db := storetest.Open(t)
	w := &world{clock: &clock{now: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}}
	h, err := hub.New(ctx, hub.Options{Store: db, Waker: notify.NewLocal(), Clock: w.clock, Logger: slog.New(slog.DiscardHandler), Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	w.hub, w.tasks = h, tasks.New(h, db)
	for _, u := range []string{"alice", "bob"} {
		if _, err := h.CreateUser(ctx, u, ""); err != nil {
			t.Fatal(err)
		}
	}
	w.planner = w.agent(t, "alice/planner")
	w.agent(t, "alice/reviewer")
	w.helper = w.agent(t, "bob/helper")
	return w
}

// agent makes the agent when it is not yet, mints a token of it (with
// scopes; none: every scope) and authenticates it.
func (w *world) agent(t *testing.T, handle string, scopes ...string) *hub.Caller {
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
	c, err := w.hub.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (w *world) person(t *testing.T, handle string) *hub.User {
	t.Helper()
	u, err := w.hub.User(ctx, handle)
	if err != nil {
		t.Fatal(err)
	}
	return u
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
	case errors.As(err, &r):
		return r.Status + ":" + r.Word()
	case errors.As(err, &e):
		return e.WireCode()
	}
	return "untyped: " + err.Error()
}
