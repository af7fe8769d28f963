package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
