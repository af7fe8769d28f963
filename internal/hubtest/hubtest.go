// Package hubtest is the hub the tests of the leaves carved out of it run
// against (internal/webhook, internal/a2aclient, internal/push, internal/search,
// internal/a2a/tasks …): a hub on a temp store (storetest.Open: SQLite, or
// PostgreSQL with PALAVER_TEST_STORE) with alice (agents planner and
// reviewer) and bob (agent helper), on a clock that moves only when told,
// and the few ways to make what a test starts from. It is for tests only.
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
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

var ctx = context.Background()

// Start is when a world's clock starts.
var Start = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// Clock is a hub clock the test moves: it stands still until Advance
// moves it (NewClock), or is the real time moved on by what Advance added
// (LiveClock); once Tick says by how much, it also moves on at every
// reading.
type Clock struct {
	mu        sync.Mutex
	at        time.Time // a still clock's start
	live      bool
	off, step time.Duration
}

// NewClock is a clock standing at at.
func NewClock(at time.Time) *Clock { return &Clock{at: at} }

// LiveClock is the real time, moved on by what Advance adds.
func LiveClock() *Clock { return &Clock{live: true} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += c.step
	if c.live {
		return time.Now().Add(c.off)
	}
	return c.at.Add(c.off)
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// Tick has every reading from now on move the clock on by d first.
func (c *Clock) Tick(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step = d
}

// World is a hub on its store, with its clock and waker, and the agents
// it starts with, each by a token (Tokens: by handle).
type World struct {
	Hub                       *hub.Hub
	Store                     hub.Store
	Clock                     *Clock
	Waker                     *notify.Local
	Settings                  hub.Settings
	Planner, Reviewer, Helper *hub.Caller
	Tokens                    map[string]string
	// Options changes the options of each hub Reopen and HubOn make.
	Options func(*hub.Options)
}

// Open starts the world for t on a temp store, with settings; it ends
// with the test.
func Open(t testing.TB, settings hub.Settings) *World {
	t.Helper()
	return OpenOn(t, settings, storetest.Open(t))
}

// OpenOn is Open on db.
func OpenOn(t testing.TB, settings hub.Settings, db hub.Store) *World {
	t.Helper()
	w := &World{Store: db, Settings: settings, Clock: NewClock(Start), Tokens: map[string]string{}}
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

// HubOn is a hub over db on the world's clock and settings, with its
// Options, as a server starts one; it shuts down with the test.
func (w *World) HubOn(t testing.TB, db hub.Store, waker hub.Waker) *hub.Hub {
	t.Helper()
	o := hub.Options{Store: db, Waker: waker, Clock: w.Clock, Logger: slog.New(slog.DiscardHandler), Settings: w.Settings}
	if w.Options != nil {
		w.Options(&o)
	}
	h, err := hub.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	return h
}

// Reopen starts the hub afresh over the world's store, as a server does
// when it starts.
func (w *World) Reopen(t testing.TB) {
	t.Helper()
	w.Waker = notify.NewLocal()
	w.Hub = w.HubOn(t, w.Store, w.Waker)
}

// Agent makes the agent when there is none yet, mints a token of it with
// scopes (none: every scope) and authenticates it.
func (w *World) Agent(t testing.TB, handle string, scopes ...string) *hub.Caller {
	t.Helper()
	if _, err := w.Hub.Agent(ctx, handle); err != nil {
		if _, err := w.Hub.CreateAgent(ctx, hub.AgentSpec{Handle: handle, Description: "test agent " + handle}); err != nil {
			t.Fatal(err)
		}
	}
	owner, slug, _ := hub.ParseHandle(handle)
	var sc []string
	if len(scopes) > 0 {
		sc = scopes
	}
	_, secret, err := w.Hub.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug, Scopes: sc})
	if err != nil {
		t.Fatal(err)
	}
	w.Tokens[handle] = secret
	c, err := w.Hub.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Person is the person of a handle.
func (w *World) Person(t testing.TB, handle string) *hub.User {
	t.Helper()
	u, err := w.Hub.User(ctx, handle)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Direct opens the direct conversation between from and the handles.
func (w *World) Direct(t testing.TB, from *hub.Caller, handles ...string) string {
	t.Helper()
	v, err := w.Hub.OpenConversation(ctx, from, handles)
	if err != nil {
		t.Fatal(err)
	}
	return v.Conversation.ID
}

// Send sends body into conv from the agent.
func (w *World) Send(t testing.TB, from *hub.Caller, conv, body string) *hub.SendResult {
	t.Helper()
	r, err := w.Hub.SendMessage(ctx, from, hub.SendInput{ConversationID: conv, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// SendAs sends body into conv from c's session instance and returns the
// brake word that refused it ("" when sent); anything else fails t.
func (w *World) SendAs(t testing.TB, c *hub.Caller, conv, body, instance string) string {
	t.Helper()
	_, err := w.Hub.SendMessage(ctx, c, hub.SendInput{ConversationID: conv, Body: body, Instance: instance})
	if err == nil {
		return ""
	}
	r, ok := err.(*hub.Refusal)
	if !ok || r.Status != "denied" {
		t.Fatalf("send %q: %v, want sent or denied", body, err)
	}
	return r.Word()
}

// Room is a room by created, with the others added as members.
func (w *World) Room(t testing.TB, by *hub.Caller, others ...string) string {
	t.Helper()
	v, err := w.Hub.CreateRoom(ctx, by, hub.RoomSpec{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range others {
		if _, err := w.Hub.AddParticipantAs(ctx, by, v.Conversation.ID, o, ""); err != nil {
			t.Fatalf("adding %s: %v", o, err)
		}
	}
	return v.Conversation.ID
}

// Public makes the agent of handle (when there is none yet) public and
// signs it in again.
func (w *World) Public(t testing.TB, handle string) *hub.Caller {
	t.Helper()
	c := w.Agent(t, handle)
	a, err := w.Hub.SetAgentPublic(ctx, c.Owner, c.Agent.Slug, true)
	if err != nil || !a.Public {
		t.Fatalf("making %s public: %+v, %v", handle, a, err)
	}
	if c, err = w.Hub.Authenticate(ctx, w.Tokens[handle]); err != nil || !c.Agent.Public {
		t.Fatalf("%s signed in: %+v, %v; want it public", handle, c, err)
	}
	return c
}

// Project makes a project of alice's with the planner and the reviewer in
// it to speak, and a thread "Plan" the planner started.
func (w *World) Project(t testing.TB) (project, thread string) {
	t.Helper()
	alice := w.Person(t, "alice")
	p, err := w.Hub.CreateProject(ctx, alice, "Launch", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{"planner", "reviewer"} {
		if _, err := w.Hub.SetProjectAgent(ctx, alice, p.ID, slug, hub.AccessSpeak, false); err != nil {
			t.Fatal(err)
		}
	}
	v, err := w.Hub.OpenThread(ctx, w.Planner, p.ID, "Plan", "")
	if err != nil {
		t.Fatal(err)
	}
	return p.ID, v.Conversation.ID
}

// Consent brings from's owner and b together as contacts, grants from
// reach to b, and opens the conversation from asks for with target (one
// of b's agents), b approving it (§3).
func (w *World) Consent(t testing.TB, from *hub.Caller, b *hub.User, target string) string {
	t.Helper()
	a := w.Person(t, from.Owner.Handle)
	people := reach.New(w.Hub, w.Store)
	if _, err := people.RequestContact(ctx, a, b.Handle, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := people.RequestContact(ctx, b, a.Handle, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SetGrant(ctx, a, from.Agent.Handle(), b.Handle, true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.OpenConversation(ctx, from, []string{target}); Code(err) != "pending_approval:pending_approval" {
		t.Fatalf("open: %v", err)
	}
	asks, _ := w.Hub.Approvals(ctx, b)
	if _, err := w.Hub.DecideInbound(ctx, b, asks[len(asks)-1].ID, true); err != nil {
		t.Fatal(err)
	}
	return w.Direct(t, from, target)
}

// Latest is the cursor after every event c may see now.
func (w *World) Latest(t testing.TB, c *hub.Caller) *string {
	t.Helper()
	cursor, err := w.Hub.LatestCursor(ctx, c.Agent.ID)
	if err != nil {
		t.Fatal(err)
	}
	return &cursor
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

// ParkWait parks a wait of c's session and returns what ends it (and
// waits until it returned).
func (w *World) ParkWait(t testing.TB, c *hub.Caller, instance string) func() {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	// The cursor is read here, not in the wait's goroutine: on a shared
	// store reading it may itself wait on the waker for transactions still
	// running, and that must not pass for the wait being parked.
	cursor := w.Latest(t, c)
	before := w.Waker.Waiters()
	go func() {
		defer close(done)
		w.Hub.Wait(wctx, c, hub.WaitInput{Cursor: cursor, Timeout: 30 * time.Second, Instance: instance})
	}()
	w.Parked(t, before+1)
	return func() {
		cancel()
		<-done
	}
}

// Code is an error's wire code: "" for nil, "status:word" for a Refusal
// (pending_approval:pending_approval for an ask waiting for its owner).
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
