package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/servertest"
)

var ctx = context.Background()

// server is the real server (MCP and REST faces) with alice and bob, each
// with an agent and both kinds of token.
type server struct {
	*servertest.Server
	url      string
	hub      *hub.Hub
	people   map[string]string // handle → plu_ token
	agents   map[string]string // agent handle → plv_ token
	sessions map[string]*mcp.ClientSession
}

func newServer(t testing.TB) *server {
	t.Helper()
	return newServerWith(t, hub.DefaultSettings())
}

// newServerWith is newServer with other hub settings.
func newServerWith(t testing.TB, settings hub.Settings) *server {
	t.Helper()
	return newServerOn(t, servertest.Options{Settings: settings})
}

// newServerOn is newServer on a server of those options (the MCP and
// REST faces always).
func newServerOn(t testing.TB, o servertest.Options) *server {
	t.Helper()
	o.MCP, o.API = true, true
	ts := servertest.Open(t, o)
	s := &server{Server: ts, url: ts.URL, hub: ts.Hub, people: map[string]string{}, agents: map[string]string{}, sessions: map[string]*mcp.ClientSession{}}
	for _, who := range []struct{ person, agent string }{{"alice", "planner"}, {"bob", "helper"}} {
		s.people[who.person] = ts.Person(t, who.person)
		s.agents[who.person+"/"+who.agent] = ts.Agent(t, who.person+"/"+who.agent, "")
	}
	return s
}

// rest calls the REST API as a person and returns the status and JSON.
func (s *server) rest(t testing.TB, person, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string: // sent as it is
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, s.url+"/api/v1"+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.people[person])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// tool calls an MCP tool as an agent.
func (s *server) tool(t *testing.T, agent, name string, args map[string]any) map[string]any {
	t.Helper()
	cs := s.sessions[agent]
	if cs == nil {
		cs = servertest.Connect(t, s.url+"/mcp/", s.agents[agent], nil)
		s.sessions[agent] = cs
	}
	out, _ := servertest.Call(t, cs, name, args)
	return out
}

func reason(v map[string]any) string {
	s, _ := v["reason"].(string)
	w, _, _ := strings.Cut(s, ":")
	return w
}

