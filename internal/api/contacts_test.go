package api_test

import "testing"

// TestRemoveContactOverREST: either of two contacts ends the contact with
// POST /contacts/{handle}/remove; from then on neither one's agents can
// open a conversation with the other's side or speak in one they share,
// the grants and inbound asks that stood on it are gone, and the ended
// contact cannot be accepted after all, only asked for again.
func TestRemoveContactOverREST(t *testing.T) {
	s := newServer(t)
	open := func(agent, handle string) map[string]any {
		return s.tool(t, agent, "open_conversation", map[string]any{"handles": []string{handle}})
	}
	if code, got := s.rest(t, "alice", "POST", "/contacts", map[string]any{"handle": "bob"}); code != 200 || got["status"] != "pending" {
		t.Fatalf("contact request: %d %v", code, got)
	}
	if code, got := s.rest(t, "bob", "POST", "/contacts/alice/approve", nil); code != 200 || got["status"] != "accepted" {
		t.Fatalf("contact approval: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "PUT", "/agents/planner/grants/bob", map[string]any{"allow_agents": true}); code != 200 {
		t.Fatalf("grant: %d %v", code, got)
	}
	if got := open("alice/planner", "bob/helper"); got["status"] != "pending_approval" {
		t.Fatalf("before bob lets the planner in: %v", got)
	}
	_, approvals := s.rest(t, "bob", "GET", "/approvals", nil)
	ask := approvals["approvals"].([]any)[0].(map[string]any)["id"].(string)
	if code, got := s.rest(t, "bob", "POST", "/approvals/"+ask+"/approve", nil); code != 200 {
		t.Fatalf("letting the planner in: %d %v", code, got)
	}
	opened := open("alice/planner", "bob/helper")
	conv, _ := opened["conversation_id"].(string)
	if opened["status"] != "open" || conv == "" {
		t.Fatalf("the planner opening: %v", opened)
	}

	// bob, who was asked, ends it.
	code, got := s.rest(t, "bob", "POST", "/contacts/alice/remove", nil)
	if code != 200 || got["status"] != "removed" || got["handle"] != "alice" {
		t.Fatalf("bob removing alice: %d %v", code, got)
	}
	for _, tc := range []struct{ agent, handle string }{{"alice/planner", "bob/helper"}, {"alice/planner", "bob"}, {"bob/helper", "alice/planner"}} {
		if got := open(tc.agent, tc.handle); got["status"] != "denied" || reason(got) != "contact" {
			t.Errorf("%s opening with %s once the contact ended: %v, want denied naming the contact step", tc.agent, tc.handle, got)
		}
	}
	if got := s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "still there?"}); got["status"] != "denied" || reason(got) != "contact" {
		t.Errorf("the planner's send once the contact ended: %v", got)
	}
	_, mine := s.rest(t, "alice", "GET", "/contacts", nil)
	contacts, grants := mine["contacts"].([]any), mine["grants"].([]any)
	if len(contacts) != 1 || contacts[0].(map[string]any)["status"] != "removed" || len(grants) != 1 ||
		grants[0].(map[string]any)["allow_agents"] != false || grants[0].(map[string]any)["allow_human"] != false {
		t.Errorf("alice's contacts once bob ended it: %v; want removed, and the planner's grant withdrawn", mine)
	}
	if _, bobs := s.rest(t, "bob", "GET", "/contacts", nil); len(bobs["inbound"].([]any)) != 0 {
		t.Errorf("bob's inbound asks once he ended the contact: %v; want none", bobs["inbound"])
	}
	for _, tc := range []struct{ person, path string }{{"bob", "/contacts/alice/remove"}, {"alice", "/contacts/bob/remove"}, {"alice", "/contacts/bob/approve"}, {"bob", "/contacts/alice/approve"}} {
		if code, got := s.rest(t, tc.person, "POST", tc.path, nil); code != 404 {
			t.Errorf("%s: POST %s once the contact ended: %d %v, want 404", tc.person, tc.path, code, got)
		}
	}
	if code, got := s.rest(t, "alice", "POST", "/contacts", map[string]any{"handle": "bob"}); code != 200 || got["status"] != "pending" {
		t.Errorf("alice asking again: %d %v; want a new request for bob to answer", code, got)
	}
}
