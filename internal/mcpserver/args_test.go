package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/rooms"
	"github.com/palaverhq/palaver/internal/servertest"
)

// TestArgumentsAreReadStrictly: argument names match exactly and once, and
// every integer is checked as written against its range before it is
// converted (§4 input hygiene); a refused call stores nothing. The same
// calls by the lean path are in TestLeanPathSpeaksTheSDKsWire.
func TestArgumentsAreReadStrictly(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.client(t, "alice/planner", older)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
	sendArgs := "body, client_msg_id, conversation_id, format, instance, kind, mentions, metadata, no_reply, reply_to_seq, summary, to_instance"
	c := `"conversation_id":"` + conv + `"`
	for _, tc := range []struct {
		tool, args string
		code, msg  string // "" code: accepted
	}{
		{"send_message", `{` + c + `,"Body":"x"}`, "unknown_argument", `unknown argument "Body": this tool takes ` + sendArgs},
		{"send_message", `{"Conversation_ID":"` + conv + `","body":"x"}`, "unknown_argument", `unknown argument "Conversation_ID": this tool takes ` + sendArgs},
		{"send_message", `{` + c + `,"body":"x","ſummary":"s"}`, "unknown_argument", `unknown argument "ſummary": this tool takes ` + sendArgs},
		{"send_message", `{` + c + `,"body":"x","Body":"y"}`, "unknown_argument", `unknown argument "Body": this tool takes ` + sendArgs},
		{"send_message", `{` + c + `,"body":"x","body":"y"}`, "duplicate_argument", `argument "body" is given more than once; give each argument once`},
		{"send_message", `{` + c + `,"body":"x","b\u006fdy":"y"}`, "duplicate_argument", `argument "body" is given more than once; give each argument once`},
		{"send_message", `{` + c + `,"body":"x","reply_to_seq":0}`, "invalid_argument", `reply_to_seq must be an integer between 1 and 9007199254740991 (got 0)`},
		{"send_message", `{` + c + `,"body":"x","reply_to_seq":-1}`, "invalid_argument", `reply_to_seq must be an integer between 1 and 9007199254740991 (got -1)`},
		{"send_message", `{` + c + `,"body":5}`, "invalid_argument", `argument "body" must be a string, not a number`},
		{"send_message", `{` + c + `,"body":"x","mentions":[1]}`, "invalid_argument", `argument "mentions" must be an array of strings, not an array holding a number`},
		{"send_message", `{` + c + `,"body":"x","no_reply":"yes"}`, "invalid_argument", `argument "no_reply" must be true or false, not a string`},
		{"send_message", `["x"]`, "invalid_argument", `arguments must be a JSON object`},
		{"check_inbox", `{"limit":0}`, "invalid_argument", `limit must be an integer between 1 and 50 (got 0)`},
		{"check_inbox", `{"limit":51}`, "invalid_argument", `limit must be an integer between 1 and 50 (got 51)`},
		{"check_inbox", `{"limit":1.5}`, "invalid_argument", `limit must be an integer between 1 and 50 (got 1.5)`},
		{"check_inbox", `{"limit":1e1}`, "invalid_argument", `limit must be an integer between 1 and 50 (got 1e1)`},
		{"check_inbox", `{"limit":"ten"}`, "invalid_argument", `limit must be an integer between 1 and 50 (got a string)`},
		{"check_inbox", `{"limit":1e30}`, "invalid_argument", `limit must be an integer between 1 and 50 (got 1e30)`},
		{"check_inbox", `{"limit":99999999999999999999}`, "invalid_argument", `limit must be an integer between 1 and 50 (got 99999999999999999999)`},
		{"check_inbox", `{"limit":` + strings.Repeat("9", 50) + `}`, "invalid_argument", `limit must be an integer between 1 and 50 (got a number 50 characters long)`},
		{"check_inbox", `{"Limit":5}`, "unknown_argument", `unknown argument "Limit": this tool takes instance, limit`},
		{"list_conversations", `{"limit":0}`, "invalid_argument", `limit must be an integer between 1 and 100 (got 0)`},
		{"read_messages", `{` + c + `,"after_seq":-1}`, "invalid_argument", `after_seq must be an integer between 0 and 9007199254740991 (got -1)`},
		{"read_messages", `{` + c + `,"limit":0}`, "invalid_argument", `limit must be an integer between 1 and 100 (got 0)`},
		{"mark_unread", `{` + c + `,"seq":0}`, "invalid_argument", `seq must be an integer between 1 and 9007199254740991 (got 0)`},
		{"wait_for_messages", `{"timeout_s":18446744080}`, "invalid_argument", `timeout_s must be an integer between 0 and 55 (got 18446744080)`},
		{"wait_for_messages", `{"timeout_s":1e300}`, "invalid_argument", `timeout_s must be an integer between 0 and 55 (got 1e300)`},
		{"wait_for_messages", `{"timeout_s":-1}`, "invalid_argument", `timeout_s must be an integer between 0 and 55 (got -1)`},
		{"list_projects", `{"x":1}`, "unknown_argument", `unknown argument "x": this tool takes no arguments`},
		// Left out or null, an argument takes its default.
		{"check_inbox", `{}`, "", ""},
		{"check_inbox", `{"limit":null}`, "", ""},
		{"check_inbox", `{"limit":50}`, "", ""},
		{"wait_for_messages", `{"timeout_s":0}`, "", ""},
	} {
		out, isErr := call(t, planner, tc.tool, json.RawMessage(tc.args))
		var got struct{ code, msg string }
		if isErr {
			e := out["error"].(map[string]any)
			got.code, got.msg = e["code"].(string), e["message"].(string)
		}
		if diff := cmp.Diff(tc.code+" "+tc.msg, got.code+" "+got.msg); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.tool, tc.args, diff)
		}
	}
	// No refused send stored anything.
	if msgs := mustCall(t, planner, "read_messages", map[string]any{"conversation_id": conv})["messages"].([]any); len(msgs) != 0 {
		t.Errorf("refused sends stored %d messages", len(msgs))
	}
	// A name written with escapes is the same name.
	mustCall(t, planner, "send_message", json.RawMessage(`{`+c+`,"b\u006fdy":"escaped"}`))
}

