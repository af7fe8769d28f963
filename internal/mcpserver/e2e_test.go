package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/servertest"
)

// TestAgentsTalk is the first story end to end (issue: agents of one owner
// find each other, talk, wait and acknowledge), in both protocol eras.
func TestAgentsTalk(t *testing.T) {
	for _, era := range []string{modern, older} {
		t.Run(era, func(t *testing.T) {
			ts := newTestServer(t)
			planner := ts.client(t, "alice/planner", era)
			reviewer := ts.client(t, "alice/reviewer", era)
			if got := planner.InitializeResult().ProtocolVersion; got != era {
				t.Fatalf("negotiated %s, want %s", got, era)
			}

			me := mustCall(t, planner, "whoami", nil)
			siblings, _ := json.Marshal(me["siblings"])
			if me["agent"].(map[string]any)["handle"] != "alice/planner" || !strings.Contains(string(siblings), `"alice/reviewer"`) {
				t.Fatalf("whoami = %v, want alice/planner naming sibling alice/reviewer", me)
			}
			opened := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})
			conv := opened["conversation_id"].(string)
			if opened["status"] != "open" || !strings.HasPrefix(conv, "conv_") {
				t.Fatalf("open_conversation = %v", opened)
			}

			// The reviewer parks a wait before the send.
			cursor := mustCall(t, reviewer, "whoami", nil)["latest_cursor"].(string)
			woke := make(chan map[string]any, 1)
			go func() {
				r, err := reviewer.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_messages",
					Arguments: map[string]any{"cursor": cursor, "timeout_s": 55}})
				if err != nil {
					t.Error(err)
					close(woke)
					return
				}
				woke <- structured(t, r)
			}()
			servertest.Parked(t, ts.waker, 1)
			sent := mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "Please review the plan in docs/plan.md"})
			if sent["status"] != "sent" || sent["seq"] != float64(1) || sent["recipients"] != float64(1) {
				t.Fatalf("send_message = %v", sent)
			}
			var events []any
			select {
			case got := <-woke:
				if got["timed_out"] != false {
					t.Fatalf("wait timed out: %v", got)
				}
				events = got["events"].([]any)
			case <-time.After(10 * time.Second):
				t.Fatal("the parked wait did not wake within 10s of the send")
			}
			ev := events[0].(map[string]any)
			if len(events) != 1 || ev["type"] != "message.new" || ev["message"].(map[string]any)["message_id"] != sent["message_id"] {
				t.Fatalf("events = %v", events)
			}

			inbox := mustCall(t, reviewer, "check_inbox", nil)
			rows := inbox["messages"].([]any)
			if inbox["total"] != float64(1) || len(rows) != 1 || rows[0].(map[string]any)["already_read"] != nil {
				t.Fatalf("check_inbox before reading = %v", inbox)
			}
			read := mustCall(t, reviewer, "read_message", map[string]any{"message_id": sent["message_id"]})
			msg := read["message"].(map[string]any)
			prov := msg["provenance"].(map[string]any)
			if msg["body"] != "Please review the plan in docs/plan.md" || read["untrusted"] != true ||
				prov["attested_by"] != "server" || prov["author"] != "agent" || prov["ai"] != true || prov["authority"] != "agent" ||
				prov["on_behalf_of"].(map[string]any)["handle"] != "alice" {
				t.Fatalf("read_message = %v", read)
			}
			inbox = mustCall(t, reviewer, "check_inbox", nil)
			rows = inbox["messages"].([]any)
			if inbox["total"] != float64(1) || rows[0].(map[string]any)["already_read"] != true {
				t.Fatalf("check_inbox after reading = %v, want still waiting and already_read", inbox)
			}
			ack := mustCall(t, reviewer, "acknowledge", map[string]any{"message_id": sent["message_id"]})
			if ack["status"] != "acknowledged" {
				t.Fatalf("acknowledge = %v", ack)
			}
			if inbox = mustCall(t, reviewer, "check_inbox", nil); inbox["total"] != float64(0) {
				t.Fatalf("check_inbox after acknowledging = %v, want none", inbox)
			}
		})
	}
}

