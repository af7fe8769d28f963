package mcpserver_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpserver"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/permissions"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/rooms"
	"github.com/palaverhq/palaver/internal/search"
	"github.com/palaverhq/palaver/internal/servertest"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// replica is one `palaver serve` of a deployment on PostgreSQL: its own
// store pool, listener, hub and HTTP server, with the server's recheck loop.
type replica struct {
	*testServer
	pg *notify.Postgres
}

// newReplicas starts n replicas on one fresh PostgreSQL schema (skipping
// without PALAVER_TEST_DATABASE_URL), with alice's planner and reviewer and
// tokens minted on the first.
func newReplicas(t *testing.T, n int, settings hub.Settings) []*replica {
	t.Helper()
	url := storetest.Schema(t)
	ctx, cancel := context.WithCancel(context.Background())
	var rs []*replica
	for range n {
		db, err := store.Open(ctx, store.Options{Database: url, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		logs := &syncBuffer{}
		log := slog.New(slog.NewJSONHandler(logs, nil))
		pg, err := notify.OpenPostgres(ctx, url, log)
		if err != nil {
			t.Fatal(err)
		}
		h, err := hub.New(ctx, hub.Options{Store: db, Waker: pg, Logger: log, Settings: settings})
		if err != nil {
			t.Fatal(err)
		}
		pg.OnReconnect(func() { h.Recheck(ctx) })
		go h.RecheckEvery(ctx, time.Second) // as serve does
		desk := permissions.New(h, db)
		h.KeepPermissions(desk)
		srv, err := mcpserver.New(mcpserver.Options{Hub: h, Search: search.New(h, db), Permissions: desk, Reach: reach.New(h, db), Rooms: rooms.New(h, db), Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		srv.Register(mux)
		hs := httptest.NewServer(mux)
		t.Cleanup(func() {
			h.Shutdown()
			hs.Close()
			pg.Close()
			db.Close()
		})
		rs = append(rs, &replica{testServer: &testServer{url: hs.URL, hub: h, waker: pg.Local, logs: logs, tokens: map[string]string{}}, pg: pg})
	}
	t.Cleanup(cancel)
	a := rs[0]
	if _, err := a.hub.CreateUser(ctx, "alice", ""); err != nil {
		t.Fatal(err)
	}
	for _, handle := range []string{"alice/planner", "alice/reviewer"} {
		a.agent(t, handle, "", nil)
	}
	for _, r := range rs[1:] {
		r.tokens = a.tokens
	}
	return rs
}

// TestReplicasWakeEachOther: an agent parked on replica B wakes when
// another sends through replica A — promptly through LISTEN/NOTIFY, and
// still (within the recheck period) after B's listener was killed.
func TestReplicasWakeEachOther(t *testing.T) {
	rs := newReplicas(t, 2, hub.DefaultSettings())
	a, b := rs[0], rs[1]
	planner := a.client(t, "alice/planner", modern)
	reviewer := b.client(t, "alice/reviewer", modern)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)

	for _, killListener := range []bool{false, true} {
		cursor := mustCall(t, reviewer, "whoami", nil)["latest_cursor"].(string)
		woke := make(chan map[string]any, 1)
		go func() {
			woke <- rawWait(t, b.testServer, context.Background(), b.tokens["alice/reviewer"], modern, map[string]any{"cursor": cursor, "timeout_s": 55})
		}()
		servertest.Parked(t, b.testServer.waker, 1)
		if killListener {
			pid := b.pg.ListenerPID()
			admin, err := sql.Open("pgx", os.Getenv(storetest.EnvURL))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := admin.Exec("SELECT pg_terminate_backend($1)", pid); err != nil {
				t.Fatal(err)
			}
			admin.Close()
		}
		sent := mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": fmt.Sprintf("listener killed: %v", killListener)})
		select {
		case got := <-woke:
			events, _ := got["events"].([]any)
			if len(events) != 1 || !strings.Contains(fmt.Sprint(events[0]), sent["message_id"].(string)) {
				t.Fatalf("listener killed %v: the wait on B returned %v", killListener, got)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("listener killed %v: the wait on B did not wake", killListener)
		}
	}
}

// TestReplicaBurst: 1,000 sends through both replicas into one conversation
// get seqs 1..1000 with no gap or duplicate, and a waiter on each replica
// sees each message exactly once. The brakes' thresholds are raised through
// their settings for this burst, as an operator would.
func TestReplicaBurst(t *testing.T) {
	settings := hub.DefaultSettings()
	settings.Budget, settings.PauseTurns = 10000, 10000
	rs := newReplicas(t, 2, settings)
	ctx := context.Background()
	auth := func(r *replica, handle string) *hub.Caller {
		c, err := r.hub.Authenticate(ctx, r.tokens[handle])
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	v, err := rs[0].hub.OpenConversation(ctx, auth(rs[0], "alice/planner"), []string{"alice/reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID

	// A waiter per replica follows the reviewer's stream until it has seen
	// 1,000 messages.
	seen := make([]map[int64]int, len(rs))
	var waiters sync.WaitGroup
	for i, r := range rs {
		seen[i] = map[int64]int{}
		reviewer := auth(r, "alice/reviewer")
		start, _ := r.hub.LatestCursor(ctx, reviewer.Agent.ID)
		waiters.Go(func() {
			cursor := &start
			deadline := time.Now().Add(2 * time.Minute)
			for count := 0; count < 1000 && time.Now().Before(deadline); {
				res, err := r.hub.Wait(ctx, reviewer, hub.WaitInput{Cursor: cursor, Timeout: 5 * time.Second})
				if err != nil {
					t.Error(err)
					return
				}
				for _, e := range res.Events {
					if e.Type == hub.EventMessageNew {
						seen[i][e.Message.Seq]++
						count++
					}
				}
				cursor = &res.Cursor
			}
		})
	}

	var senders sync.WaitGroup
	for s := range 20 {
		r := rs[s%2]
		planner := auth(r, "alice/planner")
		senders.Go(func() {
			for k := range 50 {
				if _, err := r.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv, Body: fmt.Sprintf("sender %d message %d", s, k)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	senders.Wait()
	waiters.Wait()

	page, err := rs[1].hub.ListConversations(ctx, auth(rs[1], "alice/reviewer"), "", 0)
	c := page.Conversations
	if err != nil || len(c) != 1 || c[0].Conversation.LastSeq != 1000 {
		t.Fatalf("last seq: %+v, %v; want 1000", c, err)
	}
	for i := range rs {
		for seq := int64(1); seq <= 1000; seq++ {
			if seen[i][seq] != 1 {
				t.Fatalf("the waiter on replica %d saw seq %d %d times, want once", i, seq, seen[i][seq])
			}
		}
	}
}
