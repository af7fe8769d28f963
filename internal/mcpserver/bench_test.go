package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// BenchmarkSendOverMCP measures one durable send_message through the whole
// MCP face (plain JSON-RPC over HTTP, bearer authentication), one at a time.
// The budget brake is raised through its setting for the stream of sends.
func BenchmarkSendOverMCP(b *testing.B) {
	settings := hub.DefaultSettings()
	settings.Budget = 1 << 30
	ts := newTestServerWith(b, settings)
	token := ts.tokens["alice/planner"]
	_, out := ts.post(b, context.Background(), "/mcp/", token,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"open_conversation","arguments":{"handles":["alice/reviewer"]}}}`, nil)
	conv := string(out[:0])
	if i := indexOf(string(out), `"conversation_id":"`); i >= 0 {
		rest := string(out[i+len(`"conversation_id":"`):])
		conv = rest[:indexOf(rest, `"`)]
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_message","arguments":{"conversation_id":%q,"body":"benchmark ask %d"}}}`, conv, i)
		resp, out := ts.post(b, context.Background(), "/mcp/", token, body, nil)
		if resp.StatusCode != 200 || indexOf(string(out), `"status":"sent"`) < 0 {
			b.Fatalf("%d %s", resp.StatusCode, out)
		}
	}
}

func indexOf(s, sub string) int { return strings.Index(s, sub) }
