package hub_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// countingStore counts the store's joined token reads.
type countingStore struct {
	hub.Store
	reads *atomic.Int64
}

func (s countingStore) TokenByHash(ctx context.Context, hash []byte) (*hub.Token, *hub.Agent, *hub.User, error) {
	s.reads.Add(1)
	return s.Store.TokenByHash(ctx, hash)
}

// TestAuthenticationFromMemory: a token is read once and then resolved
// from memory (§17), until a change to it — here its revocation by this
// hub — moves the store's generation: the very next call is refused.
func TestAuthenticationFromMemory(t *testing.T) {
	var reads atomic.Int64
	w := newWorldOn(t, hub.DefaultSettings(), func(s hub.Store) hub.Store { return countingStore{s, &reads} })
	secret := w.Tokens["alice/planner"]
	before := reads.Load()
	for range 3 {
		if _, err := w.Hub.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	if n := reads.Load() - before; n != 0 {
		t.Errorf("three calls with a token already resolved read it %d times, want 0", n)
	}
	// A token's use being recorded changes nothing it resolves to.
	w.Clock.Advance(2 * time.Minute)
	if _, err := w.Hub.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if n := reads.Load() - before; n != 0 {
		t.Errorf("recording the token's use made it be read again (%d reads)", n)
	}
	if _, err := w.Hub.RevokeToken(ctx, w.Planner.TokenID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.Authenticate(ctx, secret); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("the call after the revocation: %v, want revoked", err)
	}
}

// TestAuthenticationFromMemorySeesOtherServers: a change made by another
// process on the same database — the admin command line on the SQLite
// file, another replica on PostgreSQL — reaches this hub's very next call:
// a mode change, an archive, a revocation.
func TestAuthenticationFromMemorySeesOtherServers(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, open func() *store.DB) {
		start := func(db *store.DB) *hub.Hub { return server(t, db, hub.DefaultSettings()) }
		server, other := start(open()), start(open())
		if _, err := server.CreateUser(ctx, "alice", ""); err != nil {
			t.Fatal(err)
		}
		mint := func(slug string) (string, string) {
			if _, err := server.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/" + slug, Description: "an agent"}); err != nil {
				t.Fatal(err)
			}
			tok, secret, err := server.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: slug})
			if err != nil {
				t.Fatal(err)
			}
			if c, err := server.Authenticate(ctx, secret); err != nil || c.Agent.Mode != hub.ModeActive {
				t.Fatalf("alice/%s: %+v, %v", slug, c, err)
			}
			return tok.ID, secret
		}
		_, listener := mint("listener")
		_, archived := mint("archived")
		revokedID, revoked := mint("revoked")

		if _, err := other.SetAgentMode(ctx, "alice/listener", hub.ModeListen); err != nil {
			t.Fatal(err)
		}
		if c, err := server.Authenticate(ctx, listener); err != nil || c.Agent.Mode != hub.ModeListen {
			t.Errorf("after another server set listen mode: %+v, %v; want the agent in listen mode", c, err)
		}
		if _, err := other.ArchiveAgent(ctx, "alice/archived"); err != nil {
			t.Fatal(err)
		}
		if _, err := server.Authenticate(ctx, archived); err == nil || !strings.Contains(err.Error(), "archived") {
			t.Errorf("after another server archived the agent: %v, want refused as archived", err)
		}
		if _, err := other.RevokeToken(ctx, revokedID); err != nil {
			t.Fatal(err)
		}
		if _, err := server.Authenticate(ctx, revoked); err == nil || !strings.Contains(err.Error(), "revoked") {
			t.Errorf("after another server revoked the token: %v, want refused as revoked", err)
		}
	})
}

