package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/servertest"
)

var update = flag.Bool("update", false, "rewrite the golden testdata/*.txtar transcripts")

// normalizer replaces what differs between runs (ids, times, traces,
// cursors) with stable placeholders: the nth distinct id of a kind becomes
// <kind_n>.
type normalizer struct{ servertest.Placeholders }

var (
	traceRE  = regexp.MustCompile(`tr_[0-9a-f]{16}`)
	cursorRE = regexp.MustCompile(`"(cursor|latest_cursor)": ?"[A-Za-z0-9_-]+"`)
	buildRE  = regexp.MustCompile(`"server_build": "[^"]*"`)
)

func (n *normalizer) normalize(s string) string {
	s = n.Replace(s)
	s = traceRE.ReplaceAllString(s, "<trace>")
	s = cursorRE.ReplaceAllString(s, `"$1": "<cursor>"`)
	return buildRE.ReplaceAllString(s, `"server_build": "<build>"`)
}

func pretty(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// checkGolden compares files with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name, comment string, files []txtar.File) {
	t.Helper()
	path := filepath.Join("testdata", name)
	got := txtar.Format(&txtar.Archive{Comment: []byte(comment), Files: files})
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/mcpserver -run Golden -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); if the change is meant, rewrite it with -update:\n%s", path, diff)
	}
}

