package api_test

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/servertest"
	"github.com/palaverhq/palaver/internal/store/storetest"
	"github.com/palaverhq/palaver/internal/webhook"
)

var update = flag.Bool("update", false, "rewrite testdata/views.txtar")

// views records the JSON each route answers, one section per call, in a
// form that holds still between runs: keys sorted, and ids, times,
// cursors, secrets and durations replaced by placeholders.
type views struct {
	servertest.Placeholders
	s     *server
	hook  string // the webhook endpoint's URL, which names a new port each run
	files []txtar.File
}

var (
	viewSecretRE = regexp.MustCompile(`\b(plv|plu|pli|whsec)_[A-Za-z0-9+/=_-]+`)
	viewCursorRE = regexp.MustCompile(`"cursor": "[A-Za-z0-9_-]+"`)
	viewMsRE     = regexp.MustCompile(`"duration_ms": \d+`)
)

func (v *views) normalize(s string) string {
	s = v.Replace(s)
	s = viewSecretRE.ReplaceAllString(s, "<${1}_secret>")
	s = strings.ReplaceAll(s, v.hook, "https://<webhook endpoint>")
	s = viewCursorRE.ReplaceAllString(s, `"cursor": "<cursor>"`)
	return viewMsRE.ReplaceAllString(s, `"duration_ms": <ms>`)
}

