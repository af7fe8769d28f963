package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a run.
type Options struct {
	// Binary is the palaver executable to spawn servers with.
	Binary string
	// URL, when set, is a server already running (its base URL or its MCP
	// endpoint) to run the workloads against instead of a spawned one, on
	// Database, which the bench opens to make agents and tokens. PID, when
	// set, is its process, whose CPU and memory are then measured. W3 and
	// W7 still spawn servers of their own; with URL, W3 uses it.
	URL      string
	Database string
	PID      int
	// Dir holds the spawned servers' databases and the reports.
	Dir string
	// Quick shortens every workload so the whole run takes about a minute.
	Quick bool
	// Workloads names the workloads to run (of Names); empty: all.
	Workloads []string
	// Progress receives a line a second while a workload runs.
	Progress io.Writer
	// Postgres is the database W7 makes its schema in (default
	// DefaultPostgres).
	Postgres string
}

// Names are the workloads, in the order a run takes them.
func Names() []string { return []string{"W1", "W2", "W3", "W4", "W5", "W6", "W7"} }

// Report is everything a run measured.
type Report struct {
	When      time.Time       `json:"when"`
	Quick     bool            `json:"quick"`
	Settings  string          `json:"settings"`
	Server    string          `json:"server"` // what was measured: spawned, or given by --url
	Floors    Floors          `json:"floors"`
	Workloads []WorkloadStats `json:"workloads"`
	// OpenFiles is the open-file limit of the bench, and of a server it
	// spawns (0: unknown).
	OpenFiles uint64 `json:"open_file_limit,omitempty"`
	// Skipped lists the workloads not run, and why.
	Skipped []string `json:"skipped,omitempty"`
	// Failed lists the workloads that stopped with an error, and why.
	Failed []string `json:"failed,omitempty"`
	// Targets are DESIGN.md §17's targets judged on this run.
	Targets []Target `json:"targets"`
}

