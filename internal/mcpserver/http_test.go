package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpserver"
)

// TestRepeatedNamesRefused: a message that gives a name twice — its
// method, its params' name or arguments — is an invalid request on both
// paths, never run by its last spelling; a name repeated inside the
// arguments is the tool's duplicate_argument, also inside metadata.
func TestRepeatedNamesRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		adjust []func(*mcpserver.Server)
	}{
		{"lean", nil},
		{"sdk", []func(*mcpserver.Server){mcpserver.WithoutLean}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServerWith(t, hub.DefaultSettings(), tc.adjust...)
			ctx := context.Background()
			planner := ts.client(t, "alice/planner", older)
			conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
			args := `{"conversation_id":"` + conv + `","body":"twice"}`
			for body, name := range map[string]string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","name":"send_message","arguments":` + args + `}}`: "name",
				`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"send_message","arguments":` + args + `}}`: "method",
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_message","arguments":{},"arguments":` + args + `}}`:  "arguments",
			} {
				want := `{"jsonrpc":"2.0","error":{"code":-32600,"message":"invalid request: the name \"` + name + `\" is given more than once in one object; give each name once"}}`
				resp, b := ts.post(t, ctx, "/mcp/", ts.tokens["alice/planner"], body, nil)
				if resp.StatusCode != http.StatusBadRequest || string(b) != want {
					t.Errorf("%s:\n%d %s\nwant 400 %s", body, resp.StatusCode, b, want)
				}
			}
			res, isErr := call(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "x", "kind": "task", "metadata": json.RawMessage(`{"a":1,"a":2}`)})
			if e, _ := res["error"].(map[string]any); !isErr || e["code"] != "duplicate_argument" || e["message"] != `argument "metadata" gives the name "a" more than once; give each name once` {
				t.Errorf("metadata with a name twice: %v, want duplicate_argument", res)
			}
			inbox := mustCall(t, ts.client(t, "alice/reviewer", older), "check_inbox", map[string]any{})
			if diff := cmp.Diff([]any{}, inbox["messages"]); diff != "" {
				t.Errorf("a refused body sent a message (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMethodlessRefused: a message with an id and no method — which the
// SDK would take for a response and answer 202 with nothing done — is an
// invalid request answered with its id, alone or in a batch, on every
// profile and in both protocol eras; a response is refused too, as the
// server sends no requests; a notification is still accepted.
func TestMethodlessRefused(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	const why = `invalid request: this message has an id but no method, so it is neither a request nor a response; a request names its method, like {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{…}}`
	const response = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"invalid request: this message is a response (an id with a result or an error), but this server sends no requests, so it answers nothing; send requests, which name a method"}}`
	for _, path := range []string{"/mcp/", "/mcp", "/mcp/inbox/", "/mcp/rooms/"} {
		for _, version := range []string{"", "2025-11-25", "2026-07-28"} {
			header := map[string]string{}
			if version != "" {
				header["MCP-Protocol-Version"] = version
			}
			for body, want := range map[string]string{
				`{"jsonrpc":"2.0","id":1}`:                                                  `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"` + why + `"}}`,
				`{"jsonrpc":"2.0","id":"q-7","params":{"name":"x"}}`:                        `{"jsonrpc":"2.0","id":"q-7","error":{"code":-32600,"message":"` + why + `"}}`,
				`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2}]`: `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"` + why + `"}}`,
				`{"jsonrpc":"2.0","id":1,"result":{}}`:                                      response,
				`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}`:               response,
			} {
				resp, b := ts.post(t, ctx, path, ts.tokens["alice/planner"], body, header)
				if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" || string(b) != want {
					t.Errorf("POST %s (version %q) %s:\n%d %s\nwant 400 %s", path, version, body, resp.StatusCode, b, want)
				}
			}
		}
		if resp, b := ts.post(t, ctx, path, ts.tokens["alice/planner"], `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); resp.StatusCode != http.StatusAccepted {
			t.Errorf("POST %s a notification: %d %s; want 202", path, resp.StatusCode, b)
		}
	}
}

