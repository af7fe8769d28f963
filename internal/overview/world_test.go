package overview_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

var ctx = context.Background()

// clock is a clock the tests move by hand.
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

// world is the pages' reads and their hub on a fresh store
// (PALAVER_TEST_STORE chooses which), with alice (agents planner and
// reviewer) and bob (agent helper).
type world struct {
	hub               *hub.Hub
	pages             *overview.Overview
	projects          *projects.Projects
	clock             *clock
	planner, reviewer *hub.Caller
}

func newWorld(t *testing.T) *world {
	t.Helper()
	db := storetest.Open(t)
	w := &world{clock: &clock{now: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}}
	h, err := hub.New(ctx, hub.Options{Store: db, Waker: notify.NewLocal(), Clock: w.clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	w.hub, w.pages, w.projects = h, overview.New(h, db), projects.New(h, db)
	for _, u := range []string{"alice", "bob"} {
		if _, err := w.hub.CreateUser(ctx, u, ""); err != nil {
			t.Fatal(err)
		}
	}
	w.planner = w.agent(t, "alice/planner")
	w.reviewer = w.agent(t, "alice/reviewer")
	w.agent(t, "bob/helper")
	return w
}

// agent creates the agent if it is new, mints a token and authenticates
// it.
func (w *world) agent(t *testing.T, handle string) *hub.Caller {
	t.Helper()
	if _, err := w.hub.Agent(ctx, handle); err != nil {
		if _, err := w.hub.CreateAgent(ctx, hub.AgentSpec{Handle: handle, Description: "test agent " + handle}); err != nil {
			t.Fatal(err)
		}
	}
	owner, slug, _ := hub.ParseHandle(handle)
	_, secret, err := w.hub.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug})
	if err != nil {
		t.Fatal(err)
	}
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

func (w *world) person(t *testing.T, handle string) *hub.User {
	t.Helper()
	u, err := w.hub.User(ctx, handle)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// owner is alice, for person actions.
func (w *world) owner(t *testing.T) *hub.User { return w.person(t, "alice") }

// sendAs sends body and returns the brake word that refused it ("" when
// sent).
func sendAs(t *testing.T, w *world, c *hub.Caller, conv, body, instance string) string {
	t.Helper()
	_, err := w.hub.SendMessage(ctx, c, hub.SendInput{ConversationID: conv, Body: body, Instance: instance})
	if err == nil {
		return ""
	}
	r, ok := err.(*hub.Refusal)
	if !ok || r.Status != "denied" {
		t.Fatalf("send %q: %v, want sent or denied", body, err)
	}
	return r.Word()
}

// project makes a project of alice's with the planner and the reviewer in
// it to speak, and a thread "Plan" the planner started.
func (w *world) project(t *testing.T) (project, thread string) {
	t.Helper()
	alice := w.owner(t)
	p, err := w.hub.CreateProject(ctx, alice, "Launch", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{"planner", "reviewer"} {
		if _, err := w.hub.SetProjectAgent(ctx, alice, p.ID, slug, hub.AccessSpeak, false); err != nil {
			t.Fatal(err)
		}
	}
	v, err := w.hub.OpenThread(ctx, w.planner, p.ID, "Plan", "")
	if err != nil {
		t.Fatal(err)
	}
	return p.ID, v.Conversation.ID
}

// code is an error's wire code ("" for nil).
func code(err error) string {
	var e *hub.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.WireCode()
	}
	return "untyped: " + err.Error()
}
