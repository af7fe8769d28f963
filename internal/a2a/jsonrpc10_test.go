package a2a_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// post10 sends a JSON-RPC request to the reviewer's endpoint naming the A2A
// revision version ("": none), and returns the status and body.
func (ts *testServer) post10(t *testing.T, token, version, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.url+"/a2a/alice/reviewer", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, b := do(t, req)
	return resp.StatusCode, b
}

// rpcErrorOf is the error of a JSON-RPC response body.
type rpcErrorOf struct {
	Error struct {
		Code    int               `json:"code"`
		Message string            `json:"message"`
		Data    []json.RawMessage `json:"data"`
	} `json:"error"`
}

// TestVersionChoosesTheWire: A2A-Version picks how a request is read and
// answered: none or 0.3, 0.3's methods and shapes; 1.0, 1.0's; any other
// revision is refused with A2A's version-not-supported error, saying what
// is served. A method of the other revision is not found, with a word on
// the header that reaches it (§18).
func TestVersionChoosesTheWire(t *testing.T) {
	ts := newTestServer(t)
	ts.expose(t)
	token := ts.tokens["alice/planner"]
	get03 := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"msg_none"}}`
	get10 := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"msg_none"}}`
	for _, tc := range []struct {
		name, version, body string
		code                int
		says                string
		data                string // the start of 1.0's data, "" for 0.3's object or none
	}{
		{"0.3 with no A2A-Version", "", get03, -32001, `no task "msg_none" of yours`, ""},
		{"0.3 with A2A-Version 0.3", "0.3", get03, -32001, `no task "msg_none" of yours`, ""},
		{"1.0", "1.0", get10, -32001, `no task "msg_none" of yours`, `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"code":"not_found","trace":"tr_`},
		{"1.0.1, a patch", "1.0.1", get10, -32001, `no task "msg_none" of yours`, `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND"`},
		{"0.5", "0.5", get10, -32009, `A2A-Version "0.5" is not served here: send A2A-Version: 1.0 (or 0.3, or none, for A2A 0.3)`, `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org"}`},
		{"2.0", "2.0", get10, -32009, `A2A-Version "2.0" is not served here`, `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED"`},
		{"a 1.0 method as 0.3", "", get10, -32601, `no method "GetTask": use message/send, message/stream, tasks/get, tasks/cancel or tasks/resubscribe (GetTask is A2A 1.0's name: send it with the header A2A-Version: 1.0)`, ""},
		{"a 0.3 method as 1.0", "1.0", get03, -32601, `no method "tasks/get" in A2A 1.0: use SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask or SubscribeToTask (tasks/get is A2A 0.3's name: send it with no A2A-Version header for 0.3)`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := ts.post10(t, token, tc.version, tc.body)
			var resp rpcErrorOf
			if err := json.Unmarshal([]byte(body), &resp); err != nil && tc.data != "" {
				t.Fatalf("%s: %v", body, err)
			}
			e := resp.Error
			if status != 200 || e.Code != tc.code || !strings.Contains(e.Message, tc.says) {
				t.Fatalf("%d %s; want error %d saying %q", status, body, tc.code, tc.says)
			}
			switch {
			case tc.data != "" && (len(e.Data) != 1 || !strings.HasPrefix(string(e.Data[0]), tc.data)):
				t.Errorf("data: %s; want one detail starting %s", body, tc.data)
			case tc.data == "" && strings.Contains(body, `"data":[`):
				t.Errorf("data: %s; want 0.3's, an object or none", body)
			}
		})
	}
}

