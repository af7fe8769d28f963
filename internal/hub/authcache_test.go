package hub_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
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
	secret := w.tokens["alice/planner"]
	before := reads.Load()
	for range 3 {
		if _, err := w.hub.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	if n := reads.Load() - before; n != 0 {
		t.Errorf("three calls with a token already resolved read it %d times, want 0", n)
	}
	// A token's use being recorded changes nothing it resolves to.
	w.clock.Advance(2 * time.Minute)
	if _, err := w.hub.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if n := reads.Load() - before; n != 0 {
		t.Errorf("recording the token's use made it be read again (%d reads)", n)
	}
	if _, err := w.hub.RevokeToken(ctx, w.planner.TokenID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.Authenticate(ctx, secret); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("the call after the revocation: %v, want revoked", err)
	}
}

// TestAuthenticationFromMemorySeesOtherServers: a change made by another
// process on the same database — the admin command line on the SQLite
// file, another replica on PostgreSQL — reaches this hub's very next call:
// a mode change, an archive, a revocation.
func TestAuthenticationFromMemorySeesOtherServers(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, open func() *store.DB) {
		start := func(db *store.DB) *hub.Hub {
			h, err := hub.New(ctx, hub.Options{Store: db, Waker: notify.NewLocal(), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
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
