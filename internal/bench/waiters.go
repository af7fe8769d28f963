package bench

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// parkedWaiters is W3: n waits parked at once (5 per agent), one TCP
// connection each; it reports memory and goroutines per waiter, time to
// park and idle CPU.
func parkedWaiters(ctx context.Context, s *server, o Options, n int, d time.Duration) (WorkloadStats, error) {
	name := fmt.Sprintf("W3 %d parked waiters", n)
	agents, err := s.agents(ctx, fmt.Sprintf("w3-%d", n), "idle", (n+waitsPerAgent-1)/waitsPerAgent)
	if err != nil {
		return WorkloadStats{}, err
	}
	before := s.rss()
	rt0, _ := s.runtime(ctx)
	start := time.Now()
	w := park(ctx, s, o, name, agents, n)
	defer w.stop()
	parkTime := time.Since(start)
	after := s.rss()
	rt, _ := s.runtime(ctx)
	cpu0 := s.cpu()
	stop := every(o.Progress, func(elapsed time.Duration) string {
		return fmt.Sprintf("%s: all parked, idle for %.0f s of %.0f", name, elapsed.Seconds(), d.Seconds())
	})
	time.Sleep(d)
	idle := (s.cpu() - cpu0).Seconds() / d.Seconds()
	stop()
	st := WorkloadStats{Name: name, Detail: "wait_for_messages timeout 55 s, one connection each", RSSBytes: after,
		PerWaiter: (after - before) / int64(n), ParkTime: parkTime.Seconds(), IdleCPU: idle,
		Goroutines: int(rt.goroutines), PerWaiterGoroutines: (rt.goroutines - rt0.goroutines) / float64(n)}
	st.Errors, st.FirstError = w.errs.result()
	return st, nil
}

// waitsPerAgent is how many waits an agent may hold at once (§6).
const waitsPerAgent = 5

// waiters are parked waits of idle agents, re-issued as they time out,
// until stop.
type waiters struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errs   failures
}

// park parks n waits of agents (five per agent, one connection each) and
// returns once the server holds them all.
func park(ctx context.Context, s *server, o Options, name string, agents []*client, n int) *waiters {
	ctx, cancel := context.WithCancel(ctx)
	w := &waiters{cancel: cancel}
	var parked atomic.Int64
	stop := progress(o.Progress, name+", parking", &parked)
	// A few hundred connect at a time: a burst of thousands would overflow
	// the server's listen backlog, and each dropped SYN costs a second.
	sem := make(chan struct{}, 256)
	for i := range n {
		sem <- struct{}{}
		w.wg.Go(func() {
			written := sync.OnceFunc(func() { parked.Add(1); <-sem })
			wctx := onWritten(ctx, written)
			for ctx.Err() == nil {
				err := agents[i/waitsPerAgent].call(wctx, "wait_for_messages", map[string]any{"timeout_s": 55}, nil)
				written() // in case it failed before it was sent
				if err != nil && ctx.Err() == nil {
					w.errs.add(err)
					select {
					case <-ctx.Done():
					case <-time.After(time.Second):
					}
				}
			}
		})
	}
	for range cap(sem) { // every request has been written
		sem <- struct{}{}
	}
	stop()
	s.settle(ctx)
	return w
}

// stop ends the waits (the client hangs up) and waits for their callers.
func (w *waiters) stop() {
	w.cancel()
	w.wg.Wait()
}

// onWritten returns ctx with a hook that calls f once a request made with
// it has been written to its connection.
func onWritten(ctx context.Context, f func()) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { f() }})
}