// TestTrailingDataRefused: a body with anything but whitespace after its
// one JSON-RPC message is a parse error with HTTP 400 and changes nothing,
// on the lean path (send_message) and through the SDK (whoami) alike;
// a trailing newline is whitespace.
func TestTrailingDataRefused(t *testing.T) {
	const parseError = `{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error: the body must be one JSON-RPC message, or one batch, and nothing after it"}}`
	for _, tc := range []struct {
		name   string
		adjust []func(*mcpserver.Server)
	}{
		{"lean", nil},
		{"sdk", []func(*mcpserver.Server){mcpserver.WithoutLean}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServerWith(t, hub.DefaultSettings(), tc.adjust...)
			ctx := context.Background()
			planner := ts.client(t, "alice/planner", older)
			conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
			send := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_message","arguments":{"conversation_id":"` + conv + `","body":"glued"}}}`
			whoami := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
			for _, body := range []string{
				send + send,
				send + whoami,
				whoami + send,
				send + " x",
				send + "\n]",
				"[" + send + "]" + send,
				`{"jsonrpc":"2.0","id":1,`,
			} {
				resp, b := ts.post(t, ctx, "/mcp/", ts.tokens["alice/planner"], body, nil)
				if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" || string(b) != parseError {
					t.Errorf("%s:\n%d %s %s\nwant 400 application/json %s", body, resp.StatusCode, resp.Header.Get("Content-Type"), b, parseError)
				}
			}
			deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
			if resp, b := ts.post(t, ctx, "/mcp/", ts.tokens["alice/planner"], deep, nil); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "nests arrays or objects deeper than JSON readers take") {
				t.Errorf("a body nested 20,000 deep: %d %s", resp.StatusCode, b)
			}
			inbox := mustCall(t, ts.client(t, "alice/reviewer", older), "check_inbox", map[string]any{})
			if diff := cmp.Diff([]any{}, inbox["messages"]); diff != "" {
				t.Errorf("a refused body sent a message (-want +got):\n%s", diff)
			}
			for _, body := range []string{send + "\n", send + "\r\n", " \t" + whoami + " \n"} {
				if resp, b := ts.post(t, ctx, "/mcp/", ts.tokens["alice/planner"], body, nil); resp.StatusCode != http.StatusOK {
					t.Errorf("%q: %d %s, want 200", body, resp.StatusCode, b)
				}
			}
		})
	}
}

// TestCORSPreflight: preflight is answered before authentication and
// advertises only the methods served — POST on the endpoint (GET is 405),
// GET and HEAD on the protected resource metadata; a foreign origin gets
// 403 (§10.1).
func TestCORSPreflight(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct {
		path, origin string
		status       int
		methods      string
	}{
		{"/mcp/", "http://localhost:6274", http.StatusNoContent, "POST"},
		{"/mcp", "http://127.0.0.1:6274", http.StatusNoContent, "POST"},
		{"/mcp/inbox/", "http://localhost:6274", http.StatusNoContent, "POST"},
		{"/.well-known/oauth-protected-resource/mcp/", "http://localhost:6274", http.StatusNoContent, "GET, HEAD"},
		{"/mcp/", "https://evil.example", http.StatusForbidden, ""},
	} {
		req, err := http.NewRequest(http.MethodOptions, ts.url+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", c.origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Methods"); resp.StatusCode != c.status || got != c.methods {
			t.Errorf("OPTIONS %s from %s: %d, methods %q; want %d, %q", c.path, c.origin, resp.StatusCode, got, c.status, c.methods)
		}
	}
}

// TestClientMistakesLoggedAsRefusals: a request the client got wrong —
// here initialize in the 2026-07-28 era, which has no handshake — is
// answered with the SDK's error and logged at INFO, as refusals are,
// never at ERROR.
func TestClientMistakesLoggedAsRefusals(t *testing.T) {
	ts := newTestServer(t)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	resp, b := ts.post(t, context.Background(), "/mcp/", ts.tokens["alice/planner"],
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{`+meta+`}}`,
		map[string]string{"MCP-Protocol-Version": modern, "Mcp-Method": "initialize"})
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: \"initialize\""}}`; resp.StatusCode != http.StatusNotFound || string(b) != want {
		t.Errorf("%d %s, want 404 %s", resp.StatusCode, b, want)
	}
	got := ts.logLines(`"msg":"method removed in the new protocol"`)
	if len(got) != 1 || !strings.Contains(got[0], `"level":"INFO"`) || !strings.Contains(got[0], `"method":"initialize"`) {
		t.Errorf("log lines %q, want one at INFO naming the method", got)
	}
	if errs := ts.logLines(`"level":"ERROR"`); len(errs) > 0 {
		t.Errorf("logged at ERROR: %q", errs)
	}
}