// WorkloadStats is one workload's numbers. Zero means not measured.
type WorkloadStats struct {
	Name       string  `json:"name"`
	Detail     string  `json:"detail"`
	PerSec     float64 `json:"per_s,omitempty"`
	Offered    float64 `json:"offered_per_s,omitempty"` // open loop: the rate sends were due at
	Missed     int64   `json:"missed,omitempty"`        // open loop: sends due but not started by the end
	Latency    Summary `json:"latency"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	CPU        float64 `json:"server_cpu_cores,omitempty"` // server CPU in cores over the workload
	RSSBytes   int64   `json:"server_rss_bytes,omitempty"`
	PerWaiter  int64   `json:"rss_per_waiter_bytes,omitempty"`
	ParkTime   float64 `json:"time_to_park_s,omitempty"`
	IdleCPU    float64 `json:"idle_cpu_cores,omitempty"`

	// From the server's /metrics: goroutines at the end (W3: while its
	// waiters are parked), the collections during the workload and their
	// summed pauses, and go_gc_duration_seconds by quantile ("0" … "1",
	// over the recent pauses) at the end.
	Goroutines          int                `json:"server_goroutines,omitempty"`
	PerWaiterGoroutines float64            `json:"goroutines_per_waiter,omitempty"`
	GCs                 int64              `json:"server_gc_count,omitempty"`
	GCPauseTotal        float64            `json:"server_gc_pause_total_ms,omitempty"`
	GCPause             map[string]float64 `json:"server_gc_pause_quantiles_ms,omitempty"`
	// PagesPerCommit is the pages the SQLite writer's commits wrote to
	// the WAL over the workload, per commit: one sender's is a one-send
	// commit's write set (§17).
	PagesPerCommit float64 `json:"pages_per_commit,omitempty"`

	// ProcessUnknown: the server's process was not known (--url without
	// --pid), so its CPU and memory were not measured.
	ProcessUnknown bool `json:"server_process_unknown,omitempty"`

	Soak *Soak `json:"soak,omitempty"` // W6 only

	// AfterAnswer (W2, W7): from the sender having its send's answer —
	// after the commit — to the waiter having the message; 0 when the
	// waiter had it first. It is the wake-up alone, without the durable
	// send before it.
	AfterAnswer *Summary `json:"wake_after_send_answer,omitempty"`

	// ServerSide: Latency is the server's own time for calls another row
	// timed at the client (W5); the server table leaves the row out.
	ServerSide bool `json:"server_side,omitempty"`
}

// perConversation is how many messages a sender sends into one
// conversation before it starts another: within the budget brake (60 per
// agent per conversation per hour), so the brakes stay on at their defaults
// as in real use.
const perConversation = 50

// plan is how big each workload is: a full run's sizes, or --quick's.
type plan struct {
	d          time.Duration // each timed cell, and each floor
	senders    []int         // W1, closed loop
	rates      []int         // W1, open loop, sends/s
	pairs      []int         // W2, waiter and sender pairs with no idle waiters
	idle       []int         // W2, idle waiters in the background of 16 pairs
	parked     []int         // W3
	fanOut     []int         // W4
	history    []int         // W5, messages
	soakAgents int           // W6
	soakTime   time.Duration // W6
}

func newPlan(quick bool) plan {
	if quick {
		return plan{d: 2 * time.Second, senders: []int{1, 32}, rates: []int{1000}, pairs: []int{16}, parked: []int{500},
			fanOut: []int{100}, history: []int{10000}, soakAgents: 100, soakTime: 20 * time.Second}
	}
	return plan{d: 5 * time.Second, senders: []int{1, 8, 32, 128}, rates: []int{1000, 5000, 10000}, pairs: []int{16, 64, 256}, idle: []int{1000, 10000},
		parked: []int{1000, 5000, 10000}, fanOut: []int{100, 500, 1000}, history: []int{10000, 100000, 1000000},
		soakAgents: 1000, soakTime: 10 * time.Minute}
}

// Help lists the workloads with their sizes, a full run's and --quick's.
func Help() string {
	f, q := newPlan(false), newPlan(true)
	both := func(full, quick []int) string { return fmt.Sprintf("%s (quick: %s)", sizes(full), sizes(quick)) }
	lines := []string{
		fmt.Sprintf("W1  send throughput: %s senders, closed loop; then open loop at %s sends/s, %d callers at most", both(f.senders, q.senders), both(f.rates, q.rates), openLoopCallers),
		fmt.Sprintf("W2  send→wake: %s pairs of a parked waiter and a sender; then %d pairs with %s idle waiters parked besides", both(f.pairs, q.pairs), wakePairsWithIdle, both(f.idle, q.idle)),
		fmt.Sprintf("W3  parked waiters: %s, each size on a fresh server; memory and goroutines per waiter, idle CPU", both(f.parked, q.parked)),
		fmt.Sprintf("W4  fan-out: one message to a group of %s parked waiters; time until the last has it", both(f.fanOut, q.fanOut)),
		fmt.Sprintf("W5  history growth: %s messages, then check_inbox and read_messages one at a time", both(f.history, q.history)),
		fmt.Sprintf("W6  soak: %s agents for %s (quick: %s for %s), each with a parked wait, sending in bursts, 1 %% bots; RSS over time",
			sizes([]int{f.soakAgents}), minutes(f.soakTime), sizes([]int{q.soakAgents}), minutes(q.soakTime)),
		"W7  PostgreSQL, two replicas: cross-replica send→wake, 16 pairs; 32 senders over both (skipped when --postgres is unreachable)",
	}
	return strings.Join(lines, "\n") + "\n"
}

// minutes is a duration as people write it: "10 min", "20 s".
func minutes(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%d min", int(d.Minutes()))
	}
	return fmt.Sprintf("%d s", int(d.Seconds()))
}

// sizes is a list of counts, like "1,000, 5,000 and 10,000".
func sizes(ns []int) string {
	var out []string
	for _, n := range ns {
		text := strconv.Itoa(n)
		if n >= 1000 {
			text = fmt.Sprintf("%d,%03d", n/1000, n%1000)
		}
		out = append(out, text)
	}
	switch len(out) {
	case 0:
		return "none"
	case 1:
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// Run measures the floors and runs the workloads on a spawned server (or
// the one at o.URL), writing report.md and report.json into o.Dir. When
// workloads fail, the report says which, and Run returns it with an error.
func Run(ctx context.Context, o Options) (*Report, error) {
	p := newPlan(o.Quick)
	r := &Report{When: time.Now().UTC(), Quick: o.Quick,
		Settings: fmt.Sprintf("default brakes; each sender moves to a new conversation every %d messages to stay within its budget", perConversation)}
	r.OpenFiles = raiseOpenFiles()
	var err error
	stop := every(o.Progress, func(elapsed time.Duration) string {
		return fmt.Sprintf("floors: fsync, raw HTTP round trips, then raw HTTP wake-ups, %.0f s of %.0f", elapsed.Seconds(), 3*p.d.Seconds())
	})
	r.Floors.FsyncPerSec, r.Floors.Fsync, err = measureFsync(o.Dir, p.d)
	if err == nil {
		r.Floors.HTTPPerSec, r.Floors.HTTPSequentialPerSec, r.Floors.HTTPSequential, err = measureHTTP(ctx, p.d)
	}
	if err == nil {
		r.Floors.Wake, err = measureWake(ctx, wakePairsWithIdle, p.d)
	}
	stop()
	if err != nil {
		return nil, err
	}
	want := func(name string) bool { return len(o.Workloads) == 0 || slices.Contains(o.Workloads, name) }
	var s *server // the server of every workload but W7 (and W3 when spawning)
	if slices.ContainsFunc([]string{"W1", "W2", "W4", "W5", "W6"}, want) || (o.URL != "" && want("W3")) {
		if o.URL != "" {
			s, err = attach(ctx, o)
		} else {
			s, err = spawn(ctx, o, filepath.Join(o.Dir, "palaver.db"), 1)
		}
		if err != nil {
			return nil, err
		}
		defer s.stop()
		r.Server = s.describe()
	}
	if want("W1") {
		for _, n := range p.senders {
			r.step(ctx, o, s, fmt.Sprintf("W1 %d senders", n), func() ([]WorkloadStats, error) {
				return one(sendThroughput(ctx, s, o, n, p.d))
			})
		}
		pool, err := s.senders(ctx, "w1-open", openLoopCallers)
		for _, rate := range p.rates {
			r.step(ctx, o, s, fmt.Sprintf("W1 open loop %d/s", rate), func() ([]WorkloadStats, error) {
				if err != nil {
					return nil, err
				}
				return one(openLoop(ctx, s, o, pool, rate, p.d), nil)
			})
		}
	}
	if want("W2") {
		for _, pairs := range p.pairs {
			r.step(ctx, o, s, fmt.Sprintf("W2 %d pairs", pairs), func() ([]WorkloadStats, error) {
				return one(sendToWake(ctx, s, o, pairs, 0, p.d))
			})
		}
		for _, n := range p.idle {
			if r.enoughFiles(o, fmt.Sprintf("W2 with %d idle waiters", n), n) {
				r.step(ctx, o, s, fmt.Sprintf("W2 %d idle", n), func() ([]WorkloadStats, error) {
					return one(sendToWake(ctx, s, o, wakePairsWithIdle, n, p.d))
				})
			}
		}
	}
	if want("W3") {
		for _, n := range p.parked {
			name := fmt.Sprintf("W3 %d waiters", n)
			if !r.enoughFiles(o, name, n) {
				continue
			}
			if o.URL != "" {
				r.step(ctx, o, s, name, func() ([]WorkloadStats, error) { return one(parkedWaiters(ctx, s, o, n, p.d)) })
				continue
			}
			// A fresh server each, so that what earlier workloads left in
			// its memory does not blur the memory per waiter.
			fresh, err := spawn(ctx, o, filepath.Join(o.Dir, fmt.Sprintf("w3-%d.db", n)), 1)
			if err != nil {
				r.fail(o, name, err)
				continue
			}
			r.step(ctx, o, fresh, name, func() ([]WorkloadStats, error) { return one(parkedWaiters(ctx, fresh, o, n, p.d)) })
			fresh.stop()
		}
	}
	if want("W4") {
		for _, n := range p.fanOut {
			r.step(ctx, o, s, fmt.Sprintf("W4 %d waiters", n), func() ([]WorkloadStats, error) { return one(fanOut(ctx, s, o, n)) })
		}
	}
	if want("W5") {
		for _, n := range p.history {
			r.step(ctx, o, s, fmt.Sprintf("W5 at %d messages", n), func() ([]WorkloadStats, error) {
				return historyGrowth(ctx, s, o, n, p.d)
			})
		}
	}
	if want("W6") && r.enoughFiles(o, "W6", 2*p.soakAgents) {
		r.step(ctx, o, s, "W6", func() ([]WorkloadStats, error) { return one(soak(ctx, s, o, p.soakAgents, p.soakTime)) })
	}
	if want("W7") {
		if o.Postgres == "" {
			o.Postgres = DefaultPostgres
		}
		r.replicaWorkloads(ctx, o, p.d)
	}
	if err := r.write(o.Dir); err != nil {
		return r, err
	}
	if len(r.Failed) > 0 {
		return r, fmt.Errorf("%d workloads failed; the report says which", len(r.Failed))
	}
	return r, nil
}

// one is a workload's single row, as step takes it.
func one(st WorkloadStats, err error) ([]WorkloadStats, error) {
	if err != nil {
		return nil, err
	}
	return []WorkloadStats{st}, nil
}

// enoughFiles tells whether n parked waits fit the open-file limit: each
// holds a connection in the bench and one in the server. If not, the
// workload is recorded as skipped.
func (r *Report) enoughFiles(o Options, name string, n int) bool {
	need := uint64(n) + 1024 // connections besides, files, the database
	if n == 0 || r.OpenFiles == 0 || r.OpenFiles >= need {
		return true
	}
	r.skip(o, fmt.Sprintf("%s: skipped, it needs about %d open files in the bench and in the server, and the limit is %d (raise the hard limit: ulimit -Hn, LimitNOFILE)", name, need, r.OpenFiles))
	return false
}

// skip records a workload not run, and why.
func (r *Report) skip(o Options, why string) {
	fmt.Fprintln(o.Progress, why)
	r.Skipped = append(r.Skipped, why)
}

// fail records a workload that stopped with err.
func (r *Report) fail(o Options, name string, err error) {
	why := fmt.Sprintf("%s failed: %v", name, err)
	fmt.Fprintln(o.Progress, why)
	r.Failed = append(r.Failed, why)
}

// step runs one workload on s and records its numbers with the server's
// runtime over it, read from its /metrics before and after. A workload that
// fails is recorded as failed and the run goes on with the next.
func (r *Report) step(ctx context.Context, o Options, s *server, name string, run func() ([]WorkloadStats, error)) {
	before, _ := s.runtime(ctx)
	sts, err := run()
	if err != nil {
		r.fail(o, name, err)
		return
	}
	if after, err := s.runtime(ctx); err == nil {
		for i := range sts {
			sts[i].addRuntime(before, after)
		}
	}
	if len(s.procs) == 0 {
		for i := range sts {
			sts[i].ProcessUnknown = true
		}
	}
	r.Workloads = append(r.Workloads, sts...)
}

// progress prints a line a second with the count so far and its rate,
// until stop.
func progress(w io.Writer, name string, count *atomic.Int64) (stop func()) {
	return every(w, func(elapsed time.Duration) string {
		n := count.Load()
		return fmt.Sprintf("%s: %d done, %.0f/s", name, n, float64(n)/elapsed.Seconds())
	})
}

// every prints line(time since the start) a second, until stop.
func every(w io.Writer, line func(elapsed time.Duration) string) (stop func()) {
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
			case now := <-t.C:
				fmt.Fprintln(w, line(now.Sub(start)))
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// write saves report.md and report.json in dir.
func (r *Report) write(dir string) error {
	r.Targets = r.judgeTargets()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(r.Markdown()), 0o644)
}

// Markdown is the report as two tables, what the clients saw (each speed
// also as a ratio to its floor) and what the server spent.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# palaver bench, %s%s\n\n", r.When.Format(time.RFC3339), map[bool]string{true: " (quick)"}[r.Quick])
	fl := r.Floors
	fmt.Fprintf(&b, "Floors of this machine, measured in this run: fsync %.0f/s, p50 %.3f ms; raw HTTP JSON round trips %.0f/s with 32 clients, %.0f/s one at a time (p50 %.3f ms); raw HTTP wake-up of a parked long poll, %d pairs, p50 %.3f ms, p99 %.3f ms.\n\n",
		fl.FsyncPerSec, fl.Fsync.P50, fl.HTTPPerSec, fl.HTTPSequentialPerSec, fl.HTTPSequential.P50, wakePairsWithIdle, fl.Wake.P50, fl.Wake.P99)
	fmt.Fprintf(&b, "Settings: %s.\n\n", r.Settings)
	if r.Server != "" {
		fmt.Fprintf(&b, "Server: %s.\n\n", r.Server)
	}
	fmt.Fprintln(&b, "DESIGN.md §17's targets, judged on this run (rates by their ratio to the HTTP floor):")
	fmt.Fprintln(&b, "\n| metric | target | measured | met |")
	fmt.Fprintln(&b, "|---|---|---|---|")
	for _, t := range r.judgeTargets() {
		met := "not measured"
		if t.Met != nil {
			met = map[bool]string{true: "yes", false: "no"}[*t.Met]
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", t.Metric, t.Want, t.Measured, met)
	}
	fmt.Fprintln(&b, "\nWhat the clients saw (a ratio to the floors for closed-loop sends on SQLite, where it means something):")
	fmt.Fprintln(&b, "\n| workload | rate/s | ratio to floor | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | errors | notes |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|---|---|")
	for _, w := range r.Workloads {
		ratio := ""
		if w.PerSec > 0 && r.Floors.HTTPPerSec > 0 && strings.HasPrefix(w.Name, "W1 send,") {
			ratio = fmt.Sprintf("%.1f %% of HTTP, %.1f× fsync", 100*w.PerSec/r.Floors.HTTPPerSec, w.PerSec/r.Floors.FsyncPerSec)
		}
		l := w.Latency
		if l.Count == 0 {
			fmt.Fprintf(&b, "| %s | %s | %s | | | | | | %d | %s |\n", w.Name, num("%.0f", w.PerSec), ratio, w.Errors, w.notes())
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %d | %s |\n",
			w.Name, num("%.0f", w.PerSec), ratio, l.P50, l.P90, l.P99, l.P999, num("%.2f", l.Max), w.Errors, w.notes())
	}
	fmt.Fprintln(&b, "\nThe server over each workload (GC pause quantiles are over its recent collections):")
	fmt.Fprintln(&b, "\n| workload | CPU (cores) | RSS MiB | goroutines | GCs | GC pause total ms | GC pause p50 / max ms | per waiter KiB | park s | idle CPU (cores) | WAL pages a commit |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, w := range r.Workloads {
		if w.ServerSide {
			continue
		}
		idle := num("%.3f", w.IdleCPU)
		if w.ParkTime > 0 && idle == "" {
			idle = "0" // measured, and idle indeed
		}
		goroutines := num("%.0f", float64(w.Goroutines))
		if w.PerWaiterGoroutines > 0 {
			goroutines += fmt.Sprintf(" (%.1f per waiter)", w.PerWaiterGoroutines)
		}
		pauses := ""
		if len(w.GCPause) > 0 {
			pauses = fmt.Sprintf("%.3f / %.3f", w.GCPause["0.5"], w.GCPause["1"])
		}
		cpu, rss, perWaiter := num("%.2f", w.CPU), num("%.0f", float64(w.RSSBytes)/(1<<20)), num("%.1f", float64(w.PerWaiter)/1024)
		if w.ProcessUnknown {
			cpu, rss, perWaiter, idle = "n/a", "n/a", "n/a", "n/a"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %.1f | %s | %s | %s | %s | %s |\n", w.Name,
			cpu, rss, goroutines, w.GCs, w.GCPauseTotal, pauses, perWaiter, num("%.2f", w.ParkTime), idle, num("%.1f", w.PagesPerCommit))
	}
	for _, w := range r.Workloads {
		if k := w.Soak; k != nil {
			fmt.Fprintf(&b, "\n%s: server RSS %s; wake-ups heard p50 %.2f ms, p99 %.2f ms (%d).\n", w.Name, k.rssText(), k.WakeLatency.P50, k.WakeLatency.P99, k.WakeLatency.Count)
		}
	}
	if len(r.Skipped)+len(r.Failed) > 0 {
		fmt.Fprintln(&b)
	}
	for _, line := range r.Skipped {
		fmt.Fprintf(&b, "- %s\n", line)
	}
	for _, f := range r.Failed {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	return b.String()
}

// notes is the workload's detail, the wake-up after the send's answer
// when measured, and its first error if any.
func (w WorkloadStats) notes() string {
	n := w.Detail
	if a := w.AfterAnswer; a != nil && a.Count > 0 {
		n += fmt.Sprintf("; from the send's answer to the waiter's: p50 %.2f ms, p99 %.2f ms", a.P50, a.P99)
	}
	if w.FirstError != "" {
		n += "; first error: " + strings.ReplaceAll(w.FirstError, "|", "\\|")
	}
	return n
}

// rssText tells how the server's memory went over the soak.
func (k *Soak) rssText() string {
	mib := func(v int64) float64 { return float64(v) / (1 << 20) }
	text := "n/a"
	if k.MaxRSS > 0 {
		flat := "flat"
		if !k.Flat {
			flat = "NOT flat"
		}
		text = fmt.Sprintf("first %.0f MiB, %.0f MiB at %.0f s, last %.0f MiB, max %.0f MiB: %s (last ≤ %.1f× the value at %.0f s)",
			mib(k.FirstRSS), mib(k.SettledRSS), k.SettledAt, mib(k.LastRSS), mib(k.MaxRSS), flat, flatFactor, k.SettledAt)
	}
	if len(k.Heap) > 0 && k.Heap[len(k.Heap)-1] > 0 {
		text += fmt.Sprintf("; Go heap in use first %.0f MiB, last %.0f MiB", mib(k.Heap[0]), mib(k.Heap[len(k.Heap)-1]))
	}
	return text
}

// plural is n of a thing, in words: "1 sender", "32 senders".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// num formats v, or gives "" for zero: not measured.
func num(format string, v float64) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf(format, v)
}
