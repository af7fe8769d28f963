package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// sendThroughput is W1's first half: n senders, closed loop, for d.
func sendThroughput(ctx context.Context, s *server, o Options, n int, d time.Duration) (WorkloadStats, error) {
	senders, err := s.senders(ctx, fmt.Sprintf("w1-c%d", n), n)
	if err != nil {
		return WorkloadStats{}, err
	}
	return closedLoop(ctx, s, o, fmt.Sprintf("W1 send, %s", plural(n, "sender")), senders, d), nil
}

// closedLoop has each sender send its next message as soon as the last is
// answered, for d. A send's time excludes starting a new thread.
func closedLoop(ctx context.Context, s *server, o Options, name string, senders []*sender, d time.Duration) WorkloadStats {
	var count atomic.Int64
	var errs failures
	lats := make([]latencies, len(senders))
	cpu0 := s.cpu()
	stop := progress(o.Progress, name, &count)
	start := time.Now()
	var wg sync.WaitGroup
	for i, snd := range senders {
		wg.Go(func() {
			for k := 0; time.Since(start) < d; k++ {
				if err := snd.ready(ctx); err != nil {
					errs.add(err)
					return
				}
				t := time.Now()
				if err := snd.send(ctx, body(fmt.Sprintf("load %d/%d:", i, k))); err != nil {
					errs.add(err)
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
	st := WorkloadStats{Name: name, Detail: fmt.Sprintf("closed loop, %d-byte bodies", bodySize),
		PerSec: float64(count.Load()) / elapsed.Seconds(), Latency: summarize(lats),
		CPU: (s.cpu() - cpu0).Seconds() / elapsed.Seconds(), RSSBytes: s.rss()}
	st.Errors, st.FirstError = errs.result()
	return st
}

// openLoopCallers is how many sends of the open loop may be in flight.
const openLoopCallers = 256

// openLoop is W1's second half: sends due at a fixed rate for d, issued on
// schedule whether or not the earlier ones were answered, by a pool of
// senders (one send in flight each). A send that starts late because every
// sender was busy is timed from when it was due, so a server that falls
// behind shows its queue in the latencies (no coordinated omission). Sends
// still waiting for a sender when d ends are counted as missed.
func openLoop(ctx context.Context, s *server, o Options, senders []*sender, rate int, d time.Duration) WorkloadStats {
	name := fmt.Sprintf("W1 open loop, %d/s", rate)
	interval := time.Second / time.Duration(rate)
	planned := int64(d / interval)
	var count atomic.Int64
	var errs failures
	lats := make([]latencies, len(senders))
	// Every sender has its thread before the clock starts.
	var wg sync.WaitGroup
	for _, snd := range senders {
		wg.Go(func() {
			if err := snd.ready(ctx); err != nil {
				errs.add(err)
			}
		})
	}
	wg.Wait()

	cpu0 := s.cpu()
	stop := progress(o.Progress, name, &count)
	due := make(chan time.Time)
	for i, snd := range senders {
		wg.Go(func() {
			for k := 0; ; k++ {
				at, ok := <-due
				if !ok {
					return
				}
				if err := snd.send(ctx, body(fmt.Sprintf("open %d/%d/%d:", rate, i, k))); err != nil {
					errs.add(err)
				} else {
					lats[i] = append(lats[i], time.Since(at))
					count.Add(1)
				}
				// A new thread, when one is needed, before the next send is taken.
				if err := snd.ready(ctx); err != nil {
					errs.add(err)
				}
			}
		})
	}
	start := time.Now()
	end := time.After(d)
	var issued int64
schedule:
	for issued < planned {
		at := start.Add(time.Duration(issued) * interval)
		time.Sleep(time.Until(at))
		select {
		case due <- at:
			issued++
		case <-end:
			break schedule
		}
	}
	close(due)
	wg.Wait()
	stop()
	elapsed := time.Since(start)
	st := WorkloadStats{Name: name,
		Detail: fmt.Sprintf("open loop, %d callers at most: %d sends due, %d of them not started by the end for want of a free caller; latency from when each was due", len(senders), planned, planned-issued),
		PerSec: float64(count.Load()) / elapsed.Seconds(), Offered: float64(rate), Missed: planned - issued,
		Latency: summarize(lats), CPU: (s.cpu() - cpu0).Seconds() / elapsed.Seconds(), RSSBytes: s.rss()}
	st.Errors, st.FirstError = errs.result()
	return st
}

// summarize puts the latencies of several callers together.
func summarize(per []latencies) Summary {
	var all latencies
	for _, l := range per {
		all = append(all, l...)
	}
	return all.summary()
}