// TestConsentScenario walks the whole path through MCP (agents) and the
// REST API (people).
func TestConsentScenario(t *testing.T) {
	s := newServer(t)
	open := func() map[string]any {
		return s.tool(t, "alice/planner", "open_conversation", map[string]any{"handles": []string{"bob/helper"}})
	}
	if got := open(); got["status"] != "denied" || reason(got) != "contact" || got["trace"] == nil {
		t.Fatalf("strangers: %v, want denied naming the contact step", got)
	}
	if code, got := s.rest(t, "alice", "POST", "/contacts", map[string]any{"handle": "bob"}); code != 200 || got["status"] != "pending" {
		t.Fatalf("contact request: %d %v", code, got)
	}
	if code, got := s.rest(t, "bob", "POST", "/contacts/alice/approve", nil); code != 200 || got["status"] != "accepted" {
		t.Fatalf("contact approval: %d %v", code, got)
	}
	if got := open(); got["status"] != "denied" || reason(got) != "grant" {
		t.Fatalf("without a grant: %v", got)
	}
	req := s.tool(t, "alice/planner", "request_grant", map[string]any{"contact_handle": "bob", "allow_human": false, "allow_agents": true, "reason": "ship together"})
	if req["status"] != "pending" {
		t.Fatalf("request_grant: %v", req)
	}
	if code, got := s.rest(t, "alice", "POST", "/approvals/"+req["request_id"].(string)+"/approve", nil); code != 200 || got["status"] != "approved" {
		t.Fatalf("grant approval: %d %v", code, got)
	}
	cursor := s.tool(t, "alice/planner", "whoami", nil)["latest_cursor"].(string)
	if got := open(); got["status"] != "pending_approval" {
		t.Fatalf("before bob lets the planner in: %v", got)
	}
	_, approvals := s.rest(t, "bob", "GET", "/approvals", nil)
	items := approvals["approvals"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["kind"] != "inbound_ask" {
		t.Fatalf("bob's approvals: %v", approvals)
	}
	if code, got := s.rest(t, "bob", "POST", "/approvals/"+items[0].(map[string]any)["id"].(string)+"/approve", nil); code != 200 || got["status"] != "approved" {
		t.Fatalf("letting the planner in: %d %v", code, got)
	}
	heard := s.tool(t, "alice/planner", "wait_for_messages", map[string]any{"cursor": cursor, "timeout_s": 0})
	var conv string
	var types []string
	for _, e := range heard["events"].([]any) {
		ev := e.(map[string]any)
		types = append(types, ev["type"].(string))
		if ev["type"] == "conversation.opened" {
			conv = ev["conversation_id"].(string)
		}
	}
	if conv == "" || !strings.Contains(strings.Join(types, " "), "inbound.decided conversation.opened") {
		t.Fatalf("the planner heard %v", types)
	}
	if got := s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "hello helper"}); got["status"] != "sent" {
		t.Fatalf("planner → helper: %v", got)
	}
	if got := s.tool(t, "bob/helper", "send_message", map[string]any{"conversation_id": conv, "body": "hello planner"}); got["status"] != "sent" {
		t.Fatalf("helper → planner: %v", got)
	}
	if code, got := s.rest(t, "bob", "GET", "/conversations/"+conv+"/messages", nil); code != 200 || len(got["messages"].([]any)) != 2 {
		t.Fatalf("bob reading his agent's conversation: %d %v", code, got)
	}

	// Bob changes his mind: further sends and opens are refused.
	if code, _ := s.rest(t, "bob", "POST", "/approvals/"+items[0].(map[string]any)["id"].(string)+"/reject", nil); code != 200 {
		t.Fatalf("denying: %d", code)
	}
	if got := s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "still there?"}); got["status"] != "denied" {
		t.Fatalf("send after the denial: %v", got)
	}
	if got := open(); got["status"] != "denied" {
		t.Fatalf("open after the denial: %v", got)
	}
}

