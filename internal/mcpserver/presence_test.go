package mcpserver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/servertest"
)

// presenceIn is a sibling's presence and sessions as a whoami result
// gives them, in one line: "listening desk=listening".
func presenceIn(t *testing.T, me map[string]any, handle string) string {
	t.Helper()
	siblings, _ := me["siblings"].([]any)
	for _, s := range siblings {
		s := s.(map[string]any)
		if s["handle"] != handle {
			continue
		}
		out := fmt.Sprint(s["presence"])
		sessions, _ := s["sessions"].([]any)
		for _, se := range sessions {
			se := se.(map[string]any)
			out += fmt.Sprintf(" %s=%s", se["name"], se["presence"])
		}
		return out
	}
	t.Fatalf("whoami lists no sibling %s: %v", handle, me["siblings"])
	return ""
}

// startWait parks a wait_for_messages of name's session on ts and returns
// what ends it.
func startWait(t *testing.T, ts *testServer, name, instance string) func() {
	t.Helper()
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	parked := ts.waker.Waiters()
	go func() {
		defer close(done)
		rawWait(t, ts, wctx, ts.tokens[name], modern, map[string]any{"timeout_s": 55, "instance": instance})
	}()
	servertest.Parked(t, ts.waker, parked+1)
	return func() { cancel(); <-done }
}

// TestPresenceOverMCP (§19): whoami shows a sibling and its session
// listening while its wait is parked, list_contacts and the inbox
// profile's list_agents show the agent listening, and a send counts it in
// listening.
func TestPresenceOverMCP(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.client(t, "alice/planner", modern)
	reviewer := ts.client(t, "alice/reviewer", modern)
	mustCall(t, planner, "whoami", map[string]any{"instance": "desk"})
	conv := mustCall(t, reviewer, "open_conversation", map[string]any{"handles": []string{"alice/planner"}})["conversation_id"]
	if got := presenceIn(t, mustCall(t, reviewer, "whoami", nil), "alice/planner"); got != "active desk=active" {
		t.Errorf("before any wait: %q, want active desk=active", got)
	}
	if got := mustCall(t, reviewer, "send_message", map[string]any{"conversation_id": conv, "body": "hello"})["listening"]; got != 0.0 {
		t.Errorf("a send to nobody listening: listening %v, want 0", got)
	}

	end := startWait(t, ts, "alice/planner", "desk")
	defer end()
	if got := presenceIn(t, mustCall(t, reviewer, "whoami", nil), "alice/planner"); got != "listening desk=listening" {
		t.Errorf("with its wait parked: %q, want listening desk=listening", got)
	}
	contacts := mustCall(t, reviewer, "list_contacts", nil)
	if got := contacts["sibling_agents"].([]any)[0].(map[string]any)["presence"]; got != hub.PresenceListening {
		t.Errorf("list_contacts: %v, want listening", got)
	}
	agents := mustCallArray(t, ts.clientAt(t, "/mcp/inbox/", "alice/reviewer", modern), "list_agents", nil)
	if got := agents[0].(map[string]any)["presence"]; got != hub.PresenceListening {
		t.Errorf("the inbox profile's list_agents: %v, want listening", got)
	}
	sent := mustCall(t, reviewer, "send_message", map[string]any{"conversation_id": conv, "body": "are you there?"})
	if diff := cmp.Diff([]any{1.0, 1.0}, []any{sent["recipients"], sent["listening"]}); diff != "" {
		t.Errorf("a send to the listening planner: recipients and listening (-want +got):\n%s", diff)
	}
	me := mustCall(t, planner, "whoami", nil)
	if got := me["instances"].([]any)[0].(map[string]any); got["name"] != "desk" || got["presence"] != hub.PresenceListening {
		t.Errorf("the planner's own sessions: %v, want desk listening", me["instances"])
	}
}

// TestPresenceAcrossReplicas (§19, PostgreSQL): a wait parked on replica A
// shows listening on replica B, in whoami and in a send's listening.
func TestPresenceAcrossReplicas(t *testing.T) {
	rs := newReplicas(t, 2, hub.DefaultSettings())
	a, b := rs[0], rs[1]
	reviewer := b.client(t, "alice/reviewer", modern)
	conv := mustCall(t, reviewer, "open_conversation", map[string]any{"handles": []string{"alice/planner"}})["conversation_id"]
	end := startWait(t, a.testServer, "alice/planner", "desk")
	defer end()
	if got := presenceIn(t, mustCall(t, reviewer, "whoami", nil), "alice/planner"); got != "listening desk=listening" {
		t.Errorf("on B, with the wait parked on A: %q, want listening desk=listening", got)
	}
	if got := mustCall(t, reviewer, "send_message", map[string]any{"conversation_id": conv, "body": "hello across"})["listening"]; got != 1.0 {
		t.Errorf("a send on B to the planner listening on A: listening %v, want 1", got)
	}
}

// TestRequestPermissionOverMCP: request_permission answers pending with
// the permission's id; bad arguments are refused by name.
func TestRequestPermissionOverMCP(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.client(t, "alice/planner", modern)
	out := mustCall(t, planner, "request_permission", map[string]any{"request_id": "tbxkq", "tool_name": "Bash",
		"description": "List files", "input_preview": `{"command":"ls"}`, "instance": "desk"})
	if out["status"] != "pending" || out["request_id"] != "tbxkq" || fmt.Sprint(out["permission_id"])[:5] != "perm_" {
		t.Errorf("request_permission: %v", out)
	}
	if out, isErr := call(t, planner, "request_permission", map[string]any{"request_id": "TBXKQ", "tool_name": "Bash"}); !isErr {
		t.Errorf("a request_id in capitals: %v, want a tool error", out)
	}
}
