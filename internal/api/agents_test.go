package api_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestPublicAgentRoute: PUT /agents/{slug}/public marks the owner's agent
// public or private, the agent JSON shows it, and while it is public another
// owner's agent opens a conversation with it and speaks, with no contact
// between the owners (§1, §3).
func TestPublicAgentRoute(t *testing.T) {
	s := newServer(t)
	open := func() map[string]any {
		return s.tool(t, "alice/planner", "open_conversation", map[string]any{"handles": []string{"bob/helper"}})
	}
	if got := open(); got["status"] != "denied" || reason(got) != "contact" {
		t.Fatalf("strangers: %v, want denied naming the contact step", got)
	}
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{}`, 400, `public is required: {"public": true} makes the agent public, {"public": false} private`},
		{`{"public":"yes"}`, 400, `field "public" must be true or false`},
		{`{"public":true,"mode":"listen"}`, 400, `unknown field "mode"`},
	} {
		code, got := s.rest(t, "bob", "PUT", "/agents/helper/public", tc.body)
		msg, _ := got["error"].(map[string]any)["message"].(string)
		if code != tc.status || !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%s: %d %v, want %d %q", tc.body, code, got, tc.status, tc.want)
		}
	}
	if code, got := s.rest(t, "bob", "PUT", "/agents/helper/public", map[string]any{"public": true}); code != 200 || got["public"] != true || got["handle"] != "bob/helper" {
		t.Fatalf("making the helper public: %d %v", code, got)
	}
	if _, got := s.rest(t, "bob", "GET", "/agents", nil); fmt.Sprint(got["agents"]) != "[map[archived_at: created_at:"+
		got["agents"].([]any)[0].(map[string]any)["created_at"].(string)+" description: goal: handle:bob/helper mode:active public:true]]" {
		t.Errorf("bob's agents: %v; want the helper public", got)
	}
	if _, got := s.rest(t, "bob", "GET", "/agents/helper", nil); got["public"] != true {
		t.Errorf("the helper's page: %v; want public", got)
	}
	conv, _ := open()["conversation_id"].(string)
	if conv == "" {
		t.Fatalf("opening with the public helper: no conversation")
	}
	if got := s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "hello helper"}); got["status"] != "sent" {
		t.Fatalf("planner → public helper: %v", got)
	}
	if got := s.tool(t, "bob/helper", "send_message", map[string]any{"conversation_id": conv, "body": "hello planner"}); got["status"] != "sent" {
		t.Fatalf("public helper → planner: %v", got)
	}
	if code, got := s.rest(t, "bob", "PUT", "/agents/helper/public", map[string]any{"public": false}); code != 200 || got["public"] != false {
		t.Fatalf("making the helper private: %d %v", code, got)
	}
	if got := s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "still there?"}); got["status"] != "denied" {
		t.Fatalf("a send to the helper made private: %v, want denied", got)
	}
}
