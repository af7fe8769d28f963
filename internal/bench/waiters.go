package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// parkedWaiters is W3: n waits parked at once (5 per agent), one TCP
// connection each; it reports memory per waiter, time to park and idle CPU.
func parkedWaiters(ctx context.Context, s *server, o Options, n int, d time.Duration) (WorkloadStats, error) {
	name := fmt.Sprintf("W3 %d parked waiters", n)
	agents, err := s.agents(ctx, "w3", "idle", (n+4)/5)
	if err != nil {
		return WorkloadStats{}, err
	}
	before := s.proc.rss()
	rt0, _ := s.runtime(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var parked atomic.Int64
	stop := progress(o.Progress, name, &parked)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			parked.Add(1)
			agents[i/5].call(ctx, "wait_for_messages", map[string]any{"timeout_s": 55}, nil)
		})
	}
	// Parked means the server holds them: wait until its memory settles
	// for a moment after the last request left.
	for parked.Load() < int64(n) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	parkTime := time.Since(start)
	stop()
	after := s.proc.rss()
	rt, _ := s.runtime(ctx)
	cpu0 := s.proc.cpu()
	time.Sleep(d)
	idle := (s.proc.cpu() - cpu0).Seconds() / d.Seconds()
	cancel()
	wg.Wait()
	return WorkloadStats{Name: name, Detail: "wait_for_messages timeout 55 s, one connection each", RSSBytes: after,
		PerWaiter: (after - before) / int64(n), ParkTime: parkTime.Seconds(), IdleCPU: idle,
		Goroutines: int(rt.goroutines), PerWaiterGoroutines: (rt.goroutines - rt0.goroutines) / float64(n)}, nil
}
