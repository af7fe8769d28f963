package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// editedThread is a thread of alice's project where bob is a member with
// his helper, and alice's planner is in review: the planner's "draft:
// ship it now" went out as alice edited it, "ship it on Friday". It
// returns the thread's id.
func editedThread(t *testing.T, s *server) string {
	t.Helper()
	alice, _ := s.hub.User(ctx, "alice")
	bob, _ := s.hub.User(ctx, "bob")
	for _, step := range []func() error{
		func() error { _, err := s.Reach.RequestContact(ctx, alice, "bob", ""); return err },
		func() error { _, err := s.Reach.RequestContact(ctx, bob, "alice", ""); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.hub.CreateProject(ctx, alice, "Launch", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.AddMember(ctx, alice, p.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SetProjectAgent(ctx, alice, p.ID, "planner", hub.AccessSpeak, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SetProjectAgent(ctx, bob, p.ID, "helper", hub.AccessSpeak, false); err != nil {
		t.Fatal(err)
	}
	thread := s.tool(t, "alice/planner", "open_thread", map[string]any{"project_id": p.ID, "title": "Plan"})["conversation_id"].(string)
	held := s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": thread, "body": "draft: ship it now"})
	if held["status"] != "held" {
		t.Fatalf("the planner's send in review: %v", held)
	}
	if code, got := s.rest(t, "alice", "POST", "/approvals/"+held["message_id"].(string)+"/approve", map[string]any{"body": "ship it on Friday"}); code != http.StatusOK || got["authority"] != hub.AuthorityEdited {
		t.Fatalf("alice editing and approving: %d %v", code, got)
	}
	return thread
}

// TestEditedWordsOverREST: GET /conversations/{id} and its /messages give
// the agent's own words of an edited message to the owner who edited them
// and to no one else — bob, a person taking part, gets the words that went
// out and owner_edited (§7) — and no tool result carries them, neither
// bob's helper's nor alice's planner's.
func TestEditedWordsOverREST(t *testing.T) {
	s := newServer(t)
	thread := editedThread(t, s)
	edited := func(msgs []any) map[string]any {
		t.Helper()
		for _, m := range msgs {
			if m := m.(map[string]any); strings.Contains(m["body"].(string), "ship it") {
				return m
			}
		}
		t.Fatalf("no edited message among %v", msgs)
		return nil
	}
	for _, c := range []struct {
		person, original string
	}{{"alice", "draft: ship it now"}, {"bob", ""}} {
		for _, path := range []string{"/conversations/" + thread, "/conversations/" + thread + "/messages"} {
			code, got := s.rest(t, c.person, "GET", path, nil)
			if code != http.StatusOK {
				t.Fatalf("%s GET %s: %d %v", c.person, path, code, got)
			}
			m := edited(got["messages"].([]any))
			prov := m["provenance"].(map[string]any)
			if m["body"] != "ship it on Friday" || prov["authority"] != hub.AuthorityEdited {
				t.Errorf("%s GET %s: %v; want the approved words, owner_edited", c.person, path, m)
			}
			if o, _ := m["original_body"].(string); o != c.original {
				t.Errorf("%s GET %s: original_body %q; want %q", c.person, path, o, c.original)
			}
		}
	}
	for _, agent := range []string{"bob/helper", "alice/planner"} {
		got := s.tool(t, agent, "read_messages", map[string]any{"conversation_id": thread})
		m := edited(got["messages"].([]any))
		if m["body"] != "ship it on Friday" || m["provenance"].(map[string]any)["authority"] != hub.AuthorityEdited {
			t.Errorf("%s read_messages: %v; want the approved words, owner_edited", agent, m)
		}
		if _, ok := m["original_body"]; ok || strings.Contains(strings.ToLower(toJSON(got)), "ship it now") {
			t.Errorf("%s read_messages carries the agent's draft: %v", agent, got)
		}
	}
}

// toJSON is v as JSON text.
func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
