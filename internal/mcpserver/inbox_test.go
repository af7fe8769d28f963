package mcpserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInboxProfile drives two agents through /mcp/inbox/ as that product's
// documentation describes its ten tools, with the official client in both
// protocol eras.
func TestInboxProfile(t *testing.T) {
	for _, era := range []string{modern, older} {
		t.Run(era, func(t *testing.T) {
			ts := newTestServer(t)
			planner := ts.clientAt(t, "/mcp/inbox/", "alice/planner", era)
			reviewer := ts.clientAt(t, "/mcp/inbox/", "alice/reviewer", era)

			tools, err := planner.ListTools(context.Background(), nil)
			if err != nil || len(tools.Tools) != 10 {
				t.Fatalf("tools/list: %d tools, %v; want ten", len(tools.Tools), err)
			}
			agents := mustCallArray(t, planner, "list_agents", nil)
			if len(agents) != 1 || agents[0].(map[string]any)["username"] != "reviewer" || agents[0].(map[string]any)["goal"] != nil {
				t.Fatalf("list_agents: %v, want the reviewer alone (never the caller), by its slug", agents)
			}

			th := mustCall(t, planner, "create_thread", map[string]any{"title": "Review the plan", "goal": "the plan is approved or sent back", "participants": []string{"reviewer"}})
			thread := th["threadId"].(string)
			if th["goal"] != "the plan is approved or sent back" || len(th["participants"].([]any)) != 2 {
				t.Fatalf("create_thread: %v", th)
			}
			long := strings.Repeat("x", 201)
			refused, isErr := call(t, planner, "send_message", map[string]any{"threadId": thread, "content": long})
			if e, _ := refused["error"].(map[string]any); !isErr || e["code"] != "summary_required" || !strings.Contains(e["message"].(string), "summary") {
				t.Fatalf("201 characters without a summary: %v, want summary_required saying what to do", refused)
			}
			sent := mustCall(t, planner, "send_message", map[string]any{"threadId": thread, "content": long, "summary": "Please review the plan"})
			msg := sent["messageId"].(string)
			if sent["recipients"] != 1.0 || sent["threadId"] != thread || sent["createdAt"] == "" {
				t.Fatalf("send_message: %v, want 1 recipient", sent)
			}

			inbox := func() []any {
				t.Helper()
				return mustCall(t, reviewer, "check_inbox", nil)["messages"].([]any)
			}
			rows := inbox()
			if len(rows) != 1 || rows[0].(map[string]any)["messageId"] != msg || rows[0].(map[string]any)["alreadyRead"] != false {
				t.Fatalf("the reviewer's inbox: %v, want the message not yet read", rows)
			}
			history := mustCall(t, reviewer, "read_thread", map[string]any{"threadId": thread})
			lines := history["messages"].([]any)
			if len(lines) != 1 || lines[0].(map[string]any)["body"] != nil || lines[0].(map[string]any)["summary"] != "Please review the plan" {
				t.Fatalf("read_thread: %v, want one line with no body", history)
			}
			if rows := inbox(); rows[0].(map[string]any)["alreadyRead"] != false {
				t.Fatalf("read_thread recorded a read: %v", rows)
			}
			body := mustCall(t, reviewer, "read_message", map[string]any{"messageId": msg})
			if body["body"] != long || body["sender"] != "planner" || body["threadId"] != thread {
				t.Fatalf("read_message: %v", body)
			}
			if rows := inbox(); len(rows) != 1 || rows[0].(map[string]any)["alreadyRead"] != true {
				t.Fatalf("after read_message the inbox is %v, want the message still there, read", rows)
			}
			if got := mustCall(t, reviewer, "acknowledge", map[string]any{"messageId": msg}); got["acknowledged"] != true {
				t.Fatalf("acknowledge: %v", got)
			}
			if rows := inbox(); len(rows) != 0 {
				t.Fatalf("after acknowledging the inbox is %v, want it empty", rows)
			}

			// Closing: only the creator asks; while it is pending, no sends.
			second := mustCall(t, planner, "send_message", map[string]any{"threadId": thread, "content": "One more thing"})["messageId"].(string)
			third := mustCall(t, planner, "send_message", map[string]any{"threadId": thread, "content": "And another"})["messageId"].(string)
			if got, isErr := call(t, reviewer, "request_close", map[string]any{"threadId": thread}); !isErr {
				t.Fatalf("request_close by the non-creator: %v, want refused", got)
			}
			if got := mustCall(t, planner, "request_close", map[string]any{"threadId": thread}); got["closeRequested"] != true {
				t.Fatalf("request_close: %v", got)
			}
			// A refused send is a tool error, never a result without a
			// messageId that reads as sent.
			if got, isErr := call(t, reviewer, "send_message", map[string]any{"threadId": thread, "content": "wait"}); !isErr || got["error"].(map[string]any)["code"] != "denied" ||
				got["error"].(map[string]any)["rule"] != "closing" || !strings.Contains(got["error"].(map[string]any)["message"].(string), "you may read and acknowledge, but not send") || got["messageId"] != nil {
				t.Fatalf("a send while a close is pending: %v, want a tool error saying closing and what is left to do", got)
			}
			if got := mustCall(t, reviewer, "acknowledge", map[string]any{"messageId": second}); got["acknowledged"] != true {
				t.Fatalf("acknowledging while a close is pending: %v", got)
			}
			if _, err := ts.hub.CloseConversation(context.Background(), thread); err != nil {
				t.Fatal(err)
			}
			if got, isErr := call(t, reviewer, "read_thread", map[string]any{"threadId": thread}); !isErr || got["error"].(map[string]any)["code"] != "not_found" {
				t.Fatalf("the closed thread: %v, want not_found", got)
			}
			if rows := inbox(); len(rows) != 0 {
				t.Fatalf("after the close the inbox still holds %v (the unacknowledged %s)", rows, third)
			}
		})
	}
}

