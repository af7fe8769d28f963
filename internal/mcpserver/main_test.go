package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpserver"
	"github.com/palaverhq/palaver/internal/metrics"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/servertest"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// Protocol eras the end-to-end tests run in.
const (
	modern = "2026-07-28"
	older  = "2025-06-18"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testServer is the real server on a temp SQLite file behind httptest.
type testServer struct {
	url    string // base URL, no trailing slash
	hub    *hub.Hub
	store  hub.Store
	srv    *mcpserver.Server
	reg    *prometheus.Registry // the server's metrics
	waker  *notify.Local
	logs   *syncBuffer
	tokens map[string]string // agent handle → token
}

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	return newTestServerWith(t, hub.DefaultSettings())
}

// newTestServerWith is newTestServer with other hub settings; each adjust
// runs on the MCP server before it is mounted.
func newTestServerWith(t testing.TB, settings hub.Settings, adjust ...func(*mcpserver.Server)) *testServer {
	t.Helper()
	return newTestServerOn(t, settings, nil, adjust...)
}

// newTestServerOn is newTestServerWith on the store wrap returns (nil: the
// store as it is), for tests that make the store fail.
func newTestServerOn(t testing.TB, settings hub.Settings, wrap func(hub.Store) hub.Store, adjust ...func(*mcpserver.Server)) *testServer {
	t.Helper()
	var db hub.Store = storetest.Open(t)
	if wrap != nil {
		db = wrap(db)
	}
	ts := &testServer{logs: &syncBuffer{}, tokens: map[string]string{}, reg: prometheus.NewRegistry()}
	log := slog.New(slog.NewJSONHandler(ts.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	observer, err := metrics.NewHubObserver(ts.reg)
	if err != nil {
		t.Fatal(err)
	}
	s := servertest.Open(t, servertest.Options{MCP: true, Wrap: true, Settings: settings, Store: db, Logger: log,
		Hub: func(o *hub.Options) { o.Observer = observer }, MCPMetrics: ts.reg, AdjustMCP: adjust})
	ts.url, ts.hub, ts.store, ts.srv, ts.waker = s.URL, s.Hub, s.Store, s.MCP, s.Waker
	for _, u := range []string{"alice", "bob"} {
		if _, err := ts.hub.CreateUser(context.Background(), u, strings.ToUpper(u[:1])+u[1:]); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []string{"alice/planner", "alice/reviewer", "bob/helper"} {
		ts.agent(t, a, "", nil)
	}
	return ts
}

// agent creates the agent if needed and mints it a token with scopes (nil:
// all), remembered under name (default the handle).
func (ts *testServer) agent(t testing.TB, handle, name string, scopes []string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := ts.hub.Agent(ctx, handle); err != nil {
		if _, err := ts.hub.CreateAgent(ctx, hub.AgentSpec{Handle: handle, Description: "the " + handle + " agent"}); err != nil {
			t.Fatal(err)
		}
	}
	owner, slug, _ := hub.ParseHandle(handle)
	_, secret, err := ts.hub.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	if name == "" {
		name = handle
	}
	ts.tokens[name] = secret
	return secret
}

// client connects a Go SDK MCP client to the default profile as the named
// agent in one protocol era.
func (ts *testServer) client(t *testing.T, name, era string) *mcp.ClientSession {
	t.Helper()
	return ts.clientAt(t, "/mcp/", name, era)
}

// clientAt is client for the profile at path.
func (ts *testServer) clientAt(t *testing.T, path, name, era string) *mcp.ClientSession {
	t.Helper()
	return servertest.Connect(t, ts.url+path, ts.tokens[name], &mcp.ClientSessionOptions{ProtocolVersion: era})
}

// call calls a tool and returns its structured result and whether it was a
// tool error.
func call(t *testing.T, s *mcp.ClientSession, tool string, args any) (map[string]any, bool) {
	t.Helper()
	r, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return structured(t, r), r.IsError
}

// mustCall is call that fails the test on a tool error.
func mustCall(t *testing.T, s *mcp.ClientSession, tool string, args any) map[string]any {
	t.Helper()
	out, isErr := call(t, s, tool, args)
	if isErr {
		t.Fatalf("%s(%v): tool error %v", tool, args, out)
	}
	return out
}

// mustCallArray calls a tool whose result is a bare JSON array (the
// inbox profile's list_agents): text content alone, no structured content.
func mustCallArray(t *testing.T, s *mcp.ClientSession, tool string, args any) []any {
	t.Helper()
	r, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || r.IsError || r.StructuredContent != nil || len(r.Content) != 1 {
		t.Fatalf("%s: %v %v, want one text content and no structured content", tool, r, err)
	}
	var out []any
	if err := json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &out); err != nil || out == nil {
		t.Fatalf("%s: %q is not a JSON array: %v", tool, r.Content[0].(*mcp.TextContent).Text, err)
	}
	return out
}

func structured(t *testing.T, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	// The text copy is the same JSON (§10.2).
	if len(r.Content) != 1 {
		t.Fatalf("want one text content, got %d", len(r.Content))
	}
	var text map[string]any
	if err := json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &text); err != nil {
		t.Fatalf("text content is not the JSON: %v", err)
	}
	return out
}

// post sends a raw JSON-RPC POST.
func (ts *testServer) post(t testing.TB, ctx context.Context, path, token, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// logLines returns the server's log lines mentioning s.
func (ts *testServer) logLines(s string) []string {
	var out []string
	for _, l := range strings.Split(ts.logs.String(), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}