// TestSendChecksSeeOtherServers: what a send checks, some of which the
// writer keeps in memory (§17 cached checks), reaches the very next send
// when another process on the same database changes it: a participant
// archived, a participant added, a grant withdrawn, a token revoked.
func TestSendChecksSeeOtherServers(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, open func() *store.DB) {
		start := func(db *store.DB) *hub.Hub { return server(t, db, hub.DefaultSettings()) }
		serverDB := open()
		server, other := start(serverDB), start(open())
		for _, u := range []string{"alice", "bob"} {
			if _, err := server.CreateUser(ctx, u, ""); err != nil {
				t.Fatal(err)
			}
		}
		agent := func(handle string) (*hub.Caller, string) {
			if _, err := server.CreateAgent(ctx, hub.AgentSpec{Handle: handle, Description: "an agent"}); err != nil {
				t.Fatal(err)
			}
			owner, slug, _ := hub.ParseHandle(handle)
			_, secret, err := server.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug})
			if err != nil {
				t.Fatal(err)
			}
			c, err := server.Authenticate(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			return c, secret
		}
		send := func(c *hub.Caller, conv string) (*hub.SendResult, error) {
			return server.SendMessage(ctx, c, hub.SendInput{ConversationID: conv, Body: "one more " + hub.NewID("x", time.Now())})
		}
		planner, plannerSecret := agent("alice/planner")
		agent("alice/reviewer")
		agent("alice/third")
		v, err := server.OpenConversation(ctx, planner, []string{"alice/reviewer"})
		if err != nil {
			t.Fatal(err)
		}
		conv := v.Conversation.ID
		if r, err := send(planner, conv); err != nil || r.Recipients != 1 {
			t.Fatalf("the first send: %+v, %v", r, err)
		}

		// A participant added by another server is reached by the next send.
		g, err := server.CreateThread(ctx, planner, hub.ThreadSpec{Title: "three", Participants: []string{"alice/reviewer"}})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := send(planner, g.Conversation.ID); err != nil || r.Recipients != 1 {
			t.Fatalf("the group's first send: %+v, %v", r, err)
		}
		otherPlanner, err := other.Authenticate(ctx, plannerSecret)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.AddParticipant(ctx, otherPlanner, g.Conversation.ID, "alice/third"); err != nil {
			t.Fatal(err)
		}
		if r, err := send(planner, g.Conversation.ID); err != nil || r.Recipients != 2 {
			t.Errorf("the send after another server added a participant: %+v, %v; want 2 recipients", r, err)
		}

		// The only other participant archived by another server: nobody
		// is left to receive.
		if _, err := other.ArchiveAgent(ctx, "alice/reviewer"); err != nil {
			t.Fatal(err)
		}
		if _, err := send(planner, conv); code(err) != "no_recipients" {
			t.Errorf("the send after another server archived its one recipient: %v, want no_recipients", err)
		}

		// A grant withdrawn by another server.
		bob := func(h *hub.Hub) *hub.User { u, _ := h.User(ctx, "bob"); return u }
		alice := func(h *hub.Hub) *hub.User { u, _ := h.User(ctx, "alice"); return u }
		agent("bob/helper")
		if _, err := reach.New(server, serverDB).RequestContact(ctx, alice(server), "bob", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := reach.New(server, serverDB).RequestContact(ctx, bob(server), "alice", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := server.SetGrant(ctx, alice(server), "alice/planner", "bob", true, true); err != nil {
			t.Fatal(err)
		}
		if _, err := server.OpenConversation(ctx, planner, []string{"bob/helper"}); code(err) != "pending_approval:pending_approval" {
			t.Fatalf("asking bob in: %v", err)
		}
		asks, _ := server.Approvals(ctx, bob(server))
		if _, err := server.DecideInbound(ctx, bob(server), asks[len(asks)-1].ID, true); err != nil {
			t.Fatal(err)
		}
		cross, err := server.OpenConversation(ctx, planner, []string{"bob/helper"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := send(planner, cross.Conversation.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := other.SetGrant(ctx, alice(other), "alice/planner", "bob", false, false); err != nil {
			t.Fatal(err)
		}
		if _, err := send(planner, cross.Conversation.ID); code(err) != "denied:grant" {
			t.Errorf("the send after another server withdrew the grant: %v, want denied:grant", err)
		}
	})
}

// TestPausesAndModesSeeOtherServers: the rest of what a send checks, with
// the writer keeping the conversation and the brakes' counts (§17 cached
// checks), changed by another process on the same database, reaches this
// server's very next send: a conversation paused by turns traded through
// the other server, its Resume there, and the sender set to review.
func TestPausesAndModesSeeOtherServers(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, open func() *store.DB) {
		set := hub.DefaultSettings()
		set.PauseTurns = 4
		start := func(db *store.DB) *hub.Hub { return server(t, db, set) }
		server, other := start(open()), start(open())
		alice, err := server.CreateUser(ctx, "alice", "")
		if err != nil {
			t.Fatal(err)
		}
		secrets := map[string]string{}
		for _, slug := range []string{"planner", "reviewer"} {
			if _, err := server.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/" + slug, Description: "an agent"}); err != nil {
				t.Fatal(err)
			}
			if _, secrets[slug], err = server.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: slug}); err != nil {
				t.Fatal(err)
			}
		}
		// Each call authenticates anew, as the faces do.
		send := func(h *hub.Hub, slug, conv string) (*hub.SendResult, error) {
			c, err := h.Authenticate(ctx, secrets[slug])
			if err != nil {
				t.Fatal(err)
			}
			return h.SendMessage(ctx, c, hub.SendInput{ConversationID: conv, Body: "turn " + hub.NewID("x", time.Now())})
		}
		planner, err := server.Authenticate(ctx, secrets["planner"])
		if err != nil {
			t.Fatal(err)
		}
		v, err := server.OpenConversation(ctx, planner, []string{"alice/reviewer"})
		if err != nil {
			t.Fatal(err)
		}
		conv := v.Conversation.ID
		if _, err := send(server, "planner", conv); err != nil {
			t.Fatalf("the first send: %v", err)
		}

		// The two agents trade turns through the other server until it
		// pauses the conversation.
		paused := false
		for i := 0; i < 2*set.PauseTurns && !paused; i++ {
			_, err := send(other, []string{"reviewer", "planner"}[i%2], conv)
			paused = code(err) == "denied:paused"
			if err != nil && !paused {
				t.Fatalf("turn %d on the other server: %v", i, err)
			}
		}
		if !paused {
			t.Fatalf("%d turns on the other server did not pause the conversation", 2*set.PauseTurns)
		}
		if _, err := send(server, "planner", conv); code(err) != "denied:paused" {
			t.Errorf("the send after the other server paused the conversation: %v, want denied:paused", err)
		}
		if _, err := other.Resume(ctx, alice, conv); err != nil {
			t.Fatal(err)
		}
		if _, err := send(server, "planner", conv); err != nil {
			t.Errorf("the send after the other server resumed the conversation: %v, want it sent", err)
		}

		// The sender set to review by the other server: held.
		if _, err := other.SetAgentMode(ctx, "alice/planner", hub.ModeReview); err != nil {
			t.Fatal(err)
		}
		if r, err := send(server, "planner", conv); err != nil || r.Message.Status != hub.MessageHeld {
			t.Errorf("the send after the other server set review mode: %+v, %v; want held", r, err)
		}
	})
}
