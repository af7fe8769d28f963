package mcpserver_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpserver"
)

// BenchmarkSendOverMCP measures durable send_message calls through the
// whole MCP face (plain JSON-RPC over HTTP, bearer authentication), with
// the brakes at their defaults: every 50 sends of a sender go to a new
// conversation. "one" sends one at a time; "32" from 32 senders at once,
// each its own agent on its own connection. Each runs by the lean path and
// through the SDK.
func BenchmarkSendOverMCP(b *testing.B) {
	for _, senders := range []int{1, 32} {
		b.Run(fmt.Sprintf("senders=%d/lean", senders), func(b *testing.B) { benchmarkSend(b, newTestServer(b), senders) })
		b.Run(fmt.Sprintf("senders=%d/sdk", senders), func(b *testing.B) {
			benchmarkSend(b, newTestServerWith(b, hub.DefaultSettings(), mcpserver.WithoutLean), senders)
		})
	}
}

func benchmarkSend(b *testing.B, ts *testServer, senders int) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders}}
	post := func(token, body string) string {
		req, _ := http.NewRequest(http.MethodPost, ts.url+"/mcp/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			b.Error(err)
			return ""
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return string(out)
	}
	tokens := make([]string, senders)
	for i := range tokens {
		tokens[i] = ts.agent(b, fmt.Sprintf("alice/sender%d", i), "", nil)
	}
	var done atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for _, token := range tokens {
		wg.Go(func() {
			var conv string
			for i := 0; done.Add(1) <= int64(b.N); i++ {
				if i%50 == 0 {
					out := post(token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_thread","arguments":{"title":"load","participants":["alice/reviewer"]}}}`)
					_, rest, ok := strings.Cut(out, `"conversation_id":"`)
					if !ok {
						b.Errorf("create_thread: %s", out)
						return
					}
					conv, _, _ = strings.Cut(rest, `"`)
				}
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_message","arguments":{"conversation_id":%q,"body":"benchmark ask %d"}}}`, conv, i)
				if out := post(token, body); !bytes.Contains([]byte(out), []byte(`"status":"sent"`)) {
					b.Errorf("send_message: %s", out)
					return
				}
			}
		})
	}
	wg.Wait()
}
