package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/servertest"
)

// waitEvents long-polls /api/v1/events in the background; the result
// arrives on the channel.
func (s *server) waitEvents(t *testing.T, person, cursor string) <-chan map[string]any {
	t.Helper()
	out := make(chan map[string]any, 1)
	go func() {
		code, got := s.rest(t, person, "GET", "/events?timeout_s=30&cursor="+cursor, nil)
		if code != 200 {
			got = map[string]any{"status": code, "body": got}
		}
		out <- got
	}()
	return out
}

func eventTypes(got map[string]any) []string {
	var types []string
	events, _ := got["events"].([]any)
	for _, e := range events {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	return types
}

// TestPersonEventsOverREST: a script waiting on /api/v1/events hears
// contact.request when another person asks, and inbound.ask when another
// owner's agent asks to come in; it carries on from the cursor it got.
func TestPersonEventsOverREST(t *testing.T) {
	s := newServer(t)
	_, start := s.rest(t, "bob", "GET", "/events?timeout_s=0", nil)
	cursor, _ := start["cursor"].(string)
	if start["timed_out"] != true || cursor == "" {
		t.Fatalf("a first look: %v", start)
	}
	waiting := s.waitEvents(t, "bob", cursor)
	servertest.Parked(t, s.Waker, 1)
	if code, _ := s.rest(t, "alice", "POST", "/contacts", map[string]any{"handle": "bob"}); code != 200 {
		t.Fatalf("alice asks bob: %d", code)
	}
	got := <-waiting
	if fmt.Sprint(eventTypes(got)) != "[contact.request]" {
		t.Fatalf("bob heard %v, want contact.request", got)
	}
	cursor = got["cursor"].(string)

	s.rest(t, "bob", "POST", "/contacts/alice/approve", nil)
	s.rest(t, "alice", "PUT", "/agents/planner/grants/bob", map[string]any{"allow_agents": true})
	_, after := s.rest(t, "bob", "GET", "/events?timeout_s=0&cursor="+cursor, nil)
	cursor = after["cursor"].(string)
	waiting = s.waitEvents(t, "bob", cursor)
	servertest.Parked(t, s.Waker, 1)
	if got := s.tool(t, "alice/planner", "open_conversation", map[string]any{"handles": []string{"bob/helper"}}); got["status"] != "pending_approval" {
		t.Fatalf("the planner asks in: %v", got)
	}
	got = <-waiting
	if fmt.Sprint(eventTypes(got)) != "[inbound.ask]" {
		t.Fatalf("bob heard %v, want inbound.ask", got)
	}
	if code, got := s.rest(t, "bob", "GET", "/events?timeout_s=306", nil); code != 400 || !strings.Contains(fmt.Sprint(got), "timeout_s") {
		t.Fatalf("timeout_s past 55: %d %v", code, got)
	}
	if code, got := s.rest(t, "bob", "GET", "/events?cursor=nonsense", nil); code != 400 || !strings.Contains(fmt.Sprint(got), "cursor_invalid") {
		t.Fatalf("a made-up cursor: %d %v", code, got)
	}
}

// TestConversationsOverREST: the person's conversations listed with their
// state, one read with reads, a thread closed by its creator's owner, an
// agent archived and brought back, its detail read.
func TestConversationsOverREST(t *testing.T) {
	s := newServer(t)
	thread := s.tool(t, "alice/planner", "create_thread", map[string]any{"title": "Release", "participants": []string{"alice"}})
	conv := thread["conversation_id"].(string)
	s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "plan ready"})
	code, list := s.rest(t, "alice", "GET", "/conversations", nil)
	items, _ := list["conversations"].([]any)
	if code != 200 || len(items) != 1 || items[0].(map[string]any)["status"] != "open" || items[0].(map[string]any)["unread"] != float64(1) {
		t.Fatalf("alice's conversations: %d %v", code, list)
	}
	if code, got := s.rest(t, "bob", "GET", "/conversations/"+conv, nil); code != 404 {
		t.Fatalf("bob reads alice's thread: %d %v", code, got)
	}
	code, one := s.rest(t, "alice", "GET", "/conversations/"+conv, nil)
	if code != 200 || len(one["messages"].([]any)) != 1 || one["title"] != "Release" {
		t.Fatalf("the thread: %d %v", code, one)
	}
	s.tool(t, "alice/planner", "request_close", map[string]any{"conversation_id": conv})
	if code, got := s.rest(t, "bob", "POST", "/conversations/"+conv+"/close", nil); code != 404 {
		t.Fatalf("bob closes it: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "POST", "/conversations/"+conv+"/close", nil); code != 200 || got["status"] != "closed" {
		t.Fatalf("alice closes it: %d %v", code, got)
	}

	if code, got := s.rest(t, "alice", "POST", "/agents/planner/archive", nil); code != 200 || got["archived_at"] == "" {
		t.Fatalf("archive: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "POST", "/agents/planner/unarchive", nil); code != 200 || got["archived_at"] != "" {
		t.Fatalf("unarchive: %d %v", code, got)
	}
	code, detail := s.rest(t, "alice", "GET", "/agents/planner", nil)
	tokens, _ := detail["tokens"].([]any)
	if code != 200 || len(tokens) != 1 || tokens[0].(map[string]any)["revoked_at"] == "" {
		t.Fatalf("the planner after coming back: %d %v; want its old token revoked", code, detail)
	}
	if code, _ := s.rest(t, "bob", "GET", "/agents/planner", nil); code != 404 {
		t.Fatalf("bob reads alice's agent: %d", code)
	}
}

// TestAdminOverREST: the admin (the first person) lists everyone, opens
// sign-up and makes an invitation; anyone else is refused.
func TestAdminOverREST(t *testing.T) {
	s := newServer(t)
	code, got := s.rest(t, "alice", "GET", "/people", nil)
	if code != 200 || len(got["people"].([]any)) != 2 || got["signup"] != "invite" {
		t.Fatalf("people: %d %v", code, got)
	}
	if code, _ := s.rest(t, "bob", "GET", "/people", nil); code != 403 {
		t.Fatalf("bob lists people: %d", code)
	}
	if code, got := s.rest(t, "alice", "PUT", "/signup", map[string]any{"mode": "everyone"}); code != 400 {
		t.Fatalf("an unknown mode: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "PUT", "/signup", map[string]any{"mode": "open"}); code != 200 || got["signup"] != "open" {
		t.Fatalf("open sign-up: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "POST", "/invites", nil); code != 200 || !strings.HasPrefix(got["path"].(string), "/signup?invite=pli_") {
		t.Fatalf("an invitation: %d %v", code, got)
	}
	if code, _ := s.rest(t, "bob", "POST", "/invites", nil); code != 403 {
		t.Fatalf("bob invites: %d", code)
	}
	if code, got := s.rest(t, "bob", "POST", "/tokens", map[string]any{"name": "script"}); code != 200 || !strings.HasPrefix(got["token"].(string), "plu_") {
		t.Fatalf("bob mints an API token: %d %v", code, got)
	}
	if code, got := s.rest(t, "bob", "GET", "/tokens", nil); code != 200 || len(got["tokens"].([]any)) != 2 {
		t.Fatalf("bob's API tokens: %d %v", code, got)
	}
}

// TestEmptyCursorStartsAtLatest: an empty cursor is no cursor, on both
// faces (§6: a wait without one starts at the latest): GET
// /api/v1/events?cursor= and wait_for_messages with cursor "" each answer
// from the latest cursor, neither replaying what came before nor refusing
// the cursor.
func TestEmptyCursorStartsAtLatest(t *testing.T) {
	s := newServer(t)
	// Something for each to not replay: a contact request to bob, a
	// message to the planner.
	if code, _ := s.rest(t, "alice", "POST", "/contacts", map[string]any{"handle": "bob"}); code != 200 {
		t.Fatalf("alice asks bob: %d", code)
	}
	thread := s.tool(t, "alice/planner", "create_thread", map[string]any{"title": "Release", "participants": []string{"alice"}})
	if code, _ := s.rest(t, "alice", "POST", "/conversations/"+thread["conversation_id"].(string)+"/messages", map[string]any{"body": "before the wait"}); code != 200 {
		t.Fatalf("alice writes: %d", code)
	}

	_, first := s.rest(t, "bob", "GET", "/events?timeout_s=0", nil)
	code, got := s.rest(t, "bob", "GET", "/events?timeout_s=0&cursor=", nil)
	if code != 200 || got["timed_out"] != true || len(got["events"].([]any)) != 0 || got["cursor"] != first["cursor"] {
		t.Fatalf("GET /events?cursor=: %d %v; want timed_out at the latest cursor %v, nothing replayed", code, got, first["cursor"])
	}
	latest := s.tool(t, "alice/planner", "whoami", nil)["latest_cursor"].(string)
	heard := s.tool(t, "alice/planner", "wait_for_messages", map[string]any{"cursor": "", "timeout_s": 0})
	if heard["error"] != nil || heard["timed_out"] != true || len(heard["events"].([]any)) != 0 || heard["cursor"] != latest {
		t.Fatalf("wait_for_messages with cursor \"\": %v; want timed_out at the latest cursor %s, nothing replayed", heard, latest)
	}
}