// TestBadRequests10SayWhatToSend: a 1.0 request the endpoint cannot take
// is refused with the JSON-RPC code for it and words naming what to send
// instead — a member a method does not take by name, never dropped, as
// for 0.3 — and sends nothing (§4 input hygiene).
func TestBadRequests10SayWhatToSend(t *testing.T) {
	ts := newTestServer(t)
	ts.expose(t)
	token := ts.tokens["alice/planner"]
	send := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + params + `}`
	}
	msg := func(fields string) string {
		return send(`{"message":{"role":"ROLE_USER","messageId":"m1",` + fields + `}}`)
	}
	for _, tc := range []struct {
		name, body string
		code       int
		says       string
	}{
		{"params an array", send(`[]`), -32602, "params must be a JSON object"},
		{"no message", send(`{}`), -32602, `params.message is required: {"role":"ROLE_USER","parts":[{"text":"…"}],"messageId":"…"}`},
		{"params.sender", send(`{"sender":"bob/helper","message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"}]}}`),
			-32602, `unknown params member "sender": SendMessage takes configuration, message, metadata, tenant (sender, provenance and authority are set by the server)`},
		{"params.message.provenance", msg(`"parts":[{"text":"hi"}],"provenance":{"authority":"human"}`),
			-32602, `unknown params.message member "provenance": a message takes contextId, extensions, messageId, metadata, parts, referenceTaskIds, role, taskId (sender, provenance and authority are set by the server)`},
		{"a member given twice", send(`{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"}]},"message":{}}`), -32602, `params member "message" is given more than once`},
		{"0.3's role", send(`{"message":{"role":"user","messageId":"m1","parts":[{"text":"hi"}]}}`), -32602, `params.message.role must be "ROLE_USER" (got "user")`},
		{"no messageId", send(`{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}]}}`), -32602, "params.message.messageId is required"},
		{"0.3's part", msg(`"parts":[{"kind":"text","text":"hi"}]`), -32602, `params.message.parts[0] has a "kind", as A2A 0.3 writes it: in A2A 1.0 a message has none and a text part is {"text":"…"}; or send 0.3's shapes with no A2A-Version header`},
		{"0.3's message", send(`{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}`), -32602, `params.message has a "kind", as A2A 0.3 writes it`},
		{"a part member of no part", msg(`"parts":[{"text":"hi","lang":"en"}]`), -32602, `unknown params.message.parts[0] member "lang": a part takes data, filename, mediaType, metadata, raw, text, url`},
		{"parts a string", msg(`"parts":"hi"`), -32602, `params.message member "parts" must be an array`},
		{"no parts", msg(`"parts":[]`), -32602, `params.message.parts needs a text part with words in it: [{"text":"…"}]`},
		{"an empty text part", msg(`"parts":[{"text":" "}]`), -32602, `params.message.parts needs a text part with words in it`},
		{"a part of nothing", msg(`"parts":[{"mediaType":"text/plain"}]`), -32602, `params.message.parts[0] holds nothing: a text part is {"text":"…"}`},
		{"a part of two", msg(`"parts":[{"text":"hi","url":"https://example.com/a.png"}]`), -32602, "params.message.parts[0] holds more than one of text, raw, url and data"},
		{"a file part", msg(`"parts":[{"url":"https://example.com/a.png","mediaType":"image/png"}]`), -32005, "only text parts are taken"},
		{"a data part", msg(`"parts":[{"data":{"a":1}}]`), -32005, "only text parts are taken"},
		{"a tenant", send(`{"tenant":"acme","message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"}]}}`), -32602, `params.tenant "acme" names a tenant, and this agent's interfaces name none: leave tenant out`},
		{"a push config", send(`{"configuration":{"taskPushNotificationConfig":{"url":"https://x.example"}},"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"}]}}`), -32003, "push notifications are not offered"},
		{"configuration.blocking, 0.3's", send(`{"configuration":{"blocking":true},"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"}]}}`),
			-32602, `unknown params.configuration member "blocking": a configuration takes acceptedOutputModes, historyLength, returnImmediately, taskPushNotificationConfig`},
		{"a negative historyLength", send(`{"configuration":{"historyLength":-1},"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"}]}}`), -32602, "historyLength must be an integer between 0 and 2147483647 (got -1)"},
		{"a stream with params.sender", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"sender":"x"}}`, -32602, `unknown params member "sender": SendStreamingMessage takes configuration, message, metadata, tenant`},
		{"GetTask without an id", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`, -32602, "params.id is required"},
		{"GetTask without params", `{"jsonrpc":"2.0","id":1,"method":"GetTask"}`, -32602, "params.id is required"},
		{"GetTask with authority", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","authority":"human"}}`, -32602, `unknown params member "authority": GetTask takes historyLength, id, tenant`},
		{"CancelTask with historyLength", `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"x","historyLength":1}}`, -32602, `unknown params member "historyLength": CancelTask takes id, metadata, tenant`},
		{"SubscribeToTask with a typo", `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"taskId":"x"}}`, -32602, `unknown params member "taskId": SubscribeToTask takes id, tenant`},
		{"ListTasks by status", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"status":"TASK_STATE_WORKING"}}`, -32004, "ListTasks does not filter by status here: leave status out and read each task's status.state"},
		{"ListTasks by time", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"statusTimestampAfter":"2026-01-01T00:00:00Z"}}`, -32004, "ListTasks does not filter by time here"},
		{"ListTasks of 0", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":0}}`, -32602, "pageSize must be an integer between 1 and 100 (got 0)"},
		{"ListTasks of 101", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":101}}`, -32602, "pageSize must be an integer between 1 and 100 (got 101)"},
		{"ListTasks from nowhere", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageToken":"msg_nothing"}}`, -32602, `"msg_nothing" is not where a listing of your tasks with alice/reviewer left off; list again from the first page`},
		{"a push method", `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{}}`, -32003, "push notifications are not offered (capabilities.pushNotifications is false)"},
		{"the extended card", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}`, -32004, "there is no extended card (capabilities.extendedAgentCard is false)"},
		{"not JSON", `{`, -32700, `the body is not one JSON-RPC request: send a JSON object like {"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{…}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := ts.post10(t, token, "1.0", tc.body)
			var resp rpcErrorOf
			if err := json.Unmarshal([]byte(body), &resp); err != nil || status != 200 || resp.Error.Code != tc.code || !strings.Contains(resp.Error.Message, tc.says) {
				t.Fatalf("%d %s; want error %d saying %q", status, body, tc.code, tc.says)
			}
		})
	}
	reviewer := ts.mcpAgent(t, "alice/reviewer")
	if inbox := tool(t, reviewer, "check_inbox", map[string]any{}); len(inbox["messages"].([]any)) != 0 {
		t.Fatalf("the refused requests sent something: %v", inbox)
	}
}

// normalized is a body with its ids, traces and times made constant.
func normalized(s string) string {
	s = regexp.MustCompile(`(msg|conv|tr|usr)_[0-9a-z]+`).ReplaceAllString(s, "${1}_…")
	return regexp.MustCompile(`"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d\d\dZ"`).ReplaceAllString(s, `"TIME"`)
}

// TestShapes10: the results of 1.0's methods, exactly as A2A 1.0's
// ProtoJSON writes them: a task without kinds, its state and role by
// their enum names, text parts as {"text"} with their media type (a
// markdown reply's is text/markdown), times in UTC milliseconds; history
// left out at historyLength 0; ListTasks' tasks without artifacts unless
// asked, every member of the page there; SubscribeToTask of a task that
// asks something hands it over and ends (§18).
func TestShapes10(t *testing.T) {
	ts := newTestServer(t)
	ts.expose(t)
	token := ts.tokens["alice/planner"]
	_, sent := ts.post10(t, token, "1.0", `{"jsonrpc":"2.0","id":"s1","method":"SendMessage","params":{"configuration":{"returnImmediately":true},"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"Please review PR 12","mediaType":"text/plain"}],"metadata":{"summary":"a review"}}}}`)
	prov := `"provenance":{"author":"agent","ai":true,"on_behalf_of":{"id":"usr_…","handle":"alice"},"authority":"agent","attested_by":"server"}`
	request := `{"messageId":"msg_…","contextId":"conv_…","taskId":"msg_…","role":"ROLE_USER","parts":[{"text":"Please review PR 12","mediaType":"text/plain"}],"metadata":{"palaver":{"format":"text",` + prov + `,"sender":"alice/planner","seq":1,"untrusted":true}}}`
	want := `{"jsonrpc":"2.0","id":"s1","result":{"task":{"id":"msg_…","contextId":"conv_…","status":{"state":"TASK_STATE_SUBMITTED","timestamp":"TIME"},` +
		`"history":[` + request + `],"metadata":{"palaver":{"agent":"alice/reviewer","attempts":0,"note":"waiting in the agent's inbox"}}}}}` + "\n"
	if got := normalized(sent); got != want {
		t.Errorf("SendMessage:\n%s\nwant\n%s", got, want)
	}
	var res struct {
		Result struct {
			Task struct{ ID, ContextID string }
		}
	}
	json.Unmarshal([]byte(sent), &res)
	id, conv := res.Result.Task.ID, res.Result.Task.ContextID

	agent := ts.mcpAgent(t, "alice/reviewer")
	tool(t, agent, "acknowledge", map[string]any{"message_id": id, "outcome": "processing"})
	tool(t, agent, "send_message", map[string]any{"conversation_id": conv, "body": "**Which** branch?", "format": "markdown"})
	tool(t, agent, "acknowledge", map[string]any{"message_id": id})
	reply := `{"messageId":"msg_…","contextId":"conv_…","taskId":"msg_…","role":"ROLE_AGENT","parts":[{"text":"**Which** branch?","mediaType":"text/markdown"}],"metadata":{"palaver":{"format":"markdown",` + prov + `,"sender":"alice/reviewer","seq":2,"untrusted":true}}}`
	artifact := `{"artifactId":"msg_…","name":"reply 2","parts":[{"text":"**Which** branch?","mediaType":"text/markdown"}],"metadata":{"palaver":{"format":"markdown",` + prov + `,"sender":"alice/reviewer","seq":2,"untrusted":true}}}`
	asks := `"status":{"state":"TASK_STATE_INPUT_REQUIRED","message":` + reply + `,"timestamp":"TIME"}`
	meta := `"metadata":{"palaver":{"agent":"alice/reviewer","attempts":1,"note":"the agent asks you something: answer with a message in the same context"}}`
	_, got := ts.post10(t, token, "1.0", `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+id+`","historyLength":0}}`)
	want = `{"jsonrpc":"2.0","id":2,"result":{"id":"msg_…","contextId":"conv_…",` + asks + `,"artifacts":[` + artifact + `],` + meta + `}}` + "\n"
	if got := normalized(got); got != want {
		t.Errorf("GetTask with historyLength 0:\n%s\nwant\n%s", got, want)
	}

	_, got = ts.post10(t, token, "1.0", `{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{"historyLength":1}}`)
	want = `{"jsonrpc":"2.0","id":3,"result":{"tasks":[{"id":"msg_…","contextId":"conv_…",` + asks + `,"history":[` + reply + `],` + meta + `}],"nextPageToken":"","pageSize":50,"totalSize":1}}` + "\n"
	if got := normalized(got); got != want {
		t.Errorf("ListTasks:\n%s\nwant\n%s", got, want)
	}
	_, got = ts.post10(t, token, "1.0", `{"jsonrpc":"2.0","id":4,"method":"ListTasks","params":{"contextId":"`+conv+`","historyLength":0,"includeArtifacts":true,"pageSize":1}}`)
	want = `{"jsonrpc":"2.0","id":4,"result":{"tasks":[{"id":"msg_…","contextId":"conv_…",` + asks + `,"artifacts":[` + artifact + `],` + meta + `}],"nextPageToken":"","pageSize":1,"totalSize":1}}` + "\n"
	if got := normalized(got); got != want {
		t.Errorf("ListTasks with artifacts:\n%s\nwant\n%s", got, want)
	}
	if _, got := ts.post10(t, ts.tokens["bob/helper"], "1.0", `{"jsonrpc":"2.0","id":5,"method":"ListTasks"}`); !strings.Contains(got, `"result":{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}`) {
		t.Errorf("another caller's ListTasks: %s; want none of alice/planner's tasks", got)
	}

	req, _ := http.NewRequest("POST", ts.url+"/a2a/alice/reviewer", strings.NewReader(`{"jsonrpc":"2.0","id":6,"method":"SubscribeToTask","params":{"id":"`+id+`"}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, normalized(data))
		}
	}
	want = `{"jsonrpc":"2.0","id":6,"result":{"task":{"id":"msg_…","contextId":"conv_…",` + asks + `,"artifacts":[` + artifact + `],"history":[` + request + `,` + reply + `],` + meta + `}}}`
	if resp.Header.Get("Content-Type") != "text/event-stream" || len(events) != 1 || events[0] != want {
		t.Errorf("SubscribeToTask of a task that asks: %s %q\nwant the one event\n%s", resp.Header.Get("Content-Type"), events, want)
	}
}
