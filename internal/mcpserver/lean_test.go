package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpserver"
	"github.com/palaverhq/palaver/internal/servertest"
)

// leanRequest is one raw request of TestLeanPathSpeaksTheSDKsWire.
type leanRequest struct {
	as, body string
	header   map[string]string
	lean     bool   // the lean path should serve it
	path     string // the profile; "" is /mcp/
}

var escapedCursorRE = regexp.MustCompile(`(\\?"(?:cursor|latest_cursor)\\?": ?\\?")[A-Za-z0-9_-]+`)

// TestLeanPathSpeaksTheSDKsWire sends the same requests, in every protocol
// era, to a server with the lean path and to one without it, and requires
// byte-identical answers (ids, times, traces and cursors aside): results,
// tool errors, refusals, escaping, and everything the lean path leaves to
// the SDK (§17).
func TestLeanPathSpeaksTheSDKsWire(t *testing.T) {
	eras := []struct {
		name   string
		header map[string]string
		meta   string
	}{
		{"no version header", nil, ""},
		{"2025-06-18", map[string]string{"MCP-Protocol-Version": "2025-06-18"}, ""},
		{"2026-07-28", map[string]string{"MCP-Protocol-Version": modern, "Mcp-Method": "tools/call"},
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`},
	}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			servers := []*testServer{newTestServer(t), newTestServerWith(t, hub.DefaultSettings(), mcpserver.WithoutLean)}
			conv := make([]string, len(servers))
			for i, ts := range servers {
				out := mustCall(t, ts.client(t, "alice/planner", older), "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})
				conv[i] = out["conversation_id"].(string)
			}
			toolCall := func(id, tool, args string) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, id, tool, args, era.meta)
			}
			headers := func(tool string) map[string]string {
				h := map[string]string{}
				for k, v := range era.header {
					h[k] = v
				}
				if era.meta != "" {
					h["Mcp-Name"] = tool
				}
				return h
			}
			send := func(id, args string) leanRequest {
				return leanRequest{as: "alice/planner", body: toolCall(id, "send_message", args), header: headers("send_message"), lean: true}
			}
			reqs := []leanRequest{
				send("1", `{"conversation_id":"CONV","body":"first words"}`),
				send(`"a-1"`, `{"conversation_id":"CONV","body":"escapes <&> \u2028 \"quoted\" é","no_reply":true}`),
				send("3", `{"conversation_id":"CONV","body":"reply","reply_to_seq":2}`),
				send("4", `{"conversation_id":"CONV","body":"x","sender":"bob/helper"}`),
				send("5", `{"conversation_id":"conv_nope","body":"x"}`),
				send("6", `{"conversation_id":"CONV","body":"x","reply_to_seq":"two"}`),
				// Names match exactly and once; integers are checked as written.
				send("61", `{"conversation_id":"CONV","Body":"x"}`),
				send("62", `{"conversation_id":"CONV","body":"x","body":"y"}`),
				send("63", `{"conversation_id":"CONV","body":"x","reply_to_seq":0}`),
				{as: "alice/reviewer", body: toolCall("64", "check_inbox", `{"limit":0}`), header: headers("check_inbox"), lean: true},
				{as: "alice/reviewer", body: toolCall("65", "wait_for_messages", `{"timeout_s":18446744080}`), header: headers("wait_for_messages"), lean: true},
				{as: "alice/reviewer", body: toolCall("7", "check_inbox", `{}`), header: headers("check_inbox"), lean: true},
				{as: "alice/reviewer", body: toolCall("8", "wait_for_messages", `{"timeout_s":0}`), header: headers("wait_for_messages"), lean: true},
				{as: "alice/reviewer", body: toolCall("9", "wait_for_messages", `{"timeout_s":0,"cursor":"bogus"}`), header: headers("wait_for_messages"), lean: true},
				// Left to the SDK: another tool, odd ids, a batch, extra params;
				// in the modern era also a wrong Mcp-Name and a missing _meta.
				{as: "alice/reviewer", body: toolCall("10", "whoami", `{}`), header: headers("whoami")},
				{as: "alice/planner", body: toolCall("1.5", "send_message", `{"conversation_id":"CONV","body":"odd id"}`), header: headers("send_message")},
				{as: "alice/planner", body: toolCall("null", "send_message", `{"conversation_id":"CONV","body":"no id"}`), header: headers("send_message")},
				{as: "alice/planner", body: "[" + toolCall("11", "send_message", `{"conversation_id":"CONV","body":"batched"}`) + "]", header: headers("send_message")},
				{as: "alice/planner", body: strings.Replace(toolCall("12", "send_message", `{"conversation_id":"CONV","body":"more"}`), `"params":{`, `"params":{"requestState":"x",`, 1), header: headers("send_message")},
				{as: "alice/planner", body: toolCall("13", "send_message", `{"conversation_id":"CONV","body":"wrong name"}`), header: headers("check_inbox"), lean: era.meta == ""},
				{as: "alice/planner", body: `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"send_message","arguments":{"conversation_id":"CONV","body":"no meta"}}}`, header: headers("send_message"), lean: era.meta == ""},
				// The inbox profile's own send_message and check_inbox take
				// the lean path too; a tool it does not have goes to the SDK.
				{path: "/mcp/inbox/", as: "alice/planner", body: toolCall("15", "send_message", `{"threadId":"CONV","content":"inbox words"}`), header: headers("send_message"), lean: true},
				{path: "/mcp/inbox/", as: "alice/planner", body: toolCall("16", "send_message", `{"threadId":"CONV","body":"the default's name"}`), header: headers("send_message"), lean: true},
				{path: "/mcp/inbox/", as: "alice/reviewer", body: toolCall("17", "check_inbox", `{"limit":2}`), header: headers("check_inbox"), lean: true},
				{path: "/mcp/inbox/", as: "alice/reviewer", body: toolCall("18", "wait_for_messages", `{"timeout_s":0}`), header: headers("wait_for_messages")},
			}
			for i, r := range reqs {
				var answers [2]string
				for k, ts := range servers {
					before := ts.srv.LeanCalls()
					path := r.path
					if path == "" {
						path = "/mcp/"
					}
					resp, body := ts.post(t, context.Background(), path, ts.tokens[r.as], strings.ReplaceAll(r.body, "CONV", conv[k]), r.header)
					if resp == nil {
						t.Fatalf("request %d: no response", i)
					}
					n := &normalizer{}
					answers[k] = fmt.Sprintf("%d %s %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"),
						escapedCursorRE.ReplaceAllString(n.normalize(string(body)), "$1<cursor>"))
					if served := ts.srv.LeanCalls() > before; k == 0 && served != r.lean {
						t.Errorf("request %d: lean path served it: %v, want %v", i, served, r.lean)
					}
				}
				if answers[0] != answers[1] {
					t.Errorf("request %d %s:\nlean: %s\nSDK:  %s", i, r.body, answers[0], answers[1])
				}
			}
		})
	}
}

// TestSDKClientTakesTheLeanPath: the Go SDK's client, in both eras, is
// served by the lean path for the hot tools and by the SDK for the rest.
func TestSDKClientTakesTheLeanPath(t *testing.T) {
	ts := newTestServer(t)
	for _, era := range []string{older, modern} {
		planner := ts.client(t, "alice/planner", era)
		conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"]
		before := ts.srv.LeanCalls()
		mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "hello in " + era})
		mustCall(t, ts.client(t, "alice/reviewer", era), "check_inbox", map[string]any{})
		mustCall(t, planner, "whoami", map[string]any{})
		if got := ts.srv.LeanCalls() - before; got != 2 {
			t.Errorf("%s: the lean path served %d calls, want 2 (send_message, check_inbox)", era, got)
		}
	}
}

// FuzzLeanPath sends the same request to a server with the lean path and
// to one without it and requires the same answer, ids, times, traces and
// cursors aside. The seeds run with go test; go test -fuzz FuzzLeanPath
// looks further.
func FuzzLeanPath(f *testing.F) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, seed := range []struct{ version, name, body string }{
		{"", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_message","arguments":{"conversation_id":"CONV","body":"hi"}}}`},
		{"2025-06-18", "", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"check_inbox","arguments":{"limit":3}}}`},
		{modern, "send_message", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send_message","arguments":{"conversation_id":"CONV","body":"\u00e9\ud800"},` + meta + `}}`},
		{modern, "wait_for_messages", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wait_for_messages","arguments":{"timeout_s":0},` + meta + `}}`},
		{"", "", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"send_\u006dessage","arguments":{"conversation_id":"CONV","body":"escaped name"}}}`},
		{"", "", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"check_inbox","arguments":{"limit":"3"}},"extra":1}`},
		{"", "", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"send_message","name":"check_inbox","arguments":{}}}`},
		{"", "", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_message","arguments":{"conversation_id":"CONV","body":"x","body":"y"}}}`},
		{"", "", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"send_message\",\"arguments\":{\"conversation_id\":\"CONV\",\"body\":\"bad \xff utf8\"}}}"},
		{"", "", ` {"jsonrpc":"2.0", "id":9 ,"method":"tools/call","params":{"name":"check_inbox","arguments":null}} `},
		{"2025-11-25", "", `{"jsonrpc":"2.0","id":-10,"method":"tools/call","params":{"name":"check_inbox"}}`},
	} {
		f.Add(seed.version, seed.name, seed.body)
	}
	// The fuzzer calls faster than any agent: the token's request rate,
	// which refills by the wall clock, would refuse one server's call and
	// not the other's.
	settings := hub.DefaultSettings()
	settings.TokenRate, settings.TokenBurst = 1e9, 1e9
	servers := []*testServer{newTestServerWith(f, settings), newTestServerWith(f, settings, mcpserver.WithoutLean)}
	var conv []string
	for _, ts := range servers {
		_, out := ts.post(f, context.Background(), "/mcp/", ts.tokens["alice/planner"],
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"open_conversation","arguments":{"handles":["alice/reviewer"]}}}`, nil)
		id := servertest.IDPattern.FindString(string(out))
		if !strings.HasPrefix(id, "conv_") {
			f.Fatalf("open_conversation: %s", out)
		}
		conv = append(conv, id)
	}
	f.Fuzz(func(t *testing.T, version, name, body string) {
		if parks(body) {
			t.Skip("a wait that would park waits out its timeout on both servers, which the fuzzer takes for a hang")
		}
		var answers [2]string
		for k, ts := range servers {
			h := map[string]string{}
			if version != "" {
				h["MCP-Protocol-Version"] = version
				h["Mcp-Method"] = "tools/call"
			}
			if name != "" {
				h["Mcp-Name"] = name
			}
			req := body
			if json.Valid([]byte(body)) { // a malformed body is echoed cut short, ids and all
				req = strings.ReplaceAll(body, "CONV", conv[k])
			}
			resp, out := ts.post(t, context.Background(), "/mcp/", ts.tokens["alice/planner"], req, h)
			if resp == nil {
				t.Skip("the request could not be sent (an invalid header)")
			}
			n := &normalizer{}
			answers[k] = fmt.Sprintf("%d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"),
				escapedCursorRE.ReplaceAllString(n.normalize(string(out)), "$1<cursor>"))
		}
		if answers[0] != answers[1] {
			t.Errorf("%q %q %s:\nlean: %s\nSDK:  %s", version, name, body, answers[0], answers[1])
		}
	})
}

// parks reports whether a call is a wait_for_messages that would park (its
// timeout_s not 0). The fuzzer fuzzes waits that answer at once; parking is
// tested on its own (parked_test.go). Keys are matched exactly, as the
// server matches them (a struct would take "Arguments" for "arguments").
func parks(body string) bool {
	var call map[string]any
	if json.Unmarshal([]byte(body), &call) != nil {
		return false
	}
	params, _ := call["params"].(map[string]any)
	name, _ := params["name"].(string)
	if !strings.Contains(strings.ToLower(name), "wait") {
		return false
	}
	args, _ := params["arguments"].(map[string]any)
	timeout, ok := args["timeout_s"]
	return !ok || timeout != float64(0)
}