// TestForeignIDsAreNotFound: every tool and route that takes an id answers
// not_found — never forbidden — to someone without access to it.
func TestForeignIDsAreNotFound(t *testing.T) {
	s := newServer(t)
	// Alice's things that bob and his agent must not reach.
	planner := s.tool(t, "alice/planner", "whoami", nil)
	_ = planner
	if _, err := s.hub.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/reviewer"}); err != nil {
		t.Fatal(err)
	}
	conv := s.tool(t, "alice/planner", "create_thread", map[string]any{"title": "private", "participants": []string{"alice/reviewer"}})["conversation_id"].(string)
	msg := s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "secret"})["message_id"].(string)
	q := s.tool(t, "alice/planner", "ask_owner", map[string]any{"question": "ok?"})["question_id"].(string)
	tokens, err := s.hub.Tokens(ctx, "alice", "planner")
	if err != nil {
		t.Fatal(err)
	}
	// Alice's project, with a thread, an item and an image of her planner's.
	alice, _ := s.hub.User(ctx, "alice")
	project, err := s.hub.CreateProject(ctx, alice, "Secret plans", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SetProjectAgent(ctx, alice, project.ID, "planner", hub.AccessSpeak, false); err != nil {
		t.Fatal(err)
	}
	home := s.tool(t, "alice/planner", "whoami", nil)["home_project"].(map[string]any)["id"].(string)
	thread := s.tool(t, "alice/planner", "open_thread", map[string]any{"project_id": project.ID, "title": "Plan"})["conversation_id"].(string)
	item := s.tool(t, "alice/planner", "add_item", map[string]any{"project_id": project.ID, "title": "Step one"})["item"].(map[string]any)["item_id"].(string)
	img := s.tool(t, "alice/planner", "upload_image", map[string]any{"project_id": project.ID, "data_base64": base64.StdEncoding.EncodeToString(pngOf(t))})["image_id"].(string)
	bobsHome := s.tool(t, "bob/helper", "whoami", nil)["home_project"].(map[string]any)["id"].(string)

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"read_messages", map[string]any{"conversation_id": conv}},
		{"read_message", map[string]any{"message_id": msg}},
		{"acknowledge", map[string]any{"message_id": msg}},
		{"acknowledge", map[string]any{"message_id": q}},
		{"send_message", map[string]any{"conversation_id": conv, "body": "hi"}},
		{"add_participant", map[string]any{"conversation_id": conv, "handle": "bob"}},
		{"request_close", map[string]any{"conversation_id": conv}},
		{"mark_unread", map[string]any{"conversation_id": conv, "seq": 1}},
		{"claim_conversation", map[string]any{"conversation_id": conv, "instance": "desk"}},
		{"ask_owner", map[string]any{"question": "about that?", "conversation_id": conv}},
		{"get_project", map[string]any{"project_id": project.ID}},
		{"get_project", map[string]any{"project_id": home}},
		{"request_project_access", map[string]any{"project_id": project.ID}},
		{"open_thread", map[string]any{"project_id": project.ID, "title": "Plan"}},
		{"open_thread", map[string]any{"project_id": home, "title": "Plan"}},
		{"open_thread", map[string]any{"project_id": bobsHome, "item_id": item}},
		{"add_item", map[string]any{"project_id": project.ID, "title": "mine now"}},
		{"update_item", map[string]any{"project_id": project.ID, "item_id": item, "status": "done"}},
		{"update_item", map[string]any{"project_id": bobsHome, "item_id": item, "status": "done"}},
		{"upload_image", map[string]any{"project_id": project.ID, "data_base64": base64.StdEncoding.EncodeToString(pngOf(t))}},
		{"read_messages", map[string]any{"conversation_id": thread}},
		{"send_message", map[string]any{"conversation_id": thread, "body": "hi"}},
	} {
		got := s.tool(t, "bob/helper", tc.tool, tc.args)
		if e, _ := got["error"].(map[string]any); e == nil || e["code"] != "not_found" {
			t.Errorf("tool %s(%v) = %v, want not_found", tc.tool, tc.args, got)
		}
	}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/conversations/" + conv + "/messages"},
		{"POST", "/conversations/" + conv + "/messages"},
		{"POST", "/conversations/" + conv + "/resume"},
		{"POST", "/approvals/" + msg + "/approve"},
		{"POST", "/approvals/" + msg + "/reject"},
		{"POST", "/questions/" + q + "/answer"},
		{"POST", "/approvals/" + q + "/answer"},
		{"POST", "/agents/planner/archive"},
		{"PUT", "/agents/planner/mode"},
		{"PUT", "/agents/planner/public"},
		{"GET", "/agents/planner/a2a"},
		{"PUT", "/agents/planner/a2a"},
		{"GET", "/agents/planner/tokens"},
		{"POST", "/agents/planner/tokens"},
		{"PUT", "/agents/planner/grants/alice"},
		{"DELETE", "/tokens/" + tokens[0].ID},
		{"POST", "/contacts/alice/approve"},
		{"GET", "/projects/" + project.ID},
		{"GET", "/projects/" + home},
		{"PATCH", "/projects/" + project.ID},
		{"POST", "/projects/" + project.ID + "/archive"},
		{"POST", "/projects/" + project.ID + "/unarchive"},
		{"PUT", "/projects/" + project.ID + "/members/bob"},
		{"DELETE", "/projects/" + project.ID + "/members/alice"},
		{"PUT", "/projects/" + project.ID + "/agents/helper"},
		{"DELETE", "/projects/" + project.ID + "/agents/alice/planner"},
		{"POST", "/projects/" + project.ID + "/threads"},
		{"GET", "/projects/" + project.ID + "/items/" + item},
		{"GET", "/projects/" + bobsHome + "/items/" + item},
		{"GET", "/projects/" + project.ID + "/images/" + img},
		{"GET", "/projects/" + bobsHome + "/images/" + img},
		{"GET", "/conversations/" + thread + "/messages"},
	} {
		body := map[string]any{}
		switch {
		case strings.HasSuffix(tc.path, "/messages") && tc.method == "POST":
			body["body"] = "hi"
		case strings.HasSuffix(tc.path, "/answer"):
			body["answer"] = "yes"
		case strings.HasSuffix(tc.path, "/mode"):
			body["mode"] = "listen"
		case strings.HasSuffix(tc.path, "/public"):
			body["public"] = true
		case strings.HasSuffix(tc.path, "/a2a") && tc.method == "PUT":
			body["exposed"] = true
		case strings.HasSuffix(tc.path, "/threads"):
			body["title"] = "Plan"
		}
		code, got := s.rest(t, "bob", tc.method, tc.path, body)
		if e, _ := got["error"].(map[string]any); code != http.StatusNotFound || e == nil || e["code"] != "not_found" {
			t.Errorf("%s %s = %d %v, want 404 not_found", tc.method, tc.path, code, got)
		}
	}
}

