package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// historyGrowth is W5: n messages of history (written straight into the
// database, as the admin commands do), then check_inbox and read_messages
// timed one at a time.
func historyGrowth(ctx context.Context, s *server, o Options, n int, d time.Duration) ([]WorkloadStats, error) {
	owner := fmt.Sprintf("w5-%d", n)
	pair, err := s.agents(ctx, owner, "a", 2)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "W5: writing %d messages of history\n", n)
	writer, err := s.hub.Authenticate(ctx, pair[0].token)
	if err != nil {
		return nil, err
	}
	reader, err := s.hub.Authenticate(ctx, pair[1].token)
	if err != nil {
		return nil, err
	}
	// Spread over conversations of 50 to stay within the budget brake; the
	// reader acknowledges all but the last 20, as a working agent would.
	var convs []string
	var wg sync.WaitGroup
	var written atomic.Int64
	stop := progress(o.Progress, "W5 history", &written)
	for start := 0; start < n; start += perConversation * 32 {
		for w := 0; w < 32 && start+w*perConversation < n; w++ {
			v, err := s.hub.CreateThread(ctx, writer, hub.ThreadSpec{Title: "history", Participants: []string{pair[1].handle}})
			if err != nil {
				stop()
				return nil, err
			}
			convs = append(convs, v.Conversation.ID)
			first := start + w*perConversation
			wg.Go(func() {
				for k := first; k < min(first+perConversation, n); k++ {
					r, err := s.hub.SendMessage(ctx, writer, hub.SendInput{ConversationID: v.Conversation.ID, Body: fmt.Sprintf("history %d", k)})
					if err == nil && k < n-20 {
						s.hub.Acknowledge(ctx, reader, r.Message.ID, "", "")
					}
					written.Add(1)
				}
			})
		}
		wg.Wait()
	}
	stop()
	time.Sleep(1500 * time.Millisecond) // the server's recheck sees the new events
	var out []WorkloadStats
	for _, tool := range []string{"check_inbox", "read_messages"} {
		var lat latencies
		var errs failures
		var count atomic.Int64
		before, _ := s.runtime(ctx)
		stop := progress(o.Progress, fmt.Sprintf("W5 %s at %d messages", tool, n), &count)
		start := time.Now()
		for i := 0; time.Since(start) < d; i++ {
			args := map[string]any{}
			if tool == "read_messages" {
				args = map[string]any{"conversation_id": convs[i%len(convs)], "mark_read": false, "limit": 20}
			}
			t := time.Now()
			if err := pair[1].call(ctx, tool, args, nil); err != nil {
				errs.add(err)
				continue
			}
			lat = append(lat, time.Since(t))
			count.Add(1)
		}
		stop()
		st := WorkloadStats{Name: fmt.Sprintf("W5 %s at %d messages", tool, n),
			Detail: "one at a time, client-side time", Latency: lat.summary(), RSSBytes: s.rss()}
		st.Errors, st.FirstError = errs.result()
		out = append(out, st)
		if after, err := s.runtime(ctx); err == nil {
			out = append(out, WorkloadStats{Name: fmt.Sprintf("W5 %s at %d messages, server-side", tool, n),
				Detail:  "the same calls, time in the server (palaver_tool_calls_seconds, interpolated within its buckets)",
				Latency: serverLatency(before, after, tool), ServerSide: true})
		}
	}
	return out, nil
}