// TestHostNotReflected: with no base URL, a request for a Host that is
// not an address or localhost is refused with 403 before authentication,
// so the name is never put into WWW-Authenticate or the resource
// metadata; an address or localhost is used as it is; with a base URL the
// base is used whatever the Host (§15).
func TestHostNotReflected(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	do := func(t *testing.T, method, url, host, token string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	ts := newTestServer(t)
	port := ts.url[strings.LastIndex(ts.url, ":")+1:]
	for _, host := range []string{"evil.example", "evil.example:" + port, "localhost.evil.example"} {
		for _, token := range []string{"", ts.tokens["alice/planner"]} {
			resp, b := do(t, http.MethodPost, ts.url+"/mcp/", host, token)
			want := "this server is not served as \"" + host + "\": use its address, or start it with --base-url set to its public URL\n"
			if resp.StatusCode != http.StatusForbidden || b != want || resp.Header.Get("WWW-Authenticate") != "" {
				t.Errorf("POST /mcp/ for %s (token %t): %d %q, WWW-Authenticate %q; want 403 %q and none",
					host, token != "", resp.StatusCode, b, resp.Header.Get("WWW-Authenticate"), want)
			}
		}
		for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource/mcp/"} {
			if resp, b := do(t, http.MethodGet, ts.url+path, host, ""); resp.StatusCode != http.StatusForbidden || strings.Contains(b, "http://") {
				t.Errorf("GET %s for %s: %d %s, want 403", path, host, resp.StatusCode, b)
			}
		}
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "app.localhost:" + port} {
		resp, _ := do(t, http.MethodPost, ts.url+"/mcp/", host, "")
		want := `Bearer resource_metadata="http://` + host + `/.well-known/oauth-protected-resource/mcp/"`
		if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(got, want) {
			t.Errorf("POST /mcp/ for %s: %d, WWW-Authenticate %q; want 401, prefix %q", host, resp.StatusCode, got, want)
		}
	}

	// With a base URL, its host is served — also through a proxy on this
	// machine that forwards the public Host to the loopback listener — and
	// so are addresses; any other name is refused as without one.
	based := newTestServerWith(t, hub.DefaultSettings(), mcpserver.WithBaseURL("https://palaver.example"))
	resp, b := do(t, http.MethodPost, based.url+"/mcp/", "evil.example", "")
	want := "this server is not served as \"evil.example\": use https://palaver.example (its --base-url) or its address\n"
	if resp.StatusCode != http.StatusForbidden || b != want {
		t.Errorf("with a base URL, POST /mcp/ for evil.example: %d %q; want 403 %q", resp.StatusCode, b, want)
	}
	for _, host := range []string{"palaver.example", "PALAVER.example", "127.0.0.1:" + port} {
		resp, _ := do(t, http.MethodPost, based.url+"/mcp/", host, "")
		wantAuth := `Bearer resource_metadata="https://palaver.example/.well-known/oauth-protected-resource/mcp/"`
		if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(got, wantAuth) {
			t.Errorf("with a base URL, POST /mcp/ for %s: %d, WWW-Authenticate %q; want 401, prefix %q", host, resp.StatusCode, got, wantAuth)
		}
		if resp, b := do(t, http.MethodPost, based.url+"/mcp/", host, based.tokens["alice/planner"]); resp.StatusCode != http.StatusOK || !strings.Contains(b, `"handle\":\"alice/planner\"`) {
			t.Errorf("with a base URL, whoami for %s: %d %s", host, resp.StatusCode, b)
		}
	}
	resp, b = do(t, http.MethodGet, based.url+"/.well-known/oauth-protected-resource/mcp/", "palaver.example", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(b, `"resource":"https://palaver.example/mcp/"`) {
		t.Errorf("with a base URL, the metadata: %d %s", resp.StatusCode, b)
	}
}
