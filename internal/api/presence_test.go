package api_test

import (
	"fmt"
	"testing"
)

// TestPermissionOverREST (§19): a permission request is listed among the
// owner's approvals with its words marked untrusted; another person
// deciding it is told it does not exist; the owner's approve allows it.
func TestPermissionOverREST(t *testing.T) {
	s := newServer(t)
	req := s.tool(t, "alice/planner", "request_permission", map[string]any{"request_id": "tbxkq", "tool_name": "Bash",
		"description": "List files", "input_preview": `{"command":"ls"}`, "instance": "desk"})
	id, _ := req["permission_id"].(string)
	code, got := s.rest(t, "alice", "GET", "/approvals", nil)
	list, _ := got["approvals"].([]any)
	if code != 200 || len(list) != 1 {
		t.Fatalf("alice's approvals: %d %v", code, got)
	}
	want := map[string]any{"id": id, "kind": "permission", "agent": "alice/planner", "instance": "desk", "request_id": "tbxkq",
		"tool_name": "Bash", "description": "List files", "input_preview": `{"command":"ls"}`, "status": "pending", "untrusted": true}
	for k, v := range want {
		if item := list[0].(map[string]any); item[k] != v {
			t.Errorf("the approval's %s: %v, want %v", k, item[k], v)
		}
	}
	if code, got := s.rest(t, "bob", "POST", "/approvals/"+id+"/approve", nil); code != 404 {
		t.Errorf("bob allowing alice's agent: %d %v, want 404", code, got)
	}
	if code, got := s.rest(t, "alice", "POST", "/approvals/"+id+"/approve", nil); code != 200 || got["status"] != "allowed" || got["behavior"] != "allow" {
		t.Errorf("alice allowing: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "POST", "/approvals/"+id+"/reject", nil); code != 409 {
		t.Errorf("alice denying what she allowed: %d %v, want 409", code, got)
	}
}

// TestPresenceOverREST (§19): GET /presence lists the person's agents with
// their presence and their sessions'.
func TestPresenceOverREST(t *testing.T) {
	s := newServer(t)
	s.tool(t, "alice/planner", "whoami", map[string]any{"instance": "desk"})
	code, got := s.rest(t, "alice", "GET", "/presence", nil)
	agents, _ := got["agents"].([]any)
	if code != 200 || len(agents) != 1 {
		t.Fatalf("GET /presence: %d %v", code, got)
	}
	a := agents[0].(map[string]any)
	sessions, _ := a["sessions"].([]any)
	if a["handle"] != "alice/planner" || a["presence"] != "active" || len(sessions) != 1 ||
		fmt.Sprintf("%v %v", sessions[0].(map[string]any)["name"], sessions[0].(map[string]any)["presence"]) != "desk active" {
		t.Errorf("alice's agents' presence: %v", a)
	}
}