// TestPlainJSONRPC: a tools/call with only a bearer — no version header, no
// initialize — works on /mcp and /mcp/ (§10.1).
func TestPlainJSONRPC(t *testing.T) {
	ts := newTestServer(t)
	for _, path := range []string{"/mcp", "/mcp/"} {
		resp, body := ts.post(t, context.Background(), path, ts.tokens["alice/planner"],
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"handle":"alice/planner"`) || !strings.Contains(string(body), `"id":7`) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
}

func TestUnauthorized(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	good := ts.tokens["alice/planner"]
	other := "A"
	if strings.HasSuffix(good, "A") {
		other = "B"
	}
	revoked := ts.agent(t, "alice/revoked", "", nil)
	toks, _ := ts.hub.Tokens(ctx, "alice", "revoked")
	if _, err := ts.hub.RevokeToken(ctx, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	archived := ts.agent(t, "alice/archived", "", nil)
	if _, err := ts.hub.ArchiveAgent(ctx, "alice/archived"); err != nil {
		t.Fatal(err)
	}
	unknown := "plv_0000000000000000000000000000000000000000000" + "000000"
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	for _, tc := range []struct{ name, token, reason string }{
		{"missing", "", "no bearer token"},
		{"malformed", "plv_short", "malformed"},
		{"bad checksum", good[:len(good)-1] + other, "checksum"},
		{"unknown", unknown, "checksum"}, // all zeros fails the checksum too
		{"revoked", revoked, "revoked"},
		{"archived", archived, "archived"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := ts.post(t, ctx, "/mcp/", tc.token, body, nil)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", resp.StatusCode)
			}
			want := `Bearer resource_metadata="` + ts.url + `/.well-known/oauth-protected-resource/mcp/"`
			if h := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, want) {
				t.Errorf("WWW-Authenticate = %q, want prefix %q", h, want)
			}
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || !strings.Contains(string(b), tc.reason) || strings.Contains(string(b), "jsonrpc") {
				t.Errorf("body %q (%s): want a plain-text reason containing %q", b, resp.Header.Get("Content-Type"), tc.reason)
			}
		})
	}
	for _, path := range []string{"/mcp", "/mcp/"} {
		req, _ := http.NewRequest(http.MethodGet, ts.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+good)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d, want 405", path, resp.StatusCode)
		}
	}
	// Each form of the metadata's path names that form of the resource, so
	// a client that connected to /mcp finds /mcp (RFC 9728 §3.3 compares
	// them as strings); the root's is the OAuth face's (internal/oauth).
	for path, resource := range map[string]string{
		"/.well-known/oauth-protected-resource/mcp":  "/mcp",
		"/.well-known/oauth-protected-resource/mcp/": "/mcp/",
	} {
		resp, err := http.Get(ts.url + path)
		if err != nil {
			t.Fatal(err)
		}
		var prm map[string]any
		json.NewDecoder(resp.Body).Decode(&prm)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || prm["resource"] != ts.url+resource {
			t.Errorf("GET %s: %d %v, want resource %s", path, resp.StatusCode, prm, ts.url+resource)
		}
	}
	// The challenge names the metadata of the path the client asked for.
	for _, path := range []string{"/mcp", "/mcp/"} {
		resp, _ := ts.post(t, ctx, path, "", body, nil)
		want := `Bearer resource_metadata="` + ts.url + `/.well-known/oauth-protected-resource` + path + `", scope="msg:read msg:write contacts:read"`
		if got := resp.Header.Get("WWW-Authenticate"); got != want {
			t.Errorf("POST %s: WWW-Authenticate %q, want %q", path, got, want)
		}
	}
}

// toolErr asserts a tool error with the code, and that its trace id matches
// exactly one structured log line; it returns the message.
func toolErr(t *testing.T, ts *testServer, out map[string]any, isErr bool, code string) string {
	t.Helper()
	e, _ := out["error"].(map[string]any)
	if !isErr || e == nil || e["code"] != code {
		t.Fatalf("result %v: want a tool error with code %q", out, code)
	}
	trace, _ := out["trace"].(string)
	if lines := ts.logLines(`"trace":"` + trace + `"`); !strings.HasPrefix(trace, "tr_") || len(lines) != 1 {
		t.Fatalf("trace %q matches %d log lines, want exactly one", trace, len(lines))
	}
	return e["message"].(string)
}

func TestToolRefusals(t *testing.T) {
	ts := newTestServer(t)
	ts.agent(t, "alice/planner", "reader", []string{"msg:read"})
	planner := ts.client(t, "alice/planner", modern)
	reader := ts.client(t, "reader", modern)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)

	out, isErr := call(t, reader, "send_message", map[string]any{"conversation_id": conv, "body": "hi"})
	if msg := toolErr(t, ts, out, isErr, "missing_scope"); !strings.Contains(msg, "msg:write") {
		t.Errorf("scope refusal %q does not name msg:write", msg)
	}
	out, isErr = call(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "hi", "authority": "human"})
	if msg := toolErr(t, ts, out, isErr, "unknown_argument"); !strings.Contains(msg, `"authority"`) {
		t.Errorf("unknown argument refusal %q does not name it", msg)
	}
	out, isErr = call(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": strings.Repeat("x", 201)})
	if msg := toolErr(t, ts, out, isErr, "summary_required"); !strings.Contains(msg, "what you ask") {
		t.Errorf("summary refusal %q does not explain how to write one", msg)
	}
	out, isErr = call(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "hi", "limit": "x"})
	toolErr(t, ts, out, isErr, "unknown_argument")
	out, isErr = call(t, planner, "check_inbox", map[string]any{"limit": "ten"})
	if msg := toolErr(t, ts, out, isErr, "invalid_argument"); msg != `limit must be an integer between 1 and 50 (got a string)` {
		t.Errorf("type refusal %q", msg)
	}

	// The body limit counts code points: 10,000 CJK characters are fine,
	// 10,001 are refused with the limit, and nothing is stored.
	at := strings.Repeat("語", 10000)
	sent := mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": at, "summary": "CJK at the limit"})
	out, isErr = call(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": at + "語", "summary": "one over"})
	if msg := toolErr(t, ts, out, isErr, "too_long"); !strings.Contains(msg, "10000") {
		t.Errorf("limit refusal %q does not give the limit", msg)
	}
	page := mustCall(t, planner, "read_messages", map[string]any{"conversation_id": conv})
	msgs := page["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["body"] != at || msgs[0].(map[string]any)["seq"] != sent["seq"] {
		t.Fatalf("after the refused send the conversation holds %d messages", len(msgs))
	}

	// A refusal that is part of the contract is a normal result with a trace.
	self, isErr := call(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/planner"}})
	trace, _ := self["trace"].(string)
	if isErr || self["status"] != "denied" || !strings.HasPrefix(self["reason"].(string), "self:") || len(ts.logLines(trace)) != 1 {
		t.Fatalf("opening a conversation with itself = %v", self)
	}
}

func TestClientMsgIDOverMCP(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.client(t, "alice/planner", modern)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
	args := map[string]any{"conversation_id": conv, "body": "ship it", "client_msg_id": "retry-safe-1"}
	var wg sync.WaitGroup
	results := make([]map[string]any, 10)
	for i := range 10 {
		wg.Go(func() { results[i] = mustCall(t, planner, "send_message", args) })
	}
	wg.Wait()
	for i, r := range results {
		if r["message_id"] != results[0]["message_id"] || r["seq"] != float64(1) {
			t.Errorf("send %d = %v, want message %v at seq 1", i, r, results[0]["message_id"])
		}
	}
	args["body"] = "ship it later"
	out, isErr := call(t, planner, "send_message", args)
	toolErr(t, ts, out, isErr, "conflict")
}

// rawWait posts a wait_for_messages in one era and returns the result
// object, or nil when ctx ended first.
func rawWait(t *testing.T, ts *testServer, ctx context.Context, token, era string, args map[string]any) map[string]any {
	params := map[string]any{"name": "wait_for_messages", "arguments": args}
	header := map[string]string{}
	if era == modern {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": modern, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
		header = map[string]string{"MCP-Protocol-Version": modern, "Mcp-Method": "tools/call", "Mcp-Name": "wait_for_messages"}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	resp, body := ts.post(t, ctx, "/mcp/", token, string(b), header)
	if resp == nil {
		return nil
	}
	var rpc struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &rpc); err != nil || rpc.Result.StructuredContent == nil {
		t.Errorf("wait response %d %s", resp.StatusCode, body)
		return nil
	}
	return rpc.Result.StructuredContent
}

func TestWaitCursorsAndSlots(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.client(t, "alice/planner", modern)
	reviewer := ts.client(t, "alice/reviewer", modern)
	before := mustCall(t, reviewer, "whoami", nil)["latest_cursor"].(string)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
	mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "one"})

	got := mustCall(t, reviewer, "wait_for_messages", map[string]any{"cursor": before, "timeout_s": 55})
	events := got["events"].([]any)
	types := []string{}
	for _, e := range events {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	if got["timed_out"] != false || fmt.Sprint(types) != "[conversation.opened message.new]" {
		t.Fatalf("wait from a cursor before the message = %v", got)
	}
	newest := got["cursor"].(string)
	got = mustCall(t, reviewer, "wait_for_messages", map[string]any{"cursor": newest, "timeout_s": 1})
	if got["timed_out"] != true || len(got["events"].([]any)) != 0 || got["cursor"] != newest {
		t.Fatalf("wait from the newest cursor = %v, want timed_out with no events", got)
	}
	// The log's latest event is alice's (her agent's send reached her as
	// agent.sent), past the reviewer's newest.
	latest := mustCall(t, reviewer, "whoami", nil)["latest_cursor"].(string)
	out, isErr := call(t, reviewer, "wait_for_messages", map[string]any{"cursor": "garbage"})
	toolErr(t, ts, out, isErr, "cursor_invalid")
	if out["error"].(map[string]any)["latest_cursor"] != latest || latest == newest {
		t.Errorf("cursor_invalid carries latest_cursor %v, want %s (not the reviewer's newest %s)", out["error"], latest, newest)
	}

	// Five waits park; the sixth is refused only while they are live, and a
	// client that hangs up frees its slot at once — in both eras.
	token := ts.tokens["alice/reviewer"]
	for _, era := range []string{older, modern} {
		t.Run("slots "+era, func(t *testing.T) {
			var cancels []context.CancelFunc
			var wg sync.WaitGroup
			for range 5 {
				ctx, cancel := context.WithCancel(context.Background())
				cancels = append(cancels, cancel)
				wg.Go(func() { rawWait(t, ts, ctx, token, era, map[string]any{"cursor": newest, "timeout_s": 55}) })
			}
			servertest.Parked(t, ts.waker, 5)
			sixth := rawWait(t, ts, context.Background(), token, era, map[string]any{"cursor": newest, "timeout_s": 0})
			if e, _ := sixth["error"].(map[string]any); e == nil || e["code"] != "too_many_waits" || e["retry_after_s"] == nil {
				t.Fatalf("6th wait = %v, want too_many_waits with retry_after_s", sixth)
			}
			cancels[0]() // the client hangs up
			servertest.Parked(t, ts.waker, 4)
			sixth = rawWait(t, ts, context.Background(), token, era, map[string]any{"cursor": newest, "timeout_s": 0})
			if sixth["timed_out"] != true {
				t.Fatalf("wait after a hang-up = %v, want a slot (timed_out)", sixth)
			}
			for _, c := range cancels {
				c()
			}
			wg.Wait()
			servertest.Parked(t, ts.waker, 0)
		})
	}
}

// TestEveryTraceMatchesOneLogLine: each refusal and error a client gets
// carries a trace id that matches exactly one structured log line, which
// names the tool, agent and conversation and never holds the message body.
func TestEveryTraceMatchesOneLogLine(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.client(t, "alice/planner", modern)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
	secret := "the secret plan"
	for range 2 {
		mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": secret})
	}
	var traces []string
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"send_message", map[string]any{"conversation_id": conv, "body": secret}},                   // duplicate brake
		{"send_message", map[string]any{"conversation_id": conv, "body": secret, "bogus": true}},    // unknown argument
		{"send_message", map[string]any{"conversation_id": "conv_nope", "body": secret}},            // not found
		{"open_conversation", map[string]any{"handles": []string{"bob/helper"}}},                    // reach
		{"wait_for_messages", map[string]any{"cursor": "nonsense"}},                                 // cursor_invalid
		{"read_messages", map[string]any{"conversation_id": conv, "limit": 1000}},                   // invalid limit
		{"claim_conversation", map[string]any{"conversation_id": conv, "instance": "x"}},            // bad instance
		{"ask_owner", map[string]any{"question": "ok?", "options": []string{"yes", "yes"}}},         // repeated option
		{"acknowledge", map[string]any{"message_id": "msg_nope"}},                                   // not found
		{"send_message", map[string]any{"conversation_id": conv, "body": strings.Repeat("x", 300)}}, // summary
	} {
		out, _ := call(t, planner, c.tool, c.args)
		trace, _ := out["trace"].(string)
		if trace == "" {
			t.Fatalf("%s(%v) = %v: no trace", c.tool, c.args, out)
		}
		traces = append(traces, trace)
	}
	for _, trace := range traces {
		lines := ts.logLines(trace)
		if len(lines) != 1 {
			t.Fatalf("trace %s matches %d log lines, want 1", trace, len(lines))
		}
		var line map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &line); err != nil || line["tool"] == nil || line["agent"] != "alice/planner" {
			t.Errorf("log line %s: want tool and agent", lines[0])
		}
		if strings.Contains(lines[0], secret) || strings.Contains(lines[0], ts.tokens["alice/planner"]) {
			t.Errorf("log line %s holds a body or a token", lines[0])
		}
	}
	if line := ts.logLines(traces[0])[0]; !strings.Contains(line, `"conversation":"`+conv+`"`) || !strings.Contains(line, `"reason":"duplicate:`) {
		t.Errorf("the brake's log line %s does not name the conversation and the brake", line)
	}
}

// TestPausedShowsInListings: a conversation paused by the brake reads
// "paused" in list_conversations, with the reason and what lifts it.
func TestPausedShowsInListings(t *testing.T) {
	settings := hub.DefaultSettings()
	settings.PauseTurns = 2
	ts := newTestServerWith(t, settings)
	planner := ts.client(t, "alice/planner", modern)
	reviewer := ts.client(t, "alice/reviewer", modern)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
	mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "one"})
	mustCall(t, reviewer, "send_message", map[string]any{"conversation_id": conv, "body": "two"})
	listed := mustCall(t, planner, "list_conversations", nil)["conversations"].([]any)[0].(map[string]any)
	if listed["status"] != "paused" || !strings.Contains(listed["paused_reason"].(string), "pressing Resume lifts the pause") {
		t.Fatalf("a paused conversation is listed as %v", listed)
	}
}
