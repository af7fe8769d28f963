package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestTokenRateLimited: a token past its request rate (§15) gets a
// rate_limited tool error with retry_after_s, from the SDK's path (whoami)
// and the lean one (check_inbox) alike, and a resource read the same error
// as JSON-RPC data; another token is unaffected.
func TestTokenRateLimited(t *testing.T) {
	s := hub.DefaultSettings()
	s.TokenRate, s.TokenBurst = 0.001, 2 // one request every 1,000 s, two at once
	ts := newTestServerWith(t, s)
	token := ts.tokens["alice/planner"]
	rpcCall := func(token, method string, params any) (int, map[string]any) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		resp, body := ts.post(t, context.Background(), "/mcp/", token, string(b), nil)
		var out map[string]any
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("%s: %s", method, body)
		}
		return resp.StatusCode, out
	}
	for _, tool := range []string{"whoami", "check_inbox"} {
		if code, out := rpcCall(token, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}); code != http.StatusOK || out["result"].(map[string]any)["isError"] == true {
			t.Fatalf("%s within the burst: %d %v", tool, code, out)
		}
	}
	want := map[string]any{"code": "rate_limited", "retry_after_s": float64(1000),
		"message": "this token is over its request rate of 0.001 a second (2 at once); try again in 1000 s, and make fewer calls at once"}
	for _, tool := range []string{"whoami", "check_inbox"} {
		code, out := rpcCall(token, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
		res := out["result"].(map[string]any)
		sc := res["structuredContent"].(map[string]any)
		if diff := cmp.Diff(want, sc["error"]); code != http.StatusOK || res["isError"] != true || diff != "" {
			t.Errorf("%s over the rate: %d isError=%v (-want +got):\n%s", tool, code, res["isError"], diff)
		}
	}
	_, out := rpcCall(token, "resources/read", map[string]any{"uri": "palaver://me"})
	data, _ := out["error"].(map[string]any)["data"].(map[string]any)
	if diff := cmp.Diff(want, data["error"]); diff != "" {
		t.Errorf("resources/read over the rate (-want +got):\n%s", diff)
	}
	if _, out := rpcCall(ts.tokens["alice/reviewer"], "tools/call", map[string]any{"name": "whoami", "arguments": map[string]any{}}); out["result"].(map[string]any)["isError"] == true {
		t.Errorf("another token was limited: %v", out)
	}
}

// TestBatchSpendsEachCall: every call of a JSON-RPC batch counts against
// the token's rate, so a batch is no way around it: a batch of three with
// two requests left is 429 with Retry-After, runs none of its calls and
// spends only the one request its authentication did.
func TestBatchSpendsEachCall(t *testing.T) {
	s := hub.DefaultSettings()
	s.TokenRate, s.TokenBurst = 0.001, 3
	ts := newTestServerWith(t, s)
	token := ts.tokens["alice/planner"]
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"check_inbox","arguments":{}}}`
	batch := func(n int) string {
		var parts []string
		for i := range n {
			parts = append(parts, fmt.Sprintf(call, i+1))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	// 2025-03-26 is the revision that takes batches.
	headers := map[string]string{"MCP-Protocol-Version": "2025-03-26"}
	if resp, body := ts.post(t, context.Background(), "/mcp/", token, fmt.Sprintf(call, 1), headers); resp.StatusCode != http.StatusOK {
		t.Fatalf("one call: %d %s", resp.StatusCode, body)
	}
	resp, body := ts.post(t, context.Background(), "/mcp/", token, batch(3), headers)
	want := `{"jsonrpc":"2.0","error":{"code":-32000,"message":"rate_limited: a batch of 3 calls: this token is over its request rate of 0.001 a second (3 at once); try again in 1000 s, and make fewer calls at once"}}`
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1000" || strings.TrimSpace(string(body)) != want {
		t.Errorf("a batch of 3 with 2 requests left: %d Retry-After %q %s; want 429, 1000, %s", resp.StatusCode, resp.Header.Get("Retry-After"), body, want)
	}
	// The refused batch spent one request, as any refused request does.
	if resp, body := ts.post(t, context.Background(), "/mcp/", token, fmt.Sprintf(call, 1), headers); resp.StatusCode != http.StatusOK || strings.Contains(string(body), "rate_limited") {
		t.Errorf("one call with one request left: %d %s", resp.StatusCode, body)
	}
}