// rpcAt posts one JSON-RPC request to the profile at path in the older
// era and returns its result.
func rpcAt(t *testing.T, ts *testServer, path, token, method string, params any) any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	_, body := ts.post(t, context.Background(), path, token, string(b), nil)
	var out struct {
		Result any `json:"result"`
		Error  any `json:"error"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Error != nil {
		t.Fatalf("%s: %s", method, body)
	}
	return out.Result
}

// TestGoldenSurface freezes what a client of each profile sees before
// calling anything: server/discover (modern era), tools/list, the
// resources, templates and prompts.
func TestGoldenSurface(t *testing.T) {
	ts := newTestServer(t)
	ts.person(t, "alice")
	for _, p := range []struct{ path, golden, as string }{
		{"/mcp/", "surface.txtar", "alice/planner"}, {"/mcp/inbox/", "inbox_surface.txtar", "alice/planner"},
		{"/mcp/rooms/", "rooms_surface.txtar", "alice/planner"}, {"/mcp/rooms/", "rooms_people_surface.txtar", "alice"},
	} {
		token := ts.tokens[p.as]
		meta := map[string]any{"io.modelcontextprotocol/protocolVersion": modern, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
		_, body := ts.post(t, context.Background(), p.path, token,
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":`+string(must(json.Marshal(meta)))+`}}`,
			map[string]string{"MCP-Protocol-Version": modern, "Mcp-Method": "server/discover"})
		var discover map[string]any
		if err := json.Unmarshal(body, &discover); err != nil {
			t.Fatalf("server/discover: %s", body)
		}
		files := []txtar.File{{Name: "server/discover", Data: []byte(pretty(t, discover))}}
		for _, method := range []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"} {
			files = append(files, txtar.File{Name: method, Data: []byte(pretty(t, rpcAt(t, ts, p.path, token, method, map[string]any{})))})
		}
		checkGolden(t, p.golden, "What a client of "+p.path+" sees with "+p.as+"'s token: server/discover (2026-07-28), tools/list, resources, templates and prompts.\n", files)
		tools := rpcAt(t, ts, p.path, token, "tools/list", map[string]any{}).(map[string]any)["tools"].([]any)
		size := len(must(json.Marshal(tools)))
		t.Logf("%s as %s: %d tools, tools/list is %d bytes", p.path, p.as, len(tools), size)
		if size > 32<<10 { // every byte of it is in each agent's context window
			t.Errorf("%s: tools/list is %d bytes, over 32 KiB", p.path, size)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestGoldenCalls freezes representative calls and their results.
func TestGoldenCalls(t *testing.T) {
	ts := newTestServer(t)
	n := &normalizer{}
	var files []txtar.File
	var conv, msgID, cursor string
	step := func(as, tool string, args map[string]any) map[string]any {
		t.Helper()
		return stepAt(t, ts, n, &files, "/mcp/", as, tool, args)
	}
	cursor = step("alice/reviewer", "whoami", nil)["latest_cursor"].(string)
	conv = step("alice/planner", "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
	msgID = step("alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "Please review docs/plan.md", "client_msg_id": "plan-1"})["message_id"].(string)
	step("alice/reviewer", "check_inbox", nil)
	step("alice/reviewer", "read_message", map[string]any{"message_id": msgID})
	step("alice/reviewer", "wait_for_messages", map[string]any{"cursor": cursor, "timeout_s": 0})
	step("alice/reviewer", "acknowledge", map[string]any{"message_id": msgID})
	step("alice/reviewer", "read_messages", map[string]any{"conversation_id": conv})
	step("alice/reviewer", "list_conversations", nil)
	step("alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "hi", "provenance": "forged"})
	step("alice/planner", "open_conversation", map[string]any{"handles": []string{"bob/helper"}})
	step("bob/helper", "read_message", map[string]any{"message_id": msgID})
	// In review mode a send is held: no seq, and it reaches nobody (§7).
	if _, err := ts.hub.SetAgentMode(context.Background(), "alice/planner", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	step("alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "Ready to ship?", "client_msg_id": "plan-2"})
	// Named sessions (§5): each message of a wait says for_you and
	// from_you itself; a row nobody holds is unclaimed, a held one names
	// its session in held_by.
	if _, err := ts.hub.SetAgentMode(context.Background(), "alice/planner", hub.ModeActive); err != nil {
		t.Fatal(err)
	}
	cursor = step("alice/reviewer", "whoami", map[string]any{"instance": "desk"})["latest_cursor"].(string)
	step("alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "Who takes the release notes?", "client_msg_id": "plan-3"})
	step("alice/reviewer", "wait_for_messages", map[string]any{"cursor": cursor, "timeout_s": 0, "instance": "desk"})
	step("alice/reviewer", "check_inbox", map[string]any{"instance": "desk"})
	step("alice/reviewer", "claim_conversation", map[string]any{"conversation_id": conv, "instance": "desk"})
	step("alice/reviewer", "check_inbox", map[string]any{"instance": "desk"})
	step("alice/reviewer", "wait_for_messages", map[string]any{"cursor": cursor, "timeout_s": 0, "instance": "laptop"})
	step("alice/reviewer", "claim_conversation", map[string]any{"conversation_id": conv, "instance": "laptop"})
	checkGolden(t, "calls.txtar", "Representative tool calls (older era, plain JSON-RPC) and their results.\nIds, times, traces and cursors are replaced by placeholders.\n", files)
}

// stepAt calls a tool of the profile at path as the token named as, and
// appends the call and its normalized result to files; it returns the
// structured result.
func stepAt(t *testing.T, ts *testServer, n *normalizer, files *[]txtar.File, path, as, tool string, args map[string]any) map[string]any {
	t.Helper()
	argsJSON, _ := json.Marshal(args)
	if bytes.Equal(argsJSON, []byte("null")) {
		argsJSON = []byte("{}")
	}
	res := rpcAt(t, ts, path, ts.tokens[as], "tools/call", map[string]any{"name": tool, "arguments": json.RawMessage(argsJSON)}).(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	// The text copy is the same JSON (§10.2); the transcript keeps one.
	var text any
	content, _ := res["content"].([]any)
	if len(content) != 1 || json.Unmarshal([]byte(content[0].(map[string]any)["text"].(string)), &text) != nil {
		t.Fatalf("%s: text content is not JSON: %v", tool, res)
	}
	if arr, ok := text.([]any); ok && res["structuredContent"] == nil {
		// A bare array (the inbox profile's list_agents) is text alone.
		res["content"] = arr
		*files = append(*files, txtar.File{Name: fmt.Sprintf("%02d %s as %s %s", len(*files)+1, tool, as, n.normalize(string(argsJSON))), Data: []byte(n.normalize(pretty(t, res)))})
		return nil
	}
	if !cmp.Equal(text, any(sc)) {
		t.Fatalf("%s: text content is not the structured content's JSON: %v", tool, res)
	}
	if e, _ := sc["error"].(map[string]any); e["code"] == "internal" {
		t.Fatalf("%s as %s: an internal error is never a golden answer: %v", tool, as, sc)
	}
	delete(res, "content")
	name := fmt.Sprintf("%02d %s as %s %s", len(*files)+1, tool, as, n.normalize(string(argsJSON)))
	*files = append(*files, txtar.File{Name: name, Data: []byte(n.normalize(pretty(t, res)))})
	return sc
}

// TestGoldenInboxCalls freezes the inbox profile's calls as its seed shows
// them: list_agents a bare array ([] with no other agent), a refused send
// a tool error, every thread row with a goal, a direct thread named by the
// other party, and a thread's resource at its URI and at Palaver's.
func TestGoldenInboxCalls(t *testing.T) {
	ts := newTestServer(t)
	n := &normalizer{}
	var files []txtar.File
	step := func(as, tool string, args map[string]any) map[string]any {
		t.Helper()
		return stepAt(t, ts, n, &files, "/mcp/inbox/", as, tool, args)
	}
	step("alice/planner", "list_agents", nil)
	step("bob/helper", "list_agents", nil)
	thread := step("alice/planner", "create_thread", map[string]any{"title": "Review the plan", "participants": []string{"reviewer"}})["threadId"]
	// A direct conversation, opened on the default profile.
	stepAt(t, ts, n, &files, "/mcp/", "alice/reviewer", "open_conversation", map[string]any{"handles": []string{"alice/planner"}})
	step("alice/planner", "list_threads", nil)
	step("alice/planner", "send_message", map[string]any{"threadId": thread, "content": "Please review docs/plan.md"})
	step("alice/planner", "request_close", map[string]any{"threadId": thread})
	step("alice/reviewer", "send_message", map[string]any{"threadId": thread, "content": "Looks good"})
	step("alice/planner", "send_message", map[string]any{"threadId": thread, "content": strings.Repeat("x", hub.SummaryNeeded+1)})
	for _, uri := range []string{"inbots://threads/" + thread.(string), "palaver://threads/" + thread.(string)} {
		res := rpcAt(t, ts, "/mcp/inbox/", ts.tokens["alice/reviewer"], "resources/read", map[string]any{"uri": uri})
		files = append(files, txtar.File{Name: fmt.Sprintf("%02d resources/read as alice/reviewer %s", len(files)+1, n.normalize(uri)), Data: []byte(n.normalize(pretty(t, res)))})
	}
	checkGolden(t, "inbox_calls.txtar", "The inbox profile's calls (older era, plain JSON-RPC) and their results.\nIds, times, traces and cursors are replaced by placeholders.\n", files)
}

// TestGoldenRoomsCalls freezes the rooms profile's calls with an agent's
// token and with a person's: a room, a mention, the processing loop, an
// event post, the context, and the user side's view of the same room.
func TestGoldenRoomsCalls(t *testing.T) {
	ts := newTestServer(t)
	ts.person(t, "alice")
	n := &normalizer{}
	var files []txtar.File
	step := func(as, tool string, args map[string]any) map[string]any {
		t.Helper()
		return stepAt(t, ts, n, &files, "/mcp/rooms/", as, tool, args)
	}
	chat := step("alice/planner", "create_agent_chat", map[string]any{"title": "Release"})["chat"].(map[string]any)["id"]
	step("alice/planner", "add_agent_chat_participant", map[string]any{"chat_id": chat, "participant_id": "alice/reviewer"})
	step("alice/planner", "create_agent_chat_message", map[string]any{"chat_id": chat, "content": "hello"})
	msg := step("alice/planner", "create_agent_chat_message", map[string]any{"chat_id": chat, "content": "Please review the notes", "recipients": "reviewer"})["message"].(map[string]any)["id"]
	step("alice/planner", "create_agent_chat_event", map[string]any{"chat_id": chat, "content": "Calling get_weather", "message_type": "tool_call",
		"metadata": `{"function": {"name": "get_weather", "arguments": {"city": "NYC"}}, "id": "call_1", "type": "function"}`})
	step("alice/reviewer", "get_agent_next_message", map[string]any{"chat_id": chat})
	step("alice/reviewer", "mark_agent_message_processed", map[string]any{"chat_id": chat, "message_id": msg})
	step("alice/reviewer", "mark_agent_message_processing", map[string]any{"chat_id": chat, "message_id": msg})
	step("alice/reviewer", "mark_agent_message_failed", map[string]any{"chat_id": chat, "message_id": msg, "error": "the notes are not there yet"})
	step("alice/reviewer", "list_agent_messages", map[string]any{"chat_id": chat})
	step("alice/planner", "get_agent_chat_context", map[string]any{"chat_id": chat})
	step("alice/planner", "list_agent_peers", map[string]any{"not_in_chat": chat})
	step("alice/planner", "respond_to_agent_contact_request", map[string]any{"action": "approve", "handle": "bob"})
	step("alice", "list_my_chat_participants", map[string]any{"chat_id": chat})
	step("alice", "list_my_chat_messages", map[string]any{"chat_id": chat, "message_type": "text"})
	step("alice", "get_my_profile", nil)
	// Finishing with no attempt running says what to call first (the
	// seed's 422); so does one whose message is processed already.
	step("alice/reviewer", "mark_agent_message_failed", map[string]any{"chat_id": chat, "message_id": msg, "error": "again"})
	step("alice/reviewer", "mark_agent_message_processing", map[string]any{"chat_id": chat, "message_id": msg})
	step("alice/reviewer", "mark_agent_message_processed", map[string]any{"chat_id": chat, "message_id": msg})
	step("alice/reviewer", "mark_agent_message_processed", map[string]any{"chat_id": chat, "message_id": msg})
	// A sibling is the owner's own: no contact to end.
	step("alice/planner", "remove_agent_contact", map[string]any{"handle": "alice/reviewer"})
	checkGolden(t, "rooms_calls.txtar", "The rooms profile's calls (older era, plain JSON-RPC) with agents' tokens and a person's.\nIds, times, traces and cursors are replaced by placeholders.\n", files)
}
