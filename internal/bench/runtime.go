package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// serverRuntime is what a server's /metrics tells of its Go runtime.
type serverRuntime struct {
	goroutines float64
	heapInuse  float64            // go_memstats_heap_inuse_bytes
	gcs        float64            // go_gc_duration_seconds_count: collections so far
	gcSeconds  float64            // go_gc_duration_seconds_sum: their pauses, summed
	gcPause    map[string]float64 // go_gc_duration_seconds by quantile ("0" … "1"), seconds, over recent pauses
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
	rt := serverRuntime{gcPause: map[string]float64{}}
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
// and the pause quantiles at the end.
func (st *WorkloadStats) addRuntime(before, after serverRuntime) {
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