// TestProfilesAreExactPaths: each profile answers at its path with and
// without the slash, with no redirect; any other path under /mcp/ is 404.
func TestProfilesAreExactPaths(t *testing.T) {
	ts := newTestServer(t)
	token := ts.tokens["alice/planner"]
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	// Each profile's tools are those of testdata/surface.txtar; here the
	// path with and without its slash serve the same ones.
	for _, path := range []string{"/mcp/", "/mcp/inbox/", "/mcp/rooms/"} {
		_, slashed := ts.post(t, context.Background(), path, token, list, nil)
		resp, body := ts.post(t, context.Background(), strings.TrimSuffix(path, "/"), token, list, nil)
		if n := strings.Count(string(slashed), `"inputSchema"`); resp.StatusCode != http.StatusOK || n == 0 || string(body) != string(slashed) {
			t.Errorf("%s without its slash: %d, %d tools; want 200 and the %d tools of %s", path, resp.StatusCode, strings.Count(string(body), `"inputSchema"`), n, path)
		}
	}
	for _, path := range []string{"/mcp/unknown/", "/mcp/unknown", "/mcp/inbox/extra", "/mcp/rooms/extra"} {
		resp, _ := ts.post(t, context.Background(), path, token, list, nil)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, resp.StatusCode)
		}
	}
	// A person's token gets the rooms profile's user side there, and a 401
	// at every other profile.
	ts.person(t, "alice")
	for path, want := range map[string]int{"/mcp/rooms": http.StatusOK, "/mcp/rooms/": http.StatusOK, "/mcp/": http.StatusUnauthorized, "/mcp/inbox/": http.StatusUnauthorized} {
		resp, body := ts.post(t, context.Background(), path, ts.tokens["alice"], list, nil)
		if resp.StatusCode != want || (want == http.StatusOK && strings.Count(string(body), `"inputSchema"`) != 23) {
			t.Errorf("%s with a person's token: %d %.200s, want %d", path, resp.StatusCode, body, want)
		}
	}
	// A profile's resources and its own 401 challenge name its path.
	resp, _ := ts.post(t, context.Background(), "/mcp/inbox/", "", list, nil)
	if !strings.Contains(resp.Header.Get("WWW-Authenticate"), "/.well-known/oauth-protected-resource/mcp/inbox/") {
		t.Errorf("the inbox profile's challenge: %q", resp.Header.Get("WWW-Authenticate"))
	}
	s := ts.clientAt(t, "/mcp/inbox/", "alice/planner", modern)
	// Its product's URIs, and Palaver's as aliases answering under the
	// URI asked for.
	for _, uri := range []string{"inbots://inbox", "palaver://inbox", "inbots://agents", "palaver://agents"} {
		r, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 || r.Contents[0].URI != uri {
			t.Errorf("%s at /mcp/inbox/: %v %v", uri, r, err)
		}
	}
}

// TestInboxErrorsInItsWords: the inbox profile's refusals name its own
// arguments and tools, not the default profile's.
func TestInboxErrorsInItsWords(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.clientAt(t, "/mcp/inbox/", "alice/planner", modern)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"send_message", map[string]any{"content": "hi"}, "threadId is required: take it from list_threads, check_inbox or create_thread"},
		{"send_message", map[string]any{"threadId": "conv_nope", "content": "hi"}, "no thread \"conv_nope\" is open to you; list yours with list_threads"},
		{"acknowledge", map[string]any{}, "messageId is required"},
	} {
		out, isErr := call(t, planner, tc.tool, tc.args)
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if !isErr || !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%s %v: %q, want it to start %q", tc.tool, tc.args, msg, tc.want)
		}
		for _, word := range []string{"conversation_id", "message_id", "list_conversations", "open_conversation"} {
			if strings.Contains(msg, word) {
				t.Errorf("%s %v says %q, a word of the default profile", tc.tool, tc.args, word)
			}
		}
	}
}
