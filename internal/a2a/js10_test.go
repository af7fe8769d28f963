package a2a_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/servertest"
)

// jsClient10 runs testdata/client10.mjs, the JavaScript SDK's native A2A
// 1.0 client, against the real server, the Palaver agent driven over MCP:
// the card lists both revisions' interfaces and the SDK picks 1.0's;
// SendStreamingMessage sees submitted → working → the reply as an
// artifact → completed, and the stream ends; SendMessage waits for the
// agent's answer unless told to return at once; SubscribeToTask follows a
// task already made; GetTask, ListTasks (the caller's own tasks, newest
// first, in pages) and CancelTask answer as the hub says; and the
// refusals come as the SDK's own errors (§18).
func jsClient10(t *testing.T, modules string) {
	ts := newTestServer(t)
	ts.expose(t)
	js := runScript(t, modules, "client10.mjs", ts, "A2A_TOKEN="+ts.tokens["alice/planner"], "A2A_STRANGER_TOKEN="+ts.tokens["bob/helper"])
	next := js.next
	endpoint := ts.url + "/a2a/alice/reviewer"

	card := next("card")
	want := map[string]any{
		"step": "card", "name": "alice/reviewer", "description": "the alice/reviewer agent",
		"skills":     []any{"review-code=Review code", "triage=Triage"},
		"interfaces": []any{"JSONRPC 1.0 " + endpoint, "JSONRPC 0.3 " + endpoint},
		"streaming":  true, "version": "1.0",
	}
	if diff := cmp.Diff(want, card); diff != "" {
		t.Errorf("card (-want +got):\n%s", diff)
	}

	first := next("event")
	if first["kind"] != "task" || first["state"] != "TASK_STATE_SUBMITTED" {
		t.Fatalf("first event: %v; want the submitted task", first)
	}
	taskID, conv := first["id"].(string), first["contextId"].(string)
	agent := ts.mcpAgent(t, "alice/reviewer")
	tool(t, agent, "acknowledge", map[string]any{"message_id": taskID, "outcome": "processing"})
	if ev := next("event"); ev["kind"] != "status" || ev["state"] != "TASK_STATE_WORKING" {
		t.Fatalf("after processing started: %v; want working", ev)
	}
	tool(t, agent, "send_message", map[string]any{"conversation_id": conv, "body": "Looks good; one nit in store.go."})
	tool(t, agent, "acknowledge", map[string]any{"message_id": taskID})
	if ev := next("event"); ev["kind"] != "artifact" || ev["text"] != "Looks good; one nit in store.go." || ev["mediaType"] != "text/plain" {
		t.Fatalf("after the reply: %v; want the reply as a text/plain artifact", ev)
	}
	if ev := next("event"); ev["kind"] != "status" || ev["state"] != "TASK_STATE_COMPLETED" || ev["text"] != "Looks good; one nit in store.go." {
		t.Fatalf("after the acknowledgement: %v; want completed with the reply", ev)
	}

	// A SendMessage waits, holding one of the caller's waits, until the
	// agent has answered.
	next("blocking")
	servertest.Parked(t, ts.Waker, 1)
	inbox := tool(t, agent, "check_inbox", map[string]any{})
	rows := inbox["messages"].([]any)
	if len(rows) != 1 {
		t.Fatalf("the reviewer's inbox: %v; want the one new task", inbox)
	}
	second := rows[0].(map[string]any)["message_id"].(string)
	tool(t, agent, "acknowledge", map[string]any{"message_id": second, "outcome": "processing"})
	tool(t, agent, "send_message", map[string]any{"conversation_id": conv, "body": "Line 40."})
	tool(t, agent, "acknowledge", map[string]any{"message_id": second})
	if got := next("answered"); got["id"] != second || got["contextId"] != conv || got["state"] != "TASK_STATE_COMPLETED" || got["text"] != "Line 40." {
		t.Fatalf("the blocking SendMessage: %v; want task %s completed with the reply", got, second)
	}

	queued := next("queued")
	third := queued["id"].(string)
	if queued["state"] != "TASK_STATE_SUBMITTED" {
		t.Fatalf("a SendMessage with returnImmediately: %v; want it submitted", queued)
	}
	if ev := next("subscribed"); ev["kind"] != "task" || ev["id"] != third || ev["state"] != "TASK_STATE_SUBMITTED" {
		t.Fatalf("SubscribeToTask's first event: %v; want the task as it stands", ev)
	}
	tool(t, agent, "acknowledge", map[string]any{"message_id": third, "outcome": "processing"})
	if ev := next("subscribed"); ev["kind"] != "status" || ev["state"] != "TASK_STATE_WORKING" {
		t.Fatalf("subscribed, after processing started: %v; want working", ev)
	}
	tool(t, agent, "send_message", map[string]any{"conversation_id": conv, "body": "PR 13 is fine."})
	tool(t, agent, "acknowledge", map[string]any{"message_id": third})
	if ev := next("subscribed"); ev["kind"] != "artifact" || ev["text"] != "PR 13 is fine." {
		t.Fatalf("subscribed, after the reply: %v; want the artifact", ev)
	}
	if ev := next("subscribed"); ev["kind"] != "status" || ev["state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("subscribed, after the acknowledgement: %v; want completed", ev)
	}

	if got := next("got"); got["state"] != "TASK_STATE_COMPLETED" || got["history"] != 1.0 || jsonOf(got["artifacts"]) != `["PR 13 is fine."]` {
		t.Errorf("GetTask with historyLength 1: %v; want completed, one message of history and the reply", got)
	}
	listed := next("listed")
	wantList := map[string]any{
		"step": "listed", "pages": []any{[]any{third, second}, []any{taskID}},
		"states": []any{"TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED"}, "artifacts": []any{0.0, 0.0},
		"total": 3.0, "size": 2.0, "last": "",
	}
	if diff := cmp.Diff(wantList, listed); diff != "" {
		t.Errorf("ListTasks, two to a page (-want +got):\n%s", diff)
	}

	if got := next("canceled"); got["state"] != "TASK_STATE_CANCELED" {
		t.Errorf("CancelTask of a waiting task: %v; want canceled", got)
	}
	// Refusals are the SDK's errors by their codes, each with its
	// google.rpc.ErrorInfo; a refusal of the hub's names its status and
	// brake there, and its trace.
	for _, tc := range []struct{ step, name, says, info string }{
		{"not-cancelable", "TaskNotCancelableError", "is completed and cannot be canceled", `"reason":"TASK_NOT_CANCELABLE","domain":"a2a-protocol.org"`},
		{"final", "UnsupportedOperationError", "is TASK_STATE_COMPLETED, a final state", `"reason":"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org"`},
		{"unknown", "TaskNotFoundError", `no task "msg_nothing" of yours`, `"reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"`},
		{"refused", "JsonRpcTransportError", "contact: bob and alice are not contacts", `"reason":"DENIED","domain":"palaver","metadata":{"brake":"contact",`},
	} {
		got := next(tc.step)
		if got["name"] != tc.name || !strings.Contains(got["error"].(string), tc.says) || !strings.Contains(got["data"].(string), `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo",`+tc.info) {
			t.Errorf("%s: %v; want %s saying %q, with ErrorInfo %s", tc.step, got, tc.name, tc.says, tc.info)
		}
	}
	if missing := next("missing"); !strings.Contains(missing["error"].(string), "404") {
		t.Errorf("an unexposed agent's card: %v; want 404", missing)
	}
	js.end()
}