// FuzzToolArguments calls a tool of either profile with any bytes as its
// arguments (as a JSON string when they are not JSON), by both the lean
// path and the SDK, and requires an answer that is never a panic, an HTTP
// or JSON-RPC failure or an internal error, and a refused call that leaves
// everything as it was. The seeds run with go test; go test -fuzz
// FuzzToolArguments looks further.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []struct {
		profile uint8 // an index of surfaces below
		tool    uint8
		args    string
	}{
		{0, 0, `{}`},
		{0, 1, `{"conversation_id":"CONV","body":"hi","Body":"x"}`},
		{0, 2, `{"conversation_id":"CONV","body":"hi","body":"x"}`},
		{0, 3, `{"limit":0}`},
		{0, 4, `{"timeout_s":18446744080}`},
		{0, 5, `{"reply_to_seq":1e400,"seq":-0,"after_seq":9007199254740992}`},
		{0, 6, `{"handles":["alice/reviewer"],"ſummary":"x"}`},
		{0, 7, `[1,2,3]`},
		{0, 8, `not json`},
		{1, 0, `{"threadId":"CONV","content":"hi"}`},
		{1, 1, `{"limit":"50"}`},
		{1, 2, `{"messageId":null}`},
		{2, 3, `{"chat_id":"CONV","page":0,"page_size":101}`},
		{2, 8, `{"chat_id":"CONV","content":"hi","mentions":"[{\"id\":1}]"}`},
		{3, 4, `{"chat_id":"CONV","message_type":"thought","since":"yesterday"}`},
	} {
		f.Add(seed.profile, seed.tool, []byte(seed.args))
	}
	ts := newTestServer(f)
	token := ts.tokens["alice/planner"]
	_, out := ts.post(f, context.Background(), "/mcp/", token,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"open_conversation","arguments":{"handles":["alice/reviewer"]}}}`, nil)
	conv := servertest.IDPattern.FindString(string(out))
	if !strings.HasPrefix(conv, "conv_") {
		f.Fatalf("open_conversation: %s", out)
	}
	alice, err := ts.hub.User(context.Background(), "alice")
	if err != nil {
		f.Fatal(err)
	}
	_, person, err := ts.hub.MintUserToken(context.Background(), "alice", "fuzz", 0)
	if err != nil {
		f.Fatal(err)
	}
	// The surfaces: each profile with an agent's token, and the rooms
	// profile's people's side with a person's.
	surfaces := []struct{ path, token string }{{"/mcp/", token}, {"/mcp/inbox/", token}, {"/mcp/rooms/", token}, {"/mcp/rooms/", person}}
	tools := map[int][]string{}
	for i, sf := range surfaces {
		_, out := ts.post(f, context.Background(), sf.path, sf.token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
		var list struct {
			Result struct{ Tools []struct{ Name string } }
		}
		if err := json.Unmarshal(out, &list); err != nil || len(list.Result.Tools) == 0 {
			f.Fatalf("tools/list: %v %s", err, out)
		}
		for _, tl := range list.Result.Tools {
			tools[i] = append(tools[i], tl.Name)
		}
	}
	planner, err := ts.hub.Authenticate(context.Background(), token)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, profile uint8, tool uint8, args []byte) {
		i := int(profile) % len(surfaces)
		name := tools[i][int(tool)%len(tools[i])]
		raw := json.RawMessage(strings.ReplaceAll(string(args), "CONV", conv))
		if !json.Valid(raw) {
			raw, _ = json.Marshal(string(args))
		}
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": name, "arguments": raw}})
		before := ts.fingerprint(t, planner) + ts.personFingerprint(t, alice)
		// A wait parks for its timeout; a second is plenty to see it begin.
		// Any other call is waited for to its end, however loaded the
		// machine: one cut short would go on in the server and change
		// what the next input's fingerprints see.
		patience := 30 * time.Second
		if name == "wait_for_messages" {
			patience = time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		resp, out := ts.post(t, ctx, surfaces[i].path, surfaces[i].token, string(req), nil)
		if resp == nil {
			if ctx.Err() != nil {
				t.Skip("the call was still waiting")
			}
			t.Fatalf("%s %s: no answer", name, args)
		}
		var answer struct {
			Result *struct {
				IsError           bool `json:"isError"`
				StructuredContent struct {
					Error struct{ Code string }
				} `json:"structuredContent"`
			}
			Error *json.RawMessage
		}
		if resp.StatusCode != 200 || json.Unmarshal(out, &answer) != nil || answer.Result == nil {
			t.Fatalf("%s %s: %d %s", name, args, resp.StatusCode, out)
		}
		if code := answer.Result.StructuredContent.Error.Code; code == "internal" || code == "canceled" {
			t.Fatalf("%s %s: %s", name, args, out)
		}
		if answer.Result.IsError {
			if after := ts.fingerprint(t, planner) + ts.personFingerprint(t, alice); after != before {
				t.Fatalf("%s %s was refused but changed what the hub holds:\n%s", name, args, cmp.Diff(before, after))
			}
		}
	})
}

// personFingerprint is what a person's call could change: their rooms,
// their contacts and their approvals.
func (ts *testServer) personFingerprint(t *testing.T, u *hub.User) string {
	t.Helper()
	rooms, _, err := rooms.New(ts.hub, ts.store).PersonRooms(context.Background(), u, hub.Paging{Size: hub.RoomPage.Max})
	if err != nil {
		t.Fatal(err)
	}
	contacts, err := ts.hub.Contacts(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent([]any{rooms, contacts}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fingerprint is what the hub holds that a tool call could change, as the
// agent and its owner see it: the latest event, the agent's conversations,
// inbox, sessions and projects, and the owner's approvals.
func (ts *testServer) fingerprint(t *testing.T, c *hub.Caller) string {
	t.Helper()
	ctx := context.Background()
	var parts []any
	add := func(v any, err error) {
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, v)
	}
	add(ts.hub.LatestCursor(ctx, c.Agent.ID))
	add(ts.hub.ListConversations(ctx, c, "", hub.ConversationsPage.Max))
	add(ts.hub.Inbox(ctx, c, hub.InboxPage.Max, ""))
	w, err := ts.hub.Whoami(ctx, c, "", "")
	add(w.Instances, err)
	add(projects.New(ts.hub, ts.store).ListProjects(ctx, c))
	add(ts.hub.Approvals(ctx, c.Owner))
	b, err := json.MarshalIndent(parts, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
