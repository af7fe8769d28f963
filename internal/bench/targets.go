package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// Target is one of DESIGN.md §17's targets judged on a run: what was
// measured, and whether it meets the target (Met nil: not measured in this
// run).
type Target struct {
	Metric   string `json:"metric"`
	Want     string `json:"target"`
	Measured string `json:"measured"`
	Met      *bool  `json:"met"`
}

// judgeTargets judges the run's workloads against §17. Rates are judged by
// their ratio to this run's HTTP floor, and latencies against its fsync and
// wake-up floors, which move less from machine to machine than the numbers
// themselves.
func (r *Report) judgeTargets() []Target {
	find := func(prefix string) []WorkloadStats {
		var out []WorkloadStats
		for _, w := range r.Workloads {
			if strings.HasPrefix(w.Name, prefix) {
				out = append(out, w)
			}
		}
		return out
	}
	judge := func(metric, want string, rows []WorkloadStats, measure func([]WorkloadStats) (string, bool)) Target {
		t := Target{Metric: metric, Want: want, Measured: "not measured"}
		if len(rows) > 0 {
			var met bool
			t.Measured, met = measure(rows)
			t.Met = &met
		}
		return t
	}
	fl := r.Floors
	// ofFloor is a rate as a ratio to its floor; 0 without one.
	ofFloor := func(rate, floor float64) float64 {
		if floor <= 0 {
			return 0
		}
		return rate / floor
	}
	return []Target{
		judge("durable sends/s one at a time, SQLite FULL", fmt.Sprintf("≥ 0.2 × the HTTP floor one at a time (%.0f/s)", 0.2*fl.HTTPSequentialPerSec), find("W1 send, 1 sender"), func(w []WorkloadStats) (string, bool) {
			ratio := ofFloor(w[0].PerSec, fl.HTTPSequentialPerSec)
			return fmt.Sprintf("%.0f/s, %.2f × the floor", w[0].PerSec, ratio), ratio >= 0.2
		}),
		judge("durable sends/s, 32 senders, SQLite FULL", fmt.Sprintf("≥ 0.2 × the HTTP floor at 32 clients (%.0f/s); aim 10,000/s", 0.2*fl.HTTPPerSec), find("W1 send, 32 senders"), func(w []WorkloadStats) (string, bool) {
			ratio := ofFloor(w[0].PerSec, fl.HTTPPerSec)
			return fmt.Sprintf("%.0f/s, %.2f × the floor", w[0].PerSec, ratio), ratio >= 0.2
		}),
		judge("send p50, one at a time", fmt.Sprintf("≤ fsync p50 + 0.5 ms (%.2f ms)", fl.Fsync.P50+0.5), find("W1 send, 1 sender"), func(w []WorkloadStats) (string, bool) {
			return fmt.Sprintf("%.2f ms", w[0].Latency.P50), w[0].Latency.P50 <= fl.Fsync.P50+0.5
		}),
		judge("send p99, 32 senders", "≤ 10 ms", find("W1 send, 32 senders"), func(w []WorkloadStats) (string, bool) {
			return fmt.Sprintf("%.2f ms", w[0].Latency.P99), w[0].Latency.P99 <= 10
		}),
		judge("pages a one-send commit writes (WAL pages a commit, one sender)", "≤ 10", find("W1 send, 1 sender"), func(w []WorkloadStats) (string, bool) {
			if w[0].PagesPerCommit == 0 {
				return "not reported by the server", false
			}
			return fmt.Sprintf("%.1f", w[0].PagesPerCommit), w[0].PagesPerCommit <= 10
		}),
		judge(fmt.Sprintf("send → waiter woken, p50 (the worst W2 cell of %d pairs)", wakePairsWithIdle),
			fmt.Sprintf("≤ the floor's wake-up p50 + fsync p50 + 0.3 ms (%.2f ms)", fl.Wake.P50+fl.Fsync.P50+0.3), find(fmt.Sprintf("W2 send→wake, %d pairs,", wakePairsWithIdle)), func(w []WorkloadStats) (string, bool) {
				var p50, p99, a50, a99 float64
				for _, x := range w {
					p50, p99 = max(p50, x.Latency.P50), max(p99, x.Latency.P99)
					if a := x.AfterAnswer; a != nil {
						a50, a99 = max(a50, a.P50), max(a99, a.P99)
					}
				}
				return fmt.Sprintf("%.2f ms (p99 %.2f ms)%s", p50, p99, afterAnswer(a50, a99)), p50 <= fl.Wake.P50+fl.Fsync.P50+0.3
			}),
		judge("parked waits: memory each, idle CPU (the most waiters)", "≤ 30 KiB, < 5 % of a core", find("W3 "), func(w []WorkloadStats) (string, bool) {
			most := w[0]
			for _, x := range w {
				if leadingCount(x.Name) > leadingCount(most.Name) {
					most = x
				}
			}
			kib := float64(most.PerWaiter) / 1024
			return fmt.Sprintf("%s: %.1f KiB, %.1f %% of a core", strings.TrimPrefix(most.Name, "W3 "), kib, 100*most.IdleCPU), kib <= 30 && most.IdleCPU < 0.05
		}),
		judge("check_inbox server-side p99, at the most history", "≤ 1 ms, ≤ 2× at the least", find("W5 check_inbox"), func(w []WorkloadStats) (string, bool) {
			var least, most *WorkloadStats
			for i := range w {
				if !w[i].ServerSide {
					continue
				}
				if least == nil || leadingCount(w[i].Name) < leadingCount(least.Name) {
					least = &w[i]
				}
				if most == nil || leadingCount(w[i].Name) > leadingCount(most.Name) {
					most = &w[i]
				}
			}
			if most == nil {
				return "no server-side reading", false
			}
			return fmt.Sprintf("%.2f ms at %d messages (%.2f ms at %d)", most.Latency.P99, leadingCount(most.Name), least.Latency.P99, leadingCount(least.Name)),
				most.Latency.P99 <= 1 && most.Latency.P99 <= 2*least.Latency.P99
		}),
		judge("cross-replica wake on PostgreSQL, p99", "≤ 50 ms", find("W7 cross-replica"), func(w []WorkloadStats) (string, bool) {
			var a50, a99 float64
			if a := w[0].AfterAnswer; a != nil {
				a50, a99 = a.P50, a.P99
			}
			return fmt.Sprintf("%.2f ms%s", w[0].Latency.P99, afterAnswer(a50, a99)), w[0].Latency.P99 <= 50
		}),
		judge("durable sends/s on PostgreSQL, 32 senders over 2 replicas", "≥ 2,000/s", find("W7 send"), func(w []WorkloadStats) (string, bool) {
			return fmt.Sprintf("%.0f/s", w[0].PerSec), w[0].PerSec >= 2000
		}),
	}
}

// afterAnswer tells the wake-up alone, from the send's answer (judged
// targets count from the send's start).
func afterAnswer(p50, p99 float64) string {
	if p50 == 0 && p99 == 0 {
		return ""
	}
	return fmt.Sprintf("; from the send's answer: p50 %.2f ms, p99 %.2f ms", p50, p99)
}

// leadingCount is the first number in a workload's name after its label:
// the waiters of "W3 10000 parked waiters", the messages of "W5 check_inbox
// at 100000 messages".
func leadingCount(name string) int {
	for _, f := range strings.Fields(name)[1:] {
		if n, err := strconv.Atoi(f); err == nil {
			return n
		}
	}
	return 0
}
