package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// serverRuntime is what a server's /metrics tells of its Go runtime.
type serverRuntime struct {
	goroutines float64
	heapInuse  float64                 // go_memstats_heap_inuse_bytes
	gcs        float64                 // go_gc_duration_seconds_count: collections so far
	gcSeconds  float64                 // go_gc_duration_seconds_sum: their pauses, summed
	gcPause    map[string]float64      // go_gc_duration_seconds by quantile ("0" … "1"), seconds, over recent pauses
	tools      map[string]bucketCounts // palaver_tool_calls_seconds{outcome="ok"} by tool
	commits    float64                 // palaver_store_commits_total
	pages      float64                 // palaver_store_pages_written_total (SQLite)
}

// bucketCounts is a histogram: cumulative counts at upper bounds (seconds),
// ascending, and the count of all observations.
type bucketCounts struct {
	bounds, counts []float64
	total          float64
}

// add sums two replicas' histograms (the same buckets).
func (h bucketCounts) add(o bucketCounts) bucketCounts {
	if h.bounds == nil {
		return o
	}
	sum := bucketCounts{bounds: h.bounds, counts: slices.Clone(h.counts), total: h.total + o.total}
	for i := range min(len(sum.counts), len(o.counts)) {
		sum.counts[i] += o.counts[i]
	}
	return sum
}

// serverLatency summarizes the calls of a tool answered ok between two
// readings of the server's histogram, each quantile interpolated within
// its bucket (beyond the last bound: that bound). A histogram has no
// maximum, so Max stays 0.
func serverLatency(before, after serverRuntime, tool string) Summary {
	a, b := after.tools[tool], before.tools[tool]
	total := a.total - b.total
	if total <= 0 || len(a.bounds) == 0 {
		return Summary{}
	}
	at := func(q float64) float64 {
		want, lower, prev := q*total, 0.0, 0.0
		for i, bound := range a.bounds {
			n := a.counts[i]
			if i < len(b.counts) {
				n -= b.counts[i]
			}
			if n >= want {
				if n == prev {
					return 1000 * bound
				}
				return 1000 * (lower + (bound-lower)*(want-prev)/(n-prev))
			}
			lower, prev = bound, n
		}
		return 1000 * a.bounds[len(a.bounds)-1]
	}
	return Summary{Count: int(total), P50: at(0.5), P90: at(0.9), P99: at(0.99), P999: at(0.999)}
}

// metricsURL is the /metrics page beside an MCP endpoint (…/mcp/).
func metricsURL(mcp string) string {
	return strings.TrimSuffix(strings.TrimSuffix(mcp, "/"), "/mcp") + "/metrics"
}

// readRuntime reads the server's /metrics page at url.
func readRuntime(ctx context.Context, hc *http.Client, url string) (serverRuntime, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return serverRuntime{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return serverRuntime{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return serverRuntime{}, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return serverRuntime{}, fmt.Errorf("GET %s: %w", url, err)
	}
	rt := serverRuntime{gcPause: map[string]float64{}, tools: map[string]bucketCounts{}}
	for _, m := range families["palaver_tool_calls_seconds"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["outcome"] != "ok" {
			continue
		}
		h := m.GetHistogram()
		bc := bucketCounts{total: float64(h.GetSampleCount())}
		for _, b := range h.GetBucket() {
			bc.bounds = append(bc.bounds, b.GetUpperBound())
			bc.counts = append(bc.counts, float64(b.GetCumulativeCount()))
		}
		rt.tools[labels["tool"]] = bc
	}
	if c := families["palaver_store_commits_total"].GetMetric(); len(c) > 0 {
		rt.commits = c[0].GetCounter().GetValue()
	}
	if c := families["palaver_store_pages_written_total"].GetMetric(); len(c) > 0 {
		rt.pages = c[0].GetCounter().GetValue()
	}
	if g := families["go_goroutines"].GetMetric(); len(g) > 0 {
		rt.goroutines = g[0].GetGauge().GetValue()
	}
	if h := families["go_memstats_heap_inuse_bytes"].GetMetric(); len(h) > 0 {
		rt.heapInuse = h[0].GetGauge().GetValue()
	}
	if gc := families["go_gc_duration_seconds"].GetMetric(); len(gc) > 0 {
		sum := gc[0].GetSummary()
		rt.gcs, rt.gcSeconds = float64(sum.GetSampleCount()), sum.GetSampleSum()
		for _, q := range sum.GetQuantile() {
			rt.gcPause[fmt.Sprint(q.GetQuantile())] = q.GetValue()
		}
	}
	return rt, nil
}

// addRuntime records the server's runtime over a workload: its goroutines
// at the end (unless the workload counted them itself, as W3 does while its
// waiters are parked), the collections during it and their summed pauses,
// the pause quantiles at the end, and the pages its commits wrote.
func (st *WorkloadStats) addRuntime(before, after serverRuntime) {
	if commits, pages := after.commits-before.commits, after.pages-before.pages; commits > 0 && pages > 0 {
		st.PagesPerCommit = pages / commits
	}
	if st.Goroutines == 0 {
		st.Goroutines = int(after.goroutines)
	}
	st.GCs = int64(after.gcs - before.gcs)
	st.GCPauseTotal = 1000 * (after.gcSeconds - before.gcSeconds)
	st.GCPause = map[string]float64{}
	for q, v := range after.gcPause {
		st.GCPause[q] = 1000 * v
	}
}