func TestUnauthenticatedAndBadInput(t *testing.T) {
	s := newServer(t)
	req, _ := http.NewRequest("GET", s.url+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+s.agents["alice/planner"]) // an agent token is not a person's
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an agent token on the REST API: %d, want 401", resp.StatusCode)
	}
	if code, got := s.rest(t, "alice", "POST", "/contacts", map[string]any{"handle": "bob", "sender": "x"}); code != 400 || !strings.Contains(got["error"].(map[string]any)["message"].(string), "sender") {
		t.Fatalf("unknown field: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "DELETE", "/nope", nil); code != 404 || got["trace"] == nil {
		t.Fatalf("an unknown route: %d %v, want 404 with the error shape", code, got)
	}
	if code, got := s.rest(t, "alice", "PUT", "/agents/planner/mode", `{"mode":"active"}{"mode":"listen"}`); code != 400 || !strings.Contains(fmt.Sprint(got), "nothing after it") {
		t.Fatalf("two JSON values in a body: %d %v, want 400", code, got)
	}
	if code, got := s.rest(t, "alice", "GET", "/me", nil); code != 200 || got["handle"] != "alice" {
		t.Fatalf("me: %d %v", code, got)
	}
	code, got := s.rest(t, "alice", "POST", "/agents/planner/tokens", map[string]any{"name": "ci", "scopes": "msg:read"})
	token, _ := got["token"].(string)
	if code != 200 || !strings.HasPrefix(token, "plv_") {
		t.Fatalf("minting through the API: %d %v", code, got)
	}
	if _, err := s.hub.Authenticate(ctx, token); err != nil {
		t.Fatalf("the minted token does not work: %v", err)
	}
}

// TestQueryIntegersInRange: an integer query parameter given is checked
// as written against its range — limit starts at 1, so 0 is refused, not
// taken for the default — and a number too long for any integer says its
// range, not a Go error (§4 input hygiene).
func TestQueryIntegersInRange(t *testing.T) {
	s := newServer(t)
	for path, want := range map[string]string{
		"/conversations?limit=0":                    `limit must be an integer between 1 and 100 (got "0")`,
		"/conversations?limit=101":                  `limit must be an integer between 1 and 100 (got "101")`,
		"/conversations?limit=99999999999999999999": `limit must be an integer between 1 and 100 (got "99999999999999999999")`,
		"/agents/planner/inbox?limit=0":             `limit must be an integer between 1 and 50 (got "0")`,
		"/agents/planner/inbox?limit=1e3":           `limit must be an integer between 1 and 50 (got "1e3")`,
		"/events?timeout_s=18446744080":             `timeout_s must be an integer between 0 and 55 (got "18446744080")`,
	} {
		code, got := s.rest(t, "alice", "GET", path, nil)
		if msg, _ := got["error"].(map[string]any)["message"].(string); code != 400 || msg != want {
			t.Errorf("GET %s: %d %q, want 400 %q", path, code, msg, want)
		}
	}
	if code, got := s.rest(t, "alice", "GET", "/conversations?limit=1", nil); code != 200 {
		t.Errorf("GET /conversations?limit=1: %d %v", code, got)
	}
}

