package a2a_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/servertest"
)

var ctx = context.Background()

// testServer is the real server — the MCP and A2A faces over one hub on a
// temp SQLite file (or PostgreSQL, PALAVER_TEST_STORE) — behind httptest,
// with alice (agents planner and reviewer) and bob (agent helper).
type testServer struct {
	*servertest.Server
	url    string
	hub    *hub.Hub
	tasks  *tasks.Tasks
	tokens map[string]string // agent handle or person → token
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	s := servertest.Open(t, servertest.Options{MCP: true, A2A: true, Wrap: true})
	ts := &testServer{Server: s, url: s.URL, hub: s.Hub, tasks: s.A2A, tokens: map[string]string{}}
	for _, u := range []string{"alice", "bob"} {
		ts.tokens[u] = s.Person(t, u)
	}
	for _, handle := range []string{"alice/planner", "alice/reviewer", "bob/helper"} {
		ts.tokens[handle] = s.Agent(t, handle, "the "+handle+" agent")
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
	skills := tasks.ParseSkills("Review code: reads a diff and says what to change\nTriage: sorts bug reports")
	if _, err := ts.tasks.SetExposure(ctx, alice, "reviewer", tasks.Setting{Exposed: true, Skills: skills}); err != nil {
		t.Fatal(err)
	}
}

// mcpAgent connects the named agent to the default MCP profile, as the
// Palaver agent's own loop does.
func (ts *testServer) mcpAgent(t *testing.T, handle string) *mcp.ClientSession {
	t.Helper()
	return servertest.Connect(t, ts.url+"/mcp/", ts.tokens[handle], nil)
}

// tool calls a tool and fails the test on a tool error.
func tool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	out, isErr := servertest.Call(t, s, name, args)
	if isErr {
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
