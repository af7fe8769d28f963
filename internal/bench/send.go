package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// sendThroughput is W1: n senders, closed loop, each into its own
// conversation, for d.
func sendThroughput(ctx context.Context, s *server, o Options, n int, d time.Duration) (WorkloadStats, error) {
	name := fmt.Sprintf("W1 send, %d senders", n)
	senders, err := s.agents(ctx, "w1", fmt.Sprintf("s%d-", n), n)
	if err != nil {
		return WorkloadStats{}, err
	}
	if _, err := s.agents(ctx, "w1", fmt.Sprintf("sink%d-", n), 1); err != nil {
		return WorkloadStats{}, err
	}
	// newConv starts a group conversation of a sender with the sink.
	newConv := func(c *client) (string, error) {
		var out struct {
			ConversationID string `json:"conversation_id"`
		}
		err := c.call(ctx, "create_thread", map[string]any{"title": "load", "participants": []string{fmt.Sprintf("w1/sink%d-0", n)}}, &out)
		return out.ConversationID, err
	}
	var count, errs atomic.Int64
	lats := make([]latencies, n)
	cpu0 := s.proc.cpu()
	stop := progress(o.Progress, name, &count)
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range senders {
		wg.Go(func() {
			var conv string
			for k := 0; time.Since(start) < d; k++ {
				if k%perConversation == 0 {
					var err error
					if conv, err = newConv(c); err != nil {
						errs.Add(1)
						return
					}
				}
				t := time.Now()
				err := c.call(ctx, "send_message", map[string]any{"conversation_id": conv, "body": fmt.Sprintf("load %d/%d: a short ask of a typical length", i, k)}, nil)
				if err != nil {
					errs.Add(1)
					continue
				}
				lats[i] = append(lats[i], time.Since(t))
				count.Add(1)
			}
		})
	}
	wg.Wait()
	stop()
	elapsed := time.Since(start)
	var all latencies
	for _, l := range lats {
		all = append(all, l...)
	}
	return WorkloadStats{Name: name, Detail: "closed loop, 200-byte bodies, durable (synchronous=FULL)",
		PerSec: float64(count.Load()) / elapsed.Seconds(), Latency: all.summary(), Errors: errs.Load(),
		CPU: (s.proc.cpu() - cpu0).Seconds() / elapsed.Seconds(), RSSBytes: s.proc.rss()}, nil
}