// TestBodiesAreReadStrictly: a body's field names match exactly and once,
// a wrong type is said in JSON's words (never a Go type's), and a body over
// 1 MiB is 413 (§4 input hygiene, §15).
func TestBodiesAreReadStrictly(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct {
		body       string
		status     int
		code, want string
	}{
		{`[1]`, 400, "invalid_argument", `the body must be a JSON object`},
		{`"bob"`, 400, "invalid_argument", `the body must be a JSON object`},
		{`{"handle":["bob"]}`, 400, "invalid_argument", `field "handle" must be a string, not an array`},
		{`{"handle":{"x":1}}`, 400, "invalid_argument", `field "handle" must be a string, not an object`},
		{`{"handle":7}`, 400, "invalid_argument", `field "handle" must be a string, not a number`},
		{`{"Handle":"bob"}`, 400, "unknown_argument", `unknown field "Handle": this route takes handle, message`},
		{`{"handle":"bob","note":"hi"}`, 400, "unknown_argument", `unknown field "note": this route takes handle, message`},
		{`{"handle":"bob","handle":"carol"}`, 400, "duplicate_argument", `field "handle" is given more than once; give each field once`},
		{`{"handle":"bob"}}`, 400, "invalid_argument", `the body must be one JSON object and nothing after it`},
		{`{"handle" "bob"}`, 400, "invalid_argument", `the body must be valid JSON (invalid character '"' after object key)`},
		{`{"handle":"bob"`, 400, "invalid_argument", `the body must be valid JSON (it ends too soon)`},
		{`{"handle":"` + strings.Repeat("b", 1<<20) + `"}`, 413, "too_large", `the body is over 1048576 bytes (1 MiB), the most a request may carry; send less`},
	} {
		code, got := s.rest(t, "alice", "POST", "/contacts", tc.body)
		e, _ := got["error"].(map[string]any)
		if code != tc.status || e["code"] != tc.code || e["message"] != tc.want {
			t.Errorf("%.60s: %d %v, want %d %s %q", tc.body, code, e, tc.status, tc.code, tc.want)
		}
	}
	// Nothing was asked of bob.
	if code, got := s.rest(t, "bob", "GET", "/contacts", nil); code != 200 || strings.Contains(fmt.Sprint(got), "alice") {
		t.Errorf("a refused body changed something: %d %v", code, got)
	}
	code, got := s.rest(t, "alice", "PUT", "/agents/planner/mode", `{"mode":"listen"}`)
	if code != 200 {
		t.Errorf("a plain body: %d %v", code, got)
	}
}