// call makes a REST call as person, records its status and JSON under
// name, and returns the JSON; a status other than 200 fails the test.
func (v *views) call(t *testing.T, name, person, method, path string, body any) map[string]any {
	t.Helper()
	code, got := v.s.rest(t, person, method, path, body)
	if code != http.StatusOK {
		t.Fatalf("%s %s: %d %v", method, path, code, got)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(got); err != nil {
		t.Fatal(err)
	}
	v.files = append(v.files, txtar.File{Name: name, Data: []byte(v.normalize(buf.String()))})
	return got
}

// tool calls an MCP tool as an agent and fails the test on a tool error.
func (v *views) tool(t *testing.T, agent, name string, args map[string]any) map[string]any {
	t.Helper()
	got := v.s.tool(t, agent, name, args)
	if _, failed := got["error"].(map[string]any); failed {
		t.Fatalf("%s(%v): %v", name, args, got)
	}
	return got
}

// TestViews pins the JSON of every route that answers JSON, each shape
// once (docs/api.md describes them): which fields, null or [] where a
// list is empty, which fields are left out when they do not apply. It
// walks one world: contacts, every kind of approval and its decision,
// agents with tokens, sessions, grants and a webhook that was called,
// projects with members, agents, threads and items, conversations read
// and written, a paused one, events, search and the admin's routes.
func TestViews(t *testing.T) {
	hook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hook.Close)
	roots := x509.NewCertPool()
	roots.AddCert(hook.Certificate())
	sender, err := webhook.New(webhook.Options{RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	settings := hub.DefaultSettings()
	settings.PauseTurns = 3
	// A clock a millisecond on at each reading: things made one after
	// another sort as they were made, as they would a moment apart.
	s := newServerOn(t, servertest.Options{Settings: settings, WebhookSender: sender, Hub: func(o *hub.Options) {
		o.PrivateHosts, o.Clock = []string{"127.0.0.1"}, steppingClock()
	}})
	for _, p := range []string{"carol", "dave"} {
		s.people[p] = s.Person(t, p)
	}
	v := &views{s: s, hook: hook.URL}
	start := v.s.tool(t, "alice/planner", "whoami", nil)["latest_cursor"].(string)
	_, aliceEvents := s.rest(t, "alice", "GET", "/events?timeout_s=0", nil)
	aliceCursor := aliceEvents["cursor"].(string)

	v.call(t, "GET /me", "alice", "GET", "/me", nil)

	// Contacts: requested, listed, approved, rejected, cancelled.
	v.call(t, "POST /contacts", "alice", "POST", "/contacts", map[string]any{"handle": "bob", "message": "Shall we work together?"})
	v.call(t, "GET /contacts (a request)", "bob", "GET", "/contacts", nil)
	v.call(t, "POST /contacts/{handle}/approve", "bob", "POST", "/contacts/alice/approve", nil)
	s.rest(t, "carol", "POST", "/contacts", map[string]any{"handle": "alice"})
	v.call(t, "POST /contacts/{handle}/reject", "alice", "POST", "/contacts/carol/reject", nil)
	s.rest(t, "alice", "POST", "/contacts", map[string]any{"handle": "dave"})
	v.call(t, "POST /contacts/{handle}/cancel", "alice", "POST", "/contacts/dave/cancel", nil)
	s.rest(t, "dave", "POST", "/contacts", map[string]any{"handle": "alice"})

	// Agents: a new one, the planner in review, public, exposed over A2A.
	v.call(t, "GET /agents", "alice", "GET", "/agents", nil)
	v.call(t, "POST /agents", "alice", "POST", "/agents", map[string]any{"slug": "reviewer", "description": "reads diffs", "goal": "catch bugs early"})
	v.call(t, "PUT /agents/{slug}/public", "alice", "PUT", "/agents/reviewer/public", map[string]any{"public": true})
	v.call(t, "GET /agents/{slug}/a2a", "alice", "GET", "/agents/reviewer/a2a", nil)
	v.call(t, "PUT /agents/{slug}/a2a", "alice", "PUT", "/agents/reviewer/a2a",
		map[string]any{"exposed": true, "skills": []any{map[string]any{"name": "Review", "description": "reads a diff and says what to change"}}})
	v.call(t, "PUT /agents/{slug}/grants/{contact}", "alice", "PUT", "/agents/reviewer/grants/bob", map[string]any{"allow_human": true, "allow_agents": false})
	v.call(t, "POST /agents/{slug}/archive", "alice", "POST", "/agents/reviewer/archive", nil)
	v.call(t, "POST /agents/{slug}/unarchive", "alice", "POST", "/agents/reviewer/unarchive", nil)
	s.agents["alice/reviewer"] = s.Token(t, "alice/reviewer", nil)

	// Every kind of approval waiting for alice, then each decided.
	grant := v.tool(t, "alice/planner", "request_grant", map[string]any{"contact_handle": "bob", "allow_human": true, "allow_agents": true, "reason": "to ship together"})
	question := v.tool(t, "alice/planner", "ask_owner", map[string]any{"question": "Ship on Friday?"})
	choice := v.tool(t, "alice/planner", "ask_owner", map[string]any{"question": "Which branch?", "options": []string{"main", "next"}})
	proposal := v.tool(t, "alice/planner", "create_project", map[string]any{"name": "Launch", "description": "ship v1", "reason": "a place for the launch"})
	secret := v.call(t, "POST /projects", "alice", "POST", "/projects", map[string]any{"name": "Secret plans", "description": "not yet"})
	secretID := secret["project_id"].(string)
	access := v.tool(t, "alice/planner", "request_project_access", map[string]any{"project_id": secretID})
	v.call(t, "PUT /agents/{slug}/mode", "alice", "PUT", "/agents/planner/mode", map[string]any{"mode": "review"})
	plans := v.tool(t, "alice/planner", "create_thread", map[string]any{"title": "Plans", "participants": []string{"alice/reviewer"}})["conversation_id"].(string)
	held := v.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": plans, "body": "draft: ship it now", "summary": "when to ship"})
	v.call(t, "GET /approvals", "alice", "GET", "/approvals", nil)
	_, approvals := s.rest(t, "alice", "GET", "/approvals", nil)
	var contactRequest string
	for _, a := range approvals["approvals"].([]any) {
		if a := a.(map[string]any); a["kind"] == hub.ApprovalContactRequest {
			contactRequest = a["id"].(string)
		}
	}
	v.call(t, "POST /approvals/{id}/approve (a contact request)", "alice", "POST", "/approvals/"+contactRequest+"/approve", nil)
	v.call(t, "POST /approvals/{id}/approve (a grant)", "alice", "POST", "/approvals/"+grant["request_id"].(string)+"/approve", nil)
	v.call(t, "POST /questions/{id}/answer", "alice", "POST", "/questions/"+question["question_id"].(string)+"/answer", map[string]any{"answer": "yes"})
	v.call(t, "POST /approvals/{id}/answer", "alice", "POST", "/approvals/"+choice["question_id"].(string)+"/answer", map[string]any{"answer": "main"})
	v.call(t, "POST /approvals/{id}/approve (a proposal)", "alice", "POST", "/approvals/"+proposal["request_id"].(string)+"/approve", nil)
	v.call(t, "POST /approvals/{id}/reject (an access request)", "alice", "POST", "/approvals/"+access["request_id"].(string)+"/reject", nil)
	v.call(t, "POST /approvals/{id}/approve (a held message, edited)", "alice", "POST", "/approvals/"+held["message_id"].(string)+"/approve", map[string]any{"body": "ship it on Friday"})
	s.rest(t, "alice", "PUT", "/agents/planner/mode", map[string]any{"mode": "active"})

	// An inbound ask for bob, let in.
	if got := v.tool(t, "alice/planner", "open_conversation", map[string]any{"handles": []string{"bob/helper"}}); got["status"] != "pending_approval" {
		t.Fatalf("open_conversation: %v", got)
	}
	v.call(t, "GET /contacts", "bob", "GET", "/contacts", nil)
	_, bobs := v.s.rest(t, "bob", "GET", "/approvals", nil)
	ask := bobs["approvals"].([]any)[0].(map[string]any)
	v.call(t, "GET /approvals (an inbound ask)", "bob", "GET", "/approvals", nil)
	v.call(t, "POST /approvals/{id}/approve (an inbound ask)", "bob", "POST", "/approvals/"+ask["id"].(string)+"/approve", nil)
	evs, _ := s.events(t, "alice/planner", start)
	direct := eventOf(evs, hub.EventConversationOpened)["conversation_id"].(string)

	// The helper writes to the planner, whose session reads and tries
	// one; a webhook of the planner's is called for what it hears.
	hooked := v.call(t, "POST /agents/{slug}/webhooks", "alice", "POST", "/agents/planner/webhooks", map[string]any{"url": hook.URL + "/hook"})
	v.tool(t, "alice/planner", "whoami", map[string]any{"instance": "desk", "instance_note": "the launch"})
	first := v.tool(t, "bob/helper", "send_message", map[string]any{"conversation_id": direct, "body": "hello planner"})
	v.tool(t, "bob/helper", "send_message", map[string]any{"conversation_id": direct, "body": "are you there?"})
	v.tool(t, "alice/planner", "acknowledge", map[string]any{"message_id": first["message_id"], "outcome": "failed", "error": "the build broke"})
	if _, err := s.Webhooks.Deliver(ctx); err != nil {
		t.Fatal(err)
	}
	v.call(t, "GET /agents/{slug}/webhooks", "alice", "GET", "/agents/planner/webhooks", nil)
	v.call(t, "POST /agents/{slug}/webhooks/{id}/enable", "alice", "POST", "/agents/planner/webhooks/"+hooked["id"].(string)+"/enable", nil)
	v.call(t, "GET /agents/{slug}/inbox", "alice", "GET", "/agents/planner/inbox", nil)

	// Tokens: an agent's and a person's.
	minted := v.call(t, "POST /agents/{slug}/tokens", "alice", "POST", "/agents/planner/tokens", map[string]any{"name": "laptop", "scopes": "msg:read,msg:write", "expires_in_days": 30})
	v.call(t, "GET /agents/{slug}/tokens", "alice", "GET", "/agents/planner/tokens", nil)
	v.call(t, "DELETE /tokens/{id} (an agent's)", "alice", "DELETE", "/tokens/"+minted["id"].(string), nil)
	v.call(t, "POST /tokens", "alice", "POST", "/tokens", map[string]any{"name": "script", "expires_in_days": 7})
	v.call(t, "GET /tokens", "alice", "GET", "/tokens", nil)
	v.call(t, "GET /agents/{slug}", "alice", "GET", "/agents/planner", nil)
	v.call(t, "DELETE /agents/{slug}/webhooks/{id}", "alice", "DELETE", "/agents/planner/webhooks/"+hooked["id"].(string), nil)

	// Notifications: a browser, an ntfy topic, preferences, one removed.
	v.call(t, "POST /notifications/push", "dave", "POST", "/notifications/push", map[string]any{"endpoint": "https://127.0.0.1/push/abc",
		"keys": map[string]any{"p256dh": "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}, "label": "Chromium"})
	topic := v.call(t, "POST /notifications/ntfy", "dave", "POST", "/notifications/ntfy", map[string]any{"url": "https://127.0.0.1/alerts", "token": "tk_x"})
	v.call(t, "PUT /notifications", "dave", "PUT", "/notifications", map[string]any{"time_zone": "Europe/Berlin", "kinds": []string{"question", "permission"},
		"quiet_from": "22:00", "quiet_to": "07:00", "quiet_urgent": true})
	v.call(t, "PUT /notifications/targets/{id}", "dave", "PUT", "/notifications/targets/"+topic["id"].(string), map[string]any{"kinds": []string{"question", "held"}})
	v.call(t, "POST /notifications/test", "dave", "POST", "/notifications/test", nil)
	v.call(t, "DELETE /notifications/targets/{id}", "dave", "DELETE", "/notifications/targets/"+topic["id"].(string), nil)
	v.call(t, "GET /notifications", "dave", "GET", "/notifications", nil)

	// Projects: members, agents, a thread, an item with its history.
	launch := v.call(t, "GET /projects", "alice", "GET", "/projects", nil)["projects"].([]any)
	var project string
	for _, p := range launch {
		if p := p.(map[string]any); p["name"] == "Launch" {
			project = p["project_id"].(string)
		}
	}
	v.call(t, "PATCH /projects/{id}", "alice", "PATCH", "/projects/"+project, map[string]any{"description": "ship v1 in March"})
	v.call(t, "PUT /projects/{id}/members/{handle}", "alice", "PUT", "/projects/"+project+"/members/bob", nil)
	v.call(t, "PUT /projects/{id}/agents/{agent...}", "bob", "PUT", "/projects/"+project+"/agents/helper", map[string]any{"access": "listen", "review": true})
	thread := v.call(t, "POST /projects/{id}/threads", "alice", "POST", "/projects/"+project+"/threads", map[string]any{"title": "Release plan"})["conversation_id"].(string)
	item := v.tool(t, "alice/planner", "add_item", map[string]any{"project_id": project, "title": "Write the notes", "kind": "task", "note": "short", "url": "https://example.com/notes"})["item"].(map[string]any)["item_id"].(string)
	v.tool(t, "alice/planner", "update_item", map[string]any{"project_id": project, "item_id": item, "status": "doing", "instance": "desk"})
	v.tool(t, "alice/planner", "open_thread", map[string]any{"project_id": project, "item_id": item})
	v.call(t, "GET /projects/{id}/items/{item}", "alice", "GET", "/projects/"+project+"/items/"+item, nil)
	v.call(t, "GET /projects/{id}", "alice", "GET", "/projects/"+project, nil)
	v.call(t, "DELETE /projects/{id}/agents/{agent...}", "bob", "DELETE", "/projects/"+project+"/agents/bob/helper", nil)
	v.call(t, "DELETE /projects/{id}/members/{handle}", "alice", "DELETE", "/projects/"+project+"/members/bob", nil)
	v.call(t, "POST /projects/{id}/archive", "alice", "POST", "/projects/"+secretID+"/archive", nil)
	v.call(t, "POST /projects/{id}/unarchive", "alice", "POST", "/projects/"+secretID+"/unarchive", nil)

	// Conversations: written in, read a page at a time, paused and
	// resumed, closed.
	v.call(t, "POST /conversations/{id}/messages", "alice", "POST", "/conversations/"+thread+"/messages", map[string]any{"body": "**Friday** it is", "format": "markdown"})
	v.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": thread, "body": "noted", "instance": "desk"})
	v.call(t, "GET /conversations/{id}", "alice", "GET", "/conversations/"+plans, nil)
	v.call(t, "GET /conversations/{id}/messages", "alice", "GET", "/conversations/"+thread+"/messages?after_seq=0&limit=1", nil)
	v.call(t, "GET /conversations/{id}/messages?before_seq", "alice", "GET", "/conversations/"+thread+"/messages?before_seq=2", nil)
	for i, agent := range []string{"alice/reviewer", "alice/planner", "alice/reviewer"} { // PauseTurns of them
		v.tool(t, agent, "send_message", map[string]any{"conversation_id": plans, "body": fmt.Sprintf("turn %d", i+1)})
	}
	v.call(t, "GET /conversations", "alice", "GET", "/conversations", nil)
	v.call(t, "POST /conversations/{id}/resume", "alice", "POST", "/conversations/"+plans+"/resume", nil)
	closing := v.tool(t, "alice/planner", "create_thread", map[string]any{"title": "Done soon", "participants": []string{"alice/reviewer"}})["conversation_id"].(string)
	v.tool(t, "alice/planner", "request_close", map[string]any{"conversation_id": closing})
	v.call(t, "POST /conversations/{id}/close", "alice", "POST", "/conversations/"+closing+"/close", nil)
	storetest.SearchIndexed(t, v.s.Store)
	v.call(t, "GET /search", "alice", "GET", "/search?q=friday", nil)
	v.call(t, "GET /events", "alice", "GET", "/events?timeout_s=0&cursor="+aliceCursor, nil)

	// The admin's routes, and a contact removed.
	v.call(t, "GET /people", "alice", "GET", "/people", nil)
	v.call(t, "PUT /signup", "alice", "PUT", "/signup", map[string]any{"mode": "invite"})
	v.call(t, "POST /invites", "alice", "POST", "/invites", nil)
	v.call(t, "POST /contacts/{handle}/remove", "alice", "POST", "/contacts/dave/remove", nil)

	got := txtar.Format(&txtar.Archive{Comment: []byte("The JSON each REST route answers (TestViews): keys sorted, ids, times,\ncursors, secrets and durations as placeholders.\n"), Files: v.files})
	const golden = "testdata/views.txtar"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/api -run TestViews -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("the routes' JSON differs from %s (-want +got):\n%s", golden, diff)
	}
}

// steppingClock moves a millisecond on each time it is read.
func steppingClock() *hubtest.Clock {
	c := hubtest.NewClock(time.Now())
	c.Tick(time.Millisecond)
	return c
}
