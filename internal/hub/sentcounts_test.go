package hub_test

import (
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// The brakes' counts, some of which the writer keeps in memory (§17 cached
// checks), reach the very next send when what they count changes.

// holdAs sends body as c in review mode and fails unless it is held.
func holdAs(t *testing.T, h *hub.Hub, c *hub.Caller, conv, body string) *hub.Message {
	t.Helper()
	r, err := h.SendMessage(ctx, c, hub.SendInput{ConversationID: conv, Body: body})
	if err != nil || r.Message.Status != hub.MessageHeld {
		t.Fatalf("send %q in review mode: %+v, %v; want held", body, r, err)
	}
	return r.Message
}

// TestBudgetLetsARejectedMessageGo: held messages count toward the budget;
// one the owner rejects no longer does, from the next send.
func TestBudgetLetsARejectedMessageGo(t *testing.T) {
	s := hub.DefaultSettings()
	s.Budget = 3
	w := newWorldWith(t, s)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	if _, err := w.Hub.SetAgentMode(ctx, "alice/planner", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	planner, _ := w.Hub.Authenticate(ctx, w.Tokens["alice/planner"])
	first := holdAs(t, w.Hub, planner, conv, "draft 1")
	holdAs(t, w.Hub, planner, conv, "draft 2")
	holdAs(t, w.Hub, planner, conv, "draft 3")
	if word := w.SendAs(t, planner, conv, "draft 4", ""); word != "budget" {
		t.Fatalf("a fourth held message within the hour: %q, want budget", word)
	}
	if _, err := w.Hub.DecideHeld(ctx, w.owner(t), first.ID, hub.Decision{}); err != nil {
		t.Fatal(err)
	}
	holdAs(t, w.Hub, planner, conv, "draft 4")
	if word := w.SendAs(t, planner, conv, "draft 5", ""); word != "budget" {
		t.Fatalf("after the rejected one's place was taken: %q, want budget", word)
	}
}

// TestBrakeSettingsChangedOnRestart: a server started again over the same
// database with another budget or a longer window counts with them from
// its first send, messages it had let age out of the old window included.
func TestBrakeSettingsChangedOnRestart(t *testing.T) {
	s := hub.DefaultSettings()
	s.Budget, s.BudgetWindow = 3, time.Hour
	w := newWorldWith(t, s)
	conv := w.Direct(t, w.Planner, "alice/reviewer", "alice")
	send := func(body, want string) {
		t.Helper()
		if word := w.SendAs(t, w.Planner, conv, body, ""); word != want {
			t.Fatalf("%s at %s: %q, want %q", body, w.Clock.Now().Format("15:04"), word, want)
		}
	}
	send("a", "") // 09:00
	w.Clock.Advance(time.Minute)
	send("b", "") // 09:01
	w.Clock.Advance(time.Minute)
	if _, err := w.Hub.PostAsPerson(ctx, w.owner(t), conv, "noted", ""); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(88 * time.Minute)
	send("c", "") // 10:30: a and b are out of the hour
	restart := func(budget int, window time.Duration) {
		w.Settings.Budget, w.Settings.BudgetWindow = budget, window
		w.reopen(t)
	}
	restart(3, 3*time.Hour)
	send("d", "budget") // a, b and c in three hours
	restart(4, 3*time.Hour)
	send("d", "")
	restart(2, time.Hour)
	send("e", "budget") // c and d in the hour
	restart(5, 3*time.Hour)
	send("e", "")
}

// TestBrakeCountsSeeOtherServers: a held message rejected by another
// process on the same database — the admin command line on the SQLite
// file, another replica on PostgreSQL — leaves the budget at this
// server's very next send, and a person taking part there starts the
// duplicate count again.
func TestBrakeCountsSeeOtherServers(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, open func() *store.DB) {
		s := hub.DefaultSettings()
		s.Budget = 3
		start := func(db *store.DB) *hub.Hub { return server(t, db, s) }
		server, other := start(open()), start(open())
		if _, err := server.CreateUser(ctx, "alice", ""); err != nil {
			t.Fatal(err)
		}
		secrets := map[string]string{}
		agent := func(handle string) *hub.Caller {
			if _, err := server.CreateAgent(ctx, hub.AgentSpec{Handle: handle, Description: "an agent"}); err != nil {
				t.Fatal(err)
			}
			_, slug, _ := hub.ParseHandle(handle)
			_, secret, err := server.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: slug})
			if err != nil {
				t.Fatal(err)
			}
			c, err := server.Authenticate(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			secrets[handle] = secret
			return c
		}
		reviewer := agent("alice/reviewer")
		planner := agent("alice/planner")
		alice := func(h *hub.Hub) *hub.User { u, _ := h.User(ctx, "alice"); return u }
		send := func(c *hub.Caller, conv, body string) error {
			_, err := server.SendMessage(ctx, c, hub.SendInput{ConversationID: conv, Body: body})
			return err
		}

		v, err := server.OpenConversation(ctx, planner, []string{"alice/reviewer", "alice"})
		if err != nil {
			t.Fatal(err)
		}
		conv := v.Conversation.ID
		for range 2 {
			if err := send(reviewer, conv, "are you there?"); err != nil {
				t.Fatal(err)
			}
		}
		if err := send(reviewer, conv, "are you there?"); code(err) != "denied:duplicate" {
			t.Fatalf("a third copy: %v, want denied:duplicate", err)
		}
		if _, err := other.PostAsPerson(ctx, alice(other), conv, "I am", ""); err != nil {
			t.Fatal(err)
		}
		if err := send(reviewer, conv, "are you there?"); err != nil {
			t.Errorf("the copy after a person took part on another server: %v, want sent", err)
		}

		if _, err := server.SetAgentMode(ctx, "alice/planner", hub.ModeReview); err != nil {
			t.Fatal(err)
		}
		planner, _ = server.Authenticate(ctx, secrets["alice/planner"])
		first := holdAs(t, server, planner, conv, "draft 1")
		holdAs(t, server, planner, conv, "draft 2")
		holdAs(t, server, planner, conv, "draft 3")
		if err := send(planner, conv, "draft 4"); code(err) != "denied:budget" {
			t.Fatalf("a fourth held message within the hour: %v, want denied:budget", err)
		}
		if _, err := other.DecideHeld(ctx, alice(other), first.ID, hub.Decision{}); err != nil {
			t.Fatal(err)
		}
		holdAs(t, server, planner, conv, "draft 4")
	})
}
