package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
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
		"message": "this token made more than 0.001 requests a second (2 at once); wait 1000 seconds and try again, and make fewer calls at once"}
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