// FuzzRESTBodies sends any bytes as the body of a route that takes one and
// requires an answer that is never a panic or a 500, and a refused request
// that leaves everything as it was. The seeds run with go test; go test
// -fuzz FuzzRESTBodies looks further.
func FuzzRESTBodies(f *testing.F) {
	routes := []struct{ method, path string }{
		{"POST", "/contacts"},
		{"PUT", "/agents/planner/mode"},
		{"PUT", "/agents/planner/public"},
		{"PUT", "/agents/planner/grants/bob"},
		{"POST", "/agents"},
		{"POST", "/agents/planner/tokens"},
		{"POST", "/tokens"},
		{"POST", "/conversations/CONV/messages"},
		{"POST", "/projects"},
		{"PATCH", "/projects/PROJ"},
		{"POST", "/projects/PROJ/threads"},
		{"PUT", "/signup"},
		{"POST", "/approvals/x/answer"},
	}
	for i, body := range []string{
		`{"handle":"bob"}`, `{"mode":"listen","Mode":"active"}`, `{"allow_human":true,"allow_human":false}`,
		`{"slug":["x"]}`, `{"name":"ci","expires_in_days":1e400}`, `{"expires_in_days":-1}`,
		`{"body":"hi","format":"markdown"}`, `{"name":"P","description":null}`, `{"agent_cap":{}}`,
		`{"title":"Plan"}`, `"open"`, ``, `{"body":"x"}{}`, "{\"body\":\"\xff\"}", `{"public":null}`,
	} {
		f.Add(uint8(i), []byte(body))
	}
	// Each input makes ten requests with alice's token; the fuzzer sends
	// them faster than a token's rate, which has tests of its own.
	settings := hub.DefaultSettings()
	settings.TokenRate, settings.TokenBurst = 1e9, 1e9
	s := newServerWith(f, settings)
	code, p := s.rest(f, "alice", "POST", "/projects", map[string]any{"name": "Fuzz"})
	proj, _ := p["project_id"].(string)
	if code != 200 || proj == "" {
		f.Fatalf("a project: %d %v", code, p)
	}
	code, th := s.rest(f, "alice", "POST", "/projects/"+proj+"/threads", map[string]any{"title": "Plan"})
	thread, _ := th["conversation_id"].(string)
	if code != 200 || thread == "" {
		f.Fatalf("a thread: %d %v", code, th)
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		rt := routes[int(route)%len(routes)]
		path := strings.NewReplacer("CONV", thread, "PROJ", proj).Replace(rt.path)
		before := s.fingerprint(t)
		code, got := s.rest(t, "alice", rt.method, path, string(body))
		if code >= 500 || code == 0 {
			t.Fatalf("%s %s %q: %d %v", rt.method, path, body, code, got)
		}
		if code >= 400 {
			if after := s.fingerprint(t); after != before {
				t.Fatalf("%s %s %q was refused (%d %v) but changed what the hub holds:\n%s\n---\n%s", rt.method, path, body, code, got, before, after)
			}
		}
	})
}

