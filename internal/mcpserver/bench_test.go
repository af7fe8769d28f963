package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpserver"
)

// BenchmarkSendOverMCP measures one durable send_message through the whole
// MCP face (plain JSON-RPC over HTTP, bearer authentication), one at a time,
// with the brakes at their defaults: every 50 sends go to a new conversation;
// once by the lean path and once through the SDK.
func BenchmarkSendOverMCP(b *testing.B) {
	b.Run("lean", func(b *testing.B) { benchmarkSend(b, newTestServer(b)) })
	b.Run("sdk", func(b *testing.B) {
		benchmarkSend(b, newTestServerWith(b, hub.DefaultSettings(), mcpserver.WithoutLean))
	})
}

func benchmarkSend(b *testing.B, ts *testServer) {
	token := ts.tokens["alice/planner"]
	newConv := func() string {
		_, out := ts.post(b, context.Background(), "/mcp/", token,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_thread","arguments":{"title":"load","participants":["alice/reviewer"]}}}`, nil)
		i := indexOf(string(out), `"conversation_id":"`)
		if i < 0 {
			b.Fatalf("create_thread: %s", out)
		}
		rest := string(out[i+len(`"conversation_id":"`):])
		return rest[:indexOf(rest, `"`)]
	}
	var conv string
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%50 == 0 {
			b.StopTimer()
			conv = newConv()
			b.StartTimer()
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_message","arguments":{"conversation_id":%q,"body":"benchmark ask %d"}}}`, conv, i)
		resp, out := ts.post(b, context.Background(), "/mcp/", token, body, nil)
		if resp.StatusCode != 200 || indexOf(string(out), `"status":"sent"`) < 0 {
			b.Fatalf("%d %s", resp.StatusCode, out)
		}
	}
}

func indexOf(s, sub string) int { return strings.Index(s, sub) }
