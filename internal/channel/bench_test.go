package channel_test

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkSendToPush measures how soon a message another agent sends
// reaches Claude Code as a push: from the send's call to the push read on
// the channel's stdout, over 50 sends one at a time, each after the last
// one's push; it reports the p50 and p99 (DESIGN.md §19; target p50 ≤
// 100 ms). A real palaver serve on SQLite (synchronous FULL), the channel
// a subprocess, the sender an MCP client over HTTP.
func BenchmarkSendToPush(b *testing.B) {
	w := newWorld(b)
	c := plannerChannel(b, w, b.TempDir())
	c.initialize()
	c.logLine("starts at the latest event")
	reviewer := w.agent("alice/reviewer")
	conv := call(b, reviewer, "open_conversation", map[string]any{"handles": []string{"alice/planner"}})["conversation_id"].(string)
	c.push("conversation.opened")
	const sends = 50
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		took = took[:0]
		for j := range sends {
			start := time.Now()
			sent := call(b, reviewer, "send_message", map[string]any{"conversation_id": conv, "body": fmt.Sprintf("message %d.%d", i, j)})
			p := c.push("the message")
			took = append(took, time.Since(start))
			if got := p["meta"].(map[string]any)["message_id"]; got != sent["message_id"] {
				b.Fatalf("pushed %v, want %v", got, sent["message_id"])
			}
		}
	}
	slices.Sort(took)
	p50, p99 := took[len(took)/2], took[len(took)*99/100]
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.Logf("send → push over %d sends: p50 %v, p99 %v, max %v", sends, p50, p99, took[len(took)-1])
}
