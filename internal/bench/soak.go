package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Soak is W6's figures beyond a workload's usual ones: the server's memory
// over time, and the wake-ups the agents heard.
type Soak struct {
	Agents     int     `json:"agents"`
	Bots       int     `json:"bots"`
	Interval   float64 `json:"rss_interval_s"`
	RSS        []int64 `json:"rss_bytes"` // one sample each interval, from the start
	FirstRSS   int64   `json:"first_rss_bytes"`
	SettledAt  float64 `json:"settled_at_s"`      // when SettledRSS was taken
	SettledRSS int64   `json:"settled_rss_bytes"` // after the first minute (a quarter of a short run)
	LastRSS    int64   `json:"last_rss_bytes"`
	MaxRSS     int64   `json:"max_rss_bytes"`
	Flat       bool    `json:"rss_flat"` // LastRSS ≤ 1.2 × SettledRSS
	// Heap is the Go heap in use at each RSS sample, from /metrics: RSS
	// growing while it stays flat is memory outside the Go heap (SQLite's
	// page cache, say).
	Heap        []int64 `json:"go_heap_inuse_bytes,omitempty"`
	WakeLatency Summary `json:"wake_latency"`
}

// The agents' traffic, after Pipedream's measured MCP traffic model
// (research/performance.md §1): sends in bursts about six seconds apart,
// then a long idle gap; 1 % of agents are bots that send all the time and
// make about half of the traffic.
const (
	burstGap   = 6 * time.Second  // between sends of a burst, ±50 %
	meanIdle   = 90 * time.Second // between bursts, exponential
	botPause   = 300 * time.Millisecond
	soakWaitS  = 25 // wait_for_messages timeout, the tool's default
	flatFactor = 1.2
)

// soak is W6: n agents for d, each holding one parked wait_for_messages
// (re-issued with its cursor when it times out or wakes) and, on a second
// connection, sending to the next agent in bursts; the server's RSS is
// sampled throughout.
func soak(ctx context.Context, s *server, o Options, n int, d time.Duration) (WorkloadStats, error) {
	name := fmt.Sprintf("W6 soak, %d agents, %s", n, minutes(d))
	agents, err := s.agents(ctx, fmt.Sprintf("w6-%d", n), "agent", n)
	if err != nil {
		return WorkloadStats{}, err
	}
	sk := Soak{Agents: n, Bots: max(1, n/100), Interval: min(10*time.Second, d/10).Seconds()}
	var sends atomic.Int64
	var errs failures
	lats := make([]latencies, n)
	var mu sync.Mutex
	var wakes latencies

	waitCtx, endWaits := context.WithCancel(ctx)
	var waits, senders sync.WaitGroup
	stop := progress(o.Progress, name, &sends)
	cpu0 := s.cpu()
	start := time.Now()
	end := start.Add(d)
	for i, a := range agents {
		waits.Go(func() {
			args := map[string]any{"timeout_s": soakWaitS} // the first wait starts from now
			for waitCtx.Err() == nil {
				var got waitResult
				if err := a.call(waitCtx, "wait_for_messages", args, &got); err != nil {
					if waitCtx.Err() == nil {
						errs.add(err)
						pause(end, time.Second)
					}
					continue
				}
				heard := got.sinceStamps(time.Now())
				mu.Lock()
				wakes = append(wakes, heard...)
				mu.Unlock()
				args = map[string]any{"cursor": got.Cursor, "timeout_s": soakWaitS}
			}
		})
		senders.Go(func() {
			snd := &sender{c: a, peer: agents[(i+1)%n].handle}
			rng := rand.New(rand.NewPCG(uint64(i), 6))
			k := 0
			send := func() {
				if err := snd.ready(ctx); err != nil {
					errs.add(err)
					return
				}
				t := time.Now()
				if err := snd.send(ctx, stamped(fmt.Sprintf("soak %d/%d", i, k))); err != nil {
					errs.add(err)
					return
				}
				lats[i] = append(lats[i], time.Since(t))
				sends.Add(1)
				k++
			}
			if i < sk.Bots {
				for pause(end, botPause) {
					send()
				}
				return
			}
			// The first burst starts somewhere in the first idle gap (or
			// the first half of a short run), so agents do not start at once.
			if !pause(end, time.Duration(rng.Float64()*float64(min(meanIdle, d/2)))) {
				return
			}
			for {
				for j := range 2 + rng.IntN(4) { // 2–5 sends
					if j > 0 && !pause(end, time.Duration((0.5+rng.Float64())*float64(burstGap))) {
						return
					}
					send()
				}
				if !pause(end, time.Duration(rng.ExpFloat64()*float64(meanIdle))) {
					return
				}
			}
		})
	}

	sample := func() int64 {
		rss := s.rss()
		sk.RSS = append(sk.RSS, rss)
		rt, _ := s.runtime(ctx)
		sk.Heap = append(sk.Heap, int64(rt.heapInuse))
		return rss
	}
	sample()
	settleAt := min(time.Minute, d/4)
	tick := time.NewTicker(time.Duration(sk.Interval * float64(time.Second)))
	for now := range tick.C {
		rss := sample()
		if sk.SettledAt == 0 && now.Sub(start) >= settleAt {
			sk.SettledAt, sk.SettledRSS = now.Sub(start).Seconds(), rss
		}
		if !now.Before(end) {
			break
		}
	}
	tick.Stop()
	senders.Wait()
	rt, _ := s.runtime(ctx) // with every wait still parked
	endWaits()
	waits.Wait()
	stop()
	elapsed := time.Since(start)

	sk.judgeRSS()
	sk.WakeLatency = wakes.summary()
	st := WorkloadStats{Name: name,
		Detail: fmt.Sprintf("each agent parks one wait and sends in bursts, %.0f s apart, idle %.0f s on average between bursts; %s among them sending every %.1f s; send latency",
			burstGap.Seconds(), meanIdle.Seconds(), plural(sk.Bots, "bot"), botPause.Seconds()),
		PerSec: float64(sends.Load()) / elapsed.Seconds(), Latency: summarize(lats),
		CPU: (s.cpu() - cpu0).Seconds() / elapsed.Seconds(), RSSBytes: sk.LastRSS, Goroutines: int(rt.goroutines), Soak: &sk}
	st.Errors, st.FirstError = errs.result()
	return st, nil
}

// judgeRSS sets the first, last and largest of the RSS samples, and
// whether memory stayed flat: the last at most flatFactor times the settled
// value.
func (k *Soak) judgeRSS() {
	k.FirstRSS, k.LastRSS = k.RSS[0], k.RSS[len(k.RSS)-1]
	k.MaxRSS = slices.Max(k.RSS)
	k.Flat = k.SettledRSS > 0 && float64(k.LastRSS) <= flatFactor*float64(k.SettledRSS)
}

// pause sleeps for d, or until end if that comes first; it tells whether
// there is time left.
func pause(end time.Time, d time.Duration) bool {
	if left := time.Until(end); left < d {
		time.Sleep(left)
		return false
	}
	time.Sleep(d)
	return true
}
