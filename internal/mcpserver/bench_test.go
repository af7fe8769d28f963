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
	// SQLite's pages written, a thread's every 50 sends among them, and
	// apart those the search indexer's own commits wrote.
	w, _ := ts.store.(interface {
		Writes() (commits, pages int64)
		IndexWrites() (commits, pages int64)
	})
	var pagesBefore, indexBefore int64
	if w != nil {
		_, pagesBefore = w.Writes()
		_, indexBefore = w.IndexWrites()
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer func() {
		if w != nil {
			_, pages := w.Writes()
			_, index := w.IndexWrites()
			b.ReportMetric(float64(pages-pagesBefore)/float64(b.N), "pages/send")
			b.ReportMetric(float64(index-indexBefore)/float64(b.N), "index-pages/send")
		}
	}()
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

// BenchmarkInboxOverMCP measures the listings an agent calls most —
// check_inbox and read_messages (without marking read) — over a page of 20
// messages, through the whole MCP face, and reports the bytes of each
// answer: what the agent pays from its context window.
func BenchmarkInboxOverMCP(b *testing.B) {
	for _, tc := range []struct {
		name, args string
		sdk        bool
	}{
		{"check_inbox/lean", `"name":"check_inbox","arguments":{"limit":20}`, false},
		{"check_inbox/sdk", `"name":"check_inbox","arguments":{"limit":20}`, true},
		{"read_messages", `"name":"read_messages","arguments":{"conversation_id":%q,"limit":20,"mark_read":false}`, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := hub.DefaultSettings()
			s.TokenRate = 1e9 // one token calls as fast as it can
			var adjust []func(*mcpserver.Server)
			if tc.sdk {
				adjust = append(adjust, mcpserver.WithoutLean)
			}
			ts := newTestServerWith(b, s, adjust...)
			planner, err := ts.hub.Authenticate(b.Context(), ts.tokens["alice/planner"])
			if err != nil {
				b.Fatal(err)
			}
			v, err := ts.hub.CreateThread(b.Context(), planner, hub.ThreadSpec{Title: "Schema migration for v2", Participants: []string{"alice/reviewer"}})
			if err != nil {
				b.Fatal(err)
			}
			for i := range 20 {
				if _, err := ts.hub.SendMessage(b.Context(), planner, hub.SendInput{ConversationID: v.Conversation.ID,
					Body:    fmt.Sprintf("Step %d of the migration plan is ready for review: please check docs/plan.md and say whether the order of the steps holds up.", i),
					Summary: fmt.Sprintf("Review step %d of the migration plan", i)}); err != nil {
					b.Fatal(err)
				}
			}
			args := tc.args
			if strings.Contains(args, "%q") {
				args = fmt.Sprintf(args, v.Conversation.ID)
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + args + `}}`
			hc := &http.Client{}
			token := ts.tokens["alice/reviewer"]
			var size int
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, ts.url+"/mcp/", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if bytes.Contains(out, []byte(`"isError":true`)) || resp.StatusCode != http.StatusOK {
					b.Fatalf("%s: %d %s", tc.name, resp.StatusCode, out)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "B/answer")
		})
	}
}