// fingerprint is what alice's REST calls could change, as she sees it: the
// latest event, her contacts, agents, projects, conversations and
// approvals, and how many API tokens she has.
func (s *server) fingerprint(t testing.TB) string {
	t.Helper()
	cursor, err := s.hub.LatestCursor(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	parts := []any{cursor}
	for _, path := range []string{"/contacts", "/agents", "/agents/planner", "/projects", "/conversations", "/approvals", "/people"} {
		code, got := s.rest(t, "alice", "GET", path, nil)
		parts = append(parts, code, got)
	}
	_, tokens := s.rest(t, "alice", "GET", "/tokens", nil)
	ts, _ := tokens["tokens"].([]any)
	parts = append(parts, len(ts))
	b, _ := json.Marshal(parts)
	return string(b)
}

// TestContactRequestWithMessage: a contact request may carry a message of
// up to 500 code points, shown with the contact on both sides (§3).
func TestContactRequestWithMessage(t *testing.T) {
	s := newServer(t)
	code, got := s.rest(t, "alice", "POST", "/contacts", map[string]any{"handle": "bob", "message": strings.Repeat("m", 501)})
	if e, _ := got["error"].(map[string]any); code != 400 || e["code"] != "too_long" || !strings.Contains(fmt.Sprint(e["message"]), "the limit is 500 characters") {
		t.Fatalf("a message over 500: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "POST", "/contacts", map[string]any{"handle": "@bob", "message": "we ship together"}); code != 200 || got["message"] != "we ship together" || got["handle"] != "bob" {
		t.Fatalf("a request with a message: %d %v", code, got)
	}
	code, got = s.rest(t, "bob", "GET", "/contacts", nil)
	cs, _ := got["contacts"].([]any)
	if code != 200 || len(cs) != 1 || cs[0].(map[string]any)["message"] != "we ship together" || cs[0].(map[string]any)["requested_by"] != "alice" {
		t.Fatalf("bob's contacts: %d %v", code, got)
	}
}

// TestRefusalsPointAtRoutes: what the hub says a person can do to mend a
// refusal, the REST face says by its route, never a command line.
func TestRefusalsPointAtRoutes(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		want         string
	}{
		{"POST", "/contacts/bob/approve", nil, 404, "no contact request from bob waits for alice; bob answers a request with: POST /api/v1/contacts/alice/approve (or /reject)"},
		{"POST", "/approvals/msg_nope/approve", nil, 404, `no message "msg_nope" is held for alice's review; list them with: GET /api/v1/approvals`},
		{"POST", "/contacts", map[string]any{"handle": "nobody"}, 404, `no person has the handle "nobody"; create one with: POST /api/v1/invites (an invitation link, for the admin)`},
	} {
		code, got := s.rest(t, "alice", tc.method, tc.path, tc.body)
		e, _ := got["error"].(map[string]any)
		if code != tc.status || e["message"] != tc.want {
			t.Errorf("%s %s: %d %v, want %d %q", tc.method, tc.path, code, e, tc.status, tc.want)
		}
	}
	req, _ := http.NewRequest("GET", s.url+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+s.agents["alice/planner"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct{ Error map[string]string }
	json.NewDecoder(resp.Body).Decode(&got)
	if want := "this is an agent's token (plv_…); this takes a person's API token (plu_…); mint one with: the dashboard (Settings), or POST /api/v1/tokens with another of your person tokens"; resp.StatusCode != 401 || got.Error["message"] != want {
		t.Errorf("an agent's token: %d %q, want 401 %q", resp.StatusCode, got.Error["message"], want)
	}
}

// TestCursorInvalidCarriesLatest: a refused cursor on the events route is
// cursor_invalid with latest_cursor to start again from (§6), in words for
// a person, not an agent's tools.
func TestCursorInvalidCarriesLatest(t *testing.T) {
	s := newServer(t)
	code, got := s.rest(t, "alice", "GET", "/events?timeout_s=0&cursor=zzz", nil)
	e, _ := got["error"].(map[string]any)
	latest, _ := got["latest_cursor"].(string)
	if code != 400 || e["code"] != "cursor_invalid" || latest == "" || strings.Contains(e["message"].(string), "check_inbox") {
		t.Fatalf("a malformed cursor: %d %v; want 400 cursor_invalid with latest_cursor, in a person's words", code, got)
	}
	if code, got := s.rest(t, "alice", "GET", "/events?timeout_s=0&cursor="+latest, nil); code != 200 {
		t.Errorf("starting again from latest_cursor: %d %v", code, got)
	}
}

// TestBodilessRoutesTakeNoBody: a route without a body takes none, or {};
// anything else is refused and changes nothing (§15).
func TestBodilessRoutesTakeNoBody(t *testing.T) {
	s := newServer(t)
	for body, want := range map[string]string{
		`{"x":1}`: `unknown field "x": this route takes no fields`,
		`garbage`: "the body must be a JSON object",
	} {
		before := s.fingerprint(t)
		code, got := s.rest(t, "alice", "POST", "/agents/planner/archive", body)
		if msg, _ := got["error"].(map[string]any)["message"].(string); code != 400 || !strings.HasPrefix(msg, want) {
			t.Errorf("archive with the body %s: %d %v; want 400 %q", body, code, got, want)
		}
		if after := s.fingerprint(t); after != before {
			t.Errorf("archive with the body %s changed something", body)
		}
	}
	for _, body := range []any{nil, "{}", " "} {
		if code, got := s.rest(t, "alice", "POST", "/agents/planner/unarchive", body); code != 200 {
			t.Errorf("unarchive with the body %v: %d %v", body, code, got)
		}
	}
}
