package a2a_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/a2a"
	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpserver"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/oauth"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

var ctx = context.Background()

// testServer is the real server — the MCP and A2A faces over one hub on a
// temp SQLite file (or PostgreSQL, PALAVER_TEST_STORE) — behind httptest,
// with alice (agents planner and reviewer) and bob (agent helper).
type testServer struct {
	url    string
	hub    *hub.Hub
	auth   *oauth.Authority // the authorization server's logic, for tokens of OAuth
	waker  *notify.Local
	tokens map[string]string // agent handle or person → token
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	waker := notify.NewLocal()
	db := storetest.Open(t)
	h, err := hub.New(ctx, hub.Options{Store: db, Waker: waker, Logger: log, Settings: hub.DefaultSettings()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mcpserver.New(mcpserver.Options{Hub: h, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	m.Register(mux)
	a2a.New(a2a.Options{Hub: h, Logger: log}).Register(mux)
	hs := httptest.NewServer(httpx.Wrap(mux, log))
	t.Cleanup(func() {
		h.Shutdown()
		hs.Close()
	})
	ts := &testServer{url: hs.URL, hub: h, auth: oauth.NewAuthority(oauth.AuthorityOptions{Hub: h, Store: db, Logger: log}), waker: waker, tokens: map[string]string{}}
	for _, u := range []string{"alice", "bob"} {
		if _, err := h.CreateUser(ctx, u, ""); err != nil {
			t.Fatal(err)
		}
		_, secret, err := h.MintUserToken(ctx, u, "a2a test", 0)
		if err != nil {
			t.Fatal(err)
		}
		ts.tokens[u] = secret
	}
	for _, handle := range []string{"alice/planner", "alice/reviewer", "bob/helper"} {
		if _, err := h.CreateAgent(ctx, hub.AgentSpec{Handle: handle, Description: "the " + handle + " agent"}); err != nil {
			t.Fatal(err)
		}
		owner, slug, _ := hub.ParseHandle(handle)
		_, secret, err := h.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug})
		if err != nil {
			t.Fatal(err)
		}
		ts.tokens[handle] = secret
	}
	return ts
}

// expose exposes alice's reviewer with two skills.
func (ts *testServer) expose(t *testing.T) {
	t.Helper()
	alice, err := ts.hub.User(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	skills := hub.ParseSkills("Review code: reads a diff and says what to change\nTriage: sorts bug reports")
	if _, err := ts.hub.SetAgentA2A(ctx, alice, "reviewer", hub.A2ASetting{Exposed: true, Skills: skills}); err != nil {
		t.Fatal(err)
	}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mcpAgent connects the named agent to the default MCP profile, as the
// Palaver agent's own loop does.
func (ts *testServer) mcpAgent(t *testing.T, handle string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "agent-loop", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             ts.url + "/mcp/",
		HTTPClient:           &http.Client{Transport: bearer{ts.tokens[handle], http.DefaultTransport}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// tool calls a tool and fails the test on a tool error.
func tool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(r.StructuredContent)
	var out map[string]any
	json.Unmarshal(b, &out)
	if r.IsError {
		t.Fatalf("%s(%v): tool error %v", name, args, out)
	}
	return out
}

// get makes a request with an optional token and returns status and body.
func get(t *testing.T, method, url, token, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// parked waits until n waits are parked on the waker, or fails after 10s.
func (ts *testServer) parked(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for ts.waker.Waiters() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waits parked, want %d", ts.waker.Waiters(), n)
		}
		runtime.Gosched()
	}
}
