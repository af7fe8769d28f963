package api_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestA2ARoute: GET and PUT /agents/{slug}/a2a show and set whether the
// owner's agent is exposed over A2A, with its skills; bad input changes
// nothing, and another owner's agent is not_found (§18).
func TestA2ARoute(t *testing.T) {
	s := newServer(t)
	if code, got := s.rest(t, "alice", "GET", "/agents/planner/a2a", nil); code != 200 || got["exposed"] != false || fmt.Sprint(got["skills"]) != "[]" ||
		got["card_path"] != "/a2a/alice/planner/.well-known/agent-card.json" {
		t.Fatalf("never set: %d %v; want not exposed, no skills", code, got)
	}
	body := map[string]any{"exposed": true, "skills": []map[string]any{{"name": "Review code", "description": "reads a diff"}}}
	if code, got := s.rest(t, "alice", "PUT", "/agents/planner/a2a", body); code != 200 || got["exposed"] != true ||
		fmt.Sprint(got["skills"]) != "[map[description:reads a diff id:review-code name:Review code]]" {
		t.Fatalf("exposing: %d %v", code, got)
	}
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{}`, 400, `exposed is required`},
		{`{"exposed":true,"skills":[{"name":""}]}`, 400, `skill name is required`},
		{`{"exposed":true,"public":true}`, 400, `unknown field "public"`},
	} {
		code, got := s.rest(t, "alice", "PUT", "/agents/planner/a2a", tc.body)
		msg, _ := got["error"].(map[string]any)["message"].(string)
		if code != tc.status || !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%s: %d %v, want %d %q", tc.body, code, got, tc.status, tc.want)
		}
	}
	// Turning it off keeps the skills; the refused bodies changed nothing.
	if code, got := s.rest(t, "alice", "PUT", "/agents/planner/a2a", map[string]any{"exposed": false}); code != 200 || got["exposed"] != false ||
		len(got["skills"].([]any)) != 1 {
		t.Fatalf("turning it off: %d %v; want off with its skill", code, got)
	}
	if code, _ := s.rest(t, "bob", "PUT", "/agents/alice/planner/a2a", map[string]any{"exposed": true}); code != 404 {
		t.Errorf("bob setting alice's agent: %d; want 404", code)
	}
}
