package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/palaverhq/palaver/internal/metrics"
)

func TestSummaryPercentiles(t *testing.T) {
	var l latencies
	for i := 1000; i >= 1; i-- {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	s := l.summary()
	if s.Count != 1000 || s.P50 != 500 || s.P90 != 900 || s.P99 != 990 || s.P999 != 999 || s.Max != 1000 {
		t.Fatalf("summary = %+v", s)
	}
	if (latencies{}).summary() != (Summary{}) {
		t.Fatal("an empty summary is not zero")
	}
}

func TestMarkdownGivesRatiosToFloors(t *testing.T) {
	r := &Report{Floors: Floors{FsyncPerSec: 4000, HTTPPerSec: 40000},
		Workloads: []WorkloadStats{{Name: "W1 send, 32 senders", PerSec: 10000}}}
	md := r.Markdown()
	if !strings.Contains(md, "25.0 % of HTTP, 2.5× fsync") || !strings.Contains(md, "fsync 4000/s") {
		t.Fatalf("report:\n%s", md)
	}
}

// writes is a store's commit counts, as metrics.Writer asks.
type writes struct{ commits, pages int64 }

func (w writes) Writes() (int64, int64)      { return w.commits, w.pages }
func (w writes) IndexWrites() (int64, int64) { return 0, 0 }

func TestReadRuntimeFromMetrics(t *testing.T) {
	mux := http.NewServeMux()
	m := metrics.New()
	if err := metrics.RegisterWriter(m.Registry(), writes{commits: 3, pages: 40}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Mount(mux))
	defer srv.Close()
	rt, err := readRuntime(context.Background(), srv.Client(), metricsURL(srv.URL+"/mcp/"))
	if err != nil {
		t.Fatal(err)
	}
	if rt.goroutines < 1 || rt.heapInuse < 1 {
		t.Errorf("goroutines = %v, heap in use = %v", rt.goroutines, rt.heapInuse)
	}
	if rt.commits != 3 || rt.pages != 40 {
		t.Errorf("commits = %v, pages = %v; want the store's 3 and 40", rt.commits, rt.pages)
	}
	quantiles := slices.Sorted(maps.Keys(rt.gcPause))
	if diff := cmp.Diff([]string{"0", "0.25", "0.5", "0.75", "1"}, quantiles); diff != "" {
		t.Errorf("GC pause quantiles (-want +got):\n%s", diff)
	}
}

func TestAddRuntime(t *testing.T) {
	before := serverRuntime{goroutines: 10, gcs: 4, gcSeconds: 0.002, commits: 100, pages: 2000}
	after := serverRuntime{goroutines: 30, gcs: 10, gcSeconds: 0.005, gcPause: map[string]float64{"0.5": 0.0002, "1": 0.001}, commits: 140, pages: 2300}
	var st WorkloadStats
	st.addRuntime(before, after)
	want := WorkloadStats{Goroutines: 30, GCs: 6, GCPauseTotal: 3, GCPause: map[string]float64{"0.5": 0.2, "1": 1}, PagesPerCommit: 7.5}
	if diff := cmp.Diff(want, st, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A workload that counted its goroutines itself (W3, while parked) keeps them.
	st = WorkloadStats{Goroutines: 5000}
	st.addRuntime(before, after)
	if st.Goroutines != 5000 {
		t.Errorf("goroutines = %d, want the workload's own 5000", st.Goroutines)
	}
}

// TestWakeFloorTimesEachWakeUp: the wake-up floor parks long polls on a
// raw net/http server and times each wake-up, every pair taking turns.
func TestWakeFloorTimesEachWakeUp(t *testing.T) {
	s, err := measureWake(context.Background(), 4, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if s.Count < 4 || s.P50 <= 0 || s.P50 > s.Max {
		t.Errorf("wake floor = %+v, want at least one wake-up a pair, each timed", s)
	}
}

func TestBodyIsPaddedAndKeepsItsStamp(t *testing.T) {
	b := body("1234567890 wake 3")
	if len(b) != bodySize || !strings.HasPrefix(b, "1234567890 wake 3 ") {
		t.Fatalf("body(…) = %q (%d bytes)", b, len(b))
	}
}

func TestFailuresKeepTheFirst(t *testing.T) {
	var f failures
	f.add(errors.New("first"))
	f.add(errors.New("second"))
	if n, first := f.result(); n != 2 || first != "first" {
		t.Fatalf("result() = %d, %q", n, first)
	}
}

func TestSoakRSSFlat(t *testing.T) {
	for _, tc := range []struct {
		rss     []int64
		settled int64
		want    Soak
	}{
		{[]int64{10, 50, 70, 60}, 50, Soak{FirstRSS: 10, LastRSS: 60, MaxRSS: 70, Flat: true}},
		{[]int64{10, 50, 61}, 50, Soak{FirstRSS: 10, LastRSS: 61, MaxRSS: 61, Flat: false}},
		{[]int64{0, 0}, 0, Soak{}}, // memory unknown: not called flat
	} {
		k := Soak{RSS: tc.rss, SettledRSS: tc.settled}
		k.judgeRSS()
		tc.want.RSS, tc.want.SettledRSS = tc.rss, tc.settled
		if diff := cmp.Diff(tc.want, k); diff != "" {
			t.Errorf("RSS %v (-want +got):\n%s", tc.rss, diff)
		}
	}
}

// TestServerLatencyFromHistogram: quantiles of the calls between two
// readings, interpolated within their buckets.
func TestServerLatencyFromHistogram(t *testing.T) {
	bounds := []float64{0.001, 0.002, 0.005}
	before := serverRuntime{tools: map[string]bucketCounts{"check_inbox": {bounds: bounds, counts: []float64{10, 10, 10}, total: 10}}}
	// 100 more calls: 50 under 1 ms, 40 in 1–2 ms, 10 in 2–5 ms.
	after := serverRuntime{tools: map[string]bucketCounts{"check_inbox": {bounds: bounds, counts: []float64{60, 100, 110}, total: 110}}}
	got := serverLatency(before, after, "check_inbox")
	want := Summary{Count: 100, P50: 1, P90: 2, P99: 4.7, P999: 4.97}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("server latency (-want +got):\n%s", diff)
	}
	if got := serverLatency(before, before, "check_inbox"); got != (Summary{}) {
		t.Errorf("no calls: %+v, want zero", got)
	}
}

// TestTargetsJudgeTheRun: each §17 target is judged on its workload rows,
// rates by their ratio to the HTTP floor; a target without rows is "not
// measured". The wake target is judged at 16 pairs only: more pairs show
// how the wake-up scales, not the target.
func TestTargetsJudgeTheRun(t *testing.T) {
	r := &Report{Floors: Floors{HTTPPerSec: 20000, HTTPSequentialPerSec: 5000, Fsync: Summary{P50: 0.4}, Wake: Summary{P50: 0.1}}, Workloads: []WorkloadStats{
		{Name: "W1 send, 1 sender", PerSec: 900, PagesPerCommit: 12.5, Latency: Summary{Count: 1, P50: 0.8}},
		{Name: "W1 send, 32 senders", PerSec: 6000, Latency: Summary{Count: 1, P99: 12}},
		{Name: "W2 send→wake, 16 pairs, 0 idle waiters", Latency: Summary{Count: 1, P50: 0.5, P99: 3}},
		{Name: "W2 send→wake, 16 pairs, 1000 idle waiters", Latency: Summary{Count: 1, P50: 0.7, P99: 6}, AfterAnswer: &Summary{Count: 1, P50: 0.2, P99: 0.7}},
		{Name: "W2 send→wake, 256 pairs, 0 idle waiters", Latency: Summary{Count: 1, P50: 40, P99: 90}, AfterAnswer: &Summary{Count: 1, P50: 5, P99: 20}},
		{Name: "W3 1000 parked waiters", PerWaiter: 100 << 10},
		{Name: "W3 10000 parked waiters", PerWaiter: 28 << 10, IdleCPU: 0.01},
		{Name: "W5 check_inbox at 10000 messages", Latency: Summary{Count: 1, P99: 3}},
		{Name: "W5 check_inbox at 10000 messages, server-side", ServerSide: true, Latency: Summary{Count: 1, P99: 0.5}},
		{Name: "W5 check_inbox at 100000 messages, server-side", ServerSide: true, Latency: Summary{Count: 1, P99: 0.9}},
		{Name: "W7 send, 32 senders over 2 replicas", PerSec: 1900},
	}}
	got := map[string]string{}
	for _, tg := range r.judgeTargets() {
		met := "not measured"
		if tg.Met != nil {
			met = fmt.Sprint(*tg.Met)
		}
		got[tg.Metric] = met + ": " + tg.Measured
	}
	want := map[string]string{
		"durable sends/s one at a time, SQLite FULL":                      "false: 900/s, 0.18 × the floor",
		"durable sends/s, 32 senders, SQLite FULL":                        "true: 6000/s, 0.30 × the floor",
		"send p50, one at a time":                                         "true: 0.80 ms",
		"send p99, 32 senders":                                            "false: 12.00 ms",
		"pages a one-send commit writes (WAL pages a commit, one sender)": "false: 12.5",
		"send → waiter woken, p50 (the worst W2 cell of 16 pairs)":        "true: 0.70 ms (p99 6.00 ms); from the send's answer: p50 0.20 ms, p99 0.70 ms",
		"parked waits: memory each, idle CPU (the most waiters)":          "true: 10000 parked waiters: 28.0 KiB, 1.0 % of a core",
		"check_inbox server-side p99, at the most history":                "true: 0.90 ms at 100000 messages (0.50 ms at 10000)",
		"cross-replica wake on PostgreSQL, p99":                           "not measured: not measured",
		"durable sends/s on PostgreSQL, 32 senders over 2 replicas":       "false: 1900/s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}
