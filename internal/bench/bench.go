package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a run.
type Options struct {
	// Binary is the palaver executable to spawn a server with.
	Binary string
	// Dir holds the spawned server's database and the reports.
	Dir string
	// Quick shortens every workload so the whole run takes about a minute.
	Quick bool
	// Workloads names the workloads to run (W1 … W5); empty: all.
	Workloads []string
	// Progress receives a line a second while a workload runs.
	Progress io.Writer
}

// Report is everything a run measured.
type Report struct {
	When      time.Time       `json:"when"`
	Quick     bool            `json:"quick"`
	Settings  string          `json:"settings"`
	Floors    Floors          `json:"floors"`
	Workloads []WorkloadStats `json:"workloads"`
}

// WorkloadStats is one workload's numbers.
type WorkloadStats struct {
	Name      string  `json:"name"`
	Detail    string  `json:"detail"`
	PerSec    float64 `json:"per_s,omitempty"`
	Latency   Summary `json:"latency"`
	Errors    int64   `json:"errors"`
	CPU       float64 `json:"server_cpu_cores"` // server CPU in cores over the workload
	RSSBytes  int64   `json:"server_rss_bytes"`
	PerWaiter int64   `json:"rss_per_waiter_bytes,omitempty"`
	ParkTime  float64 `json:"time_to_park_s,omitempty"`
	IdleCPU   float64 `json:"idle_cpu_cores,omitempty"`
}

// perConversation is how many messages a sender sends into one
// conversation before it starts another: within the budget brake (60 per
// agent per conversation per hour), so the brakes stay on at their defaults
// as in real use.
const perConversation = 50

// Run measures the floors, spawns a server and runs the workloads, writing
// report.md and report.json into o.Dir.
func Run(ctx context.Context, o Options) (*Report, error) {
	r := &Report{When: time.Now().UTC(), Quick: o.Quick,
		Settings: fmt.Sprintf("default brakes; each sender moves to a new conversation every %d messages to stay within its budget", perConversation)}
	d := 5 * time.Second
	if o.Quick {
		d = 2 * time.Second
	}
	var err error
	fmt.Fprintln(o.Progress, "measuring floors: fsync, raw HTTP round trips")
	if r.Floors.FsyncPerSec, err = measureFsync(o.Dir, d); err != nil {
		return nil, err
	}
	if r.Floors.HTTPPerSec, r.Floors.HTTPSequential, err = measureHTTP(ctx, d); err != nil {
		return nil, err
	}
	s, err := spawn(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	want := func(name string) bool { return len(o.Workloads) == 0 || slices.Contains(o.Workloads, name) }
	if want("W1") {
		senders := []int{1, 8, 32}
		if o.Quick {
			senders = []int{1, 32}
		}
		for _, n := range senders {
			st, err := sendThroughput(ctx, s, o, n, d)
			if err != nil {
				return nil, err
			}
			r.Workloads = append(r.Workloads, st)
		}
	}
	if want("W2") {
		st, err := sendToWake(ctx, s, o, 16, d)
		if err != nil {
			return nil, err
		}
		r.Workloads = append(r.Workloads, st)
	}
	if want("W4") {
		n := 500
		if o.Quick {
			n = 100
		}
		st, err := fanOut(ctx, s, o, n)
		if err != nil {
			return nil, err
		}
		r.Workloads = append(r.Workloads, st)
	}
	if want("W5") {
		sizes := []int{10000, 100000}
		if o.Quick {
			sizes = []int{10000}
		}
		for _, n := range sizes {
			st, err := historyGrowth(ctx, s, o, n, d)
			if err != nil {
				return nil, err
			}
			r.Workloads = append(r.Workloads, st...)
		}
	}
	if want("W3") {
		n := 2000
		if o.Quick {
			n = 500
		}
		st, err := parkedWaiters(ctx, s, o, n, d)
		if err != nil {
			return nil, err
		}
		r.Workloads = append(r.Workloads, st)
	}
	return r, r.write(o.Dir)
}

// progress prints a line a second with the count so far until stop.
func progress(w io.Writer, name string, count *atomic.Int64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				n := count.Load()
				fmt.Fprintf(w, "%s: %d done, %.0f/s\n", name, n, float64(n)/time.Since(start).Seconds())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// write saves report.md and report.json in dir.
func (r *Report) write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(r.Markdown()), 0o644)
}

// Markdown is the report as a table, each speed also as a ratio to its
// floor.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# palaver bench, %s%s\n\n", r.When.Format(time.RFC3339), map[bool]string{true: " (quick)"}[r.Quick])
	fmt.Fprintf(&b, "Floors of this machine, measured in this run: fsync %.0f/s; raw HTTP JSON round trips %.0f/s (32 clients), p50 %.3f ms one at a time.\n\n", r.Floors.FsyncPerSec, r.Floors.HTTPPerSec, r.Floors.HTTPSequential.P50)
	fmt.Fprintf(&b, "Settings: %s.\n\n", r.Settings)
	fmt.Fprintln(&b, "| workload | rate/s | ratio to floor | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | errors | server CPU (cores) | server RSS MiB | per waiter KiB | park s | idle CPU |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, w := range r.Workloads {
		ratio := ""
		if w.PerSec > 0 && r.Floors.HTTPPerSec > 0 {
			ratio = fmt.Sprintf("%.1f %% of HTTP, %.1f× fsync", 100*w.PerSec/r.Floors.HTTPPerSec, w.PerSec/r.Floors.FsyncPerSec)
		}
		fmt.Fprintf(&b, "| %s | %.0f | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %.2f | %.0f | %.1f | %.2f | %.3f |\n",
			w.Name, w.PerSec, ratio, w.Latency.P50, w.Latency.P90, w.Latency.P99, w.Latency.P999, w.Latency.Max, w.Errors,
			w.CPU, float64(w.RSSBytes)/(1<<20), float64(w.PerWaiter)/1024, w.ParkTime, w.IdleCPU)
	}
	return b.String()
}
