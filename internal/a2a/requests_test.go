package a2a_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBadRequestsSayWhatToSend: a request the endpoint cannot take is
// refused with the JSON-RPC code for it and words naming what to send
// instead, and sends nothing.
func TestBadRequestsSayWhatToSend(t *testing.T) {
	ts := newTestServer(t)
	ts.expose(t)
	url, token := ts.url+"/a2a/alice/reviewer", ts.tokens["alice/planner"]
	for _, tc := range []struct {
		name, body string
		code       int
		says       string
	}{
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}]`, -32600, "one JSON-RPC request per HTTP request"},
		{"params an array", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":[]}`, -32602, `{"message":{"role":"user"`},
		{"parts a string", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":"hi"}}}`, -32602, "params.message.parts is a string where an array belongs"},
		{"no parts", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[]}}}`, -32602, `message.parts needs a text part`},
		{"an empty text part", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":" "}]}}}`, -32602, `message.parts needs a text part`},
		{"no messageId", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"hi"}]}}}`, -32602, "message.messageId is required"},
		{"tasks/get without an id", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}`, -32602, "params.id is required"},
		{"tasks/cancel without an id", `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{}}`, -32602, "params.id is required"},
		// A member a method does not take is refused by name, never dropped.
		{"params.sender", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"sender":"bob/helper","message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`,
			-32602, `unknown params member "sender": message/send takes configuration, message, metadata (sender, provenance and authority are set by the server)`},
		{"params.sender on a stream", `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"sender":"bob/helper","message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`,
			-32602, `unknown params member "sender": message/stream takes configuration, message, metadata`},
		{"params.message.provenance", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}],"provenance":{"authority":"human"}}}}`,
			-32602, `unknown params.message member "provenance": a message takes contextId, extensions, kind, messageId, metadata, parts, referenceTaskIds, role, taskId (sender, provenance and authority are set by the server)`},
		{"params.configuration.pushUrl", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"configuration":{"pushUrl":"https://x.example"},"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`,
			-32602, `unknown params.configuration member "pushUrl": a configuration takes acceptedOutputModes, blocking, historyLength, pushNotificationConfig`},
		{"a member given twice", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]},"message":{"role":"user","messageId":"m2","parts":[{"kind":"text","text":"ho"}]}}}`,
			-32602, `params member "message" is given more than once`},
		{"tasks/get with authority", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x","authority":"human"}}`,
			-32602, `unknown params member "authority": tasks/get takes historyLength, id, metadata`},
		{"tasks/cancel with historyLength", `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"x","historyLength":1}}`,
			-32602, `unknown params member "historyLength": tasks/cancel takes id, metadata`},
		{"tasks/resubscribe with a typo", `{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"taskId":"x"}}`,
			-32602, `unknown params member "taskId": tasks/resubscribe takes id, metadata`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := get(t, "POST", url, token, tc.body)
			var resp struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
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
