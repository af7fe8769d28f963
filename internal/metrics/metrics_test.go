package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/palaverhq/palaver/internal/hub"
)

// scrape reads url's /metrics.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// requestsByCode is palaver_http_requests_total by its code label.
func requestsByCode(families map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range families["palaver_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "code" {
				out[l.GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

func TestMetrics(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hi")) })
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("part"))
		// The MCP SDK flushes server-sent events this way.
		if err := http.NewResponseController(w).Flush(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	srv := httptest.NewServer(New().Mount(mux))
	defer srv.Close()

	for _, path := range []string{"/hello", "/stream", "/missing"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		// Read to the end: a streamed answer ends after it is counted.
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	first := scrape(t, srv.URL)
	for _, name := range []string{"go_goroutines", "go_gc_duration_seconds", "go_memstats_heap_alloc_bytes"} {
		if first[name] == nil {
			t.Errorf("%s is missing", name)
		}
	}
	if runtime.GOOS == "linux" && first["process_resident_memory_bytes"] == nil {
		t.Error("process_resident_memory_bytes is missing")
	}
	if got := first["go_gc_duration_seconds"].GetType(); got != dto.MetricType_SUMMARY {
		t.Errorf("go_gc_duration_seconds is a %v, want a summary", got)
	}
	if diff := cmp.Diff(map[string]float64{"200": 2, "404": 1}, requestsByCode(first)); diff != "" {
		t.Errorf("requests before the first scrape (-want +got):\n%s", diff)
	}
	// The first scrape is counted once it has been answered.
	if diff := cmp.Diff(map[string]float64{"200": 3, "404": 1}, requestsByCode(scrape(t, srv.URL))); diff != "" {
		t.Errorf("requests at the second scrape (-want +got):\n%s", diff)
	}
}

// TestHubObserver: the hub's series count what they are told, every
// outcome and brake there from the start, and counting allocates nothing
// (it runs on every send).
func TestHubObserver(t *testing.T) {
	m := New()
	o, err := NewHubObserver(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Mount(http.NewServeMux()))
	defer srv.Close()
	byLabel := func(families map[string]*dto.MetricFamily, name string) map[string]float64 {
		out := map[string]float64{}
		for _, m := range families[name].GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
		return out
	}
	first := scrape(t, srv.URL)
	if d := cmp.Diff(map[string]float64{"sent": 0, "held": 0, "denied": 0, "error": 0}, byLabel(first, "palaver_sends_total")); d != "" {
		t.Errorf("sends before any (-want +got):\n%s", d)
	}
	if got := len(byLabel(first, "palaver_brakes_tripped_total")); got != len(hub.Brakes) {
		t.Errorf("%d brakes listed before any trips, want %d", got, len(hub.Brakes))
	}

	allocs := testing.AllocsPerRun(100, func() {
		o.Sent("sent")
		o.BrakeTripped("budget")
		o.Parked(1)
		o.Woke(2 * time.Millisecond)
		o.Searched(3 * time.Millisecond)
		o.Parked(-1)
	})
	if allocs != 0 {
		t.Errorf("counting allocates %v times a round, want 0", allocs)
	}
	o.Sent("denied")
	o.Parked(1)
	got := scrape(t, srv.URL)
	if d := cmp.Diff(map[string]float64{"sent": 101, "held": 0, "denied": 1, "error": 0}, byLabel(got, "palaver_sends_total")); d != "" {
		t.Errorf("sends (-want +got):\n%s", d)
	}
	if n := byLabel(got, "palaver_brakes_tripped_total")["budget"]; n != 101 {
		t.Errorf("budget brakes: %v, want 101", n)
	}
	if n := got["palaver_parked_waits"].GetMetric()[0].GetGauge().GetValue(); n != 1 {
		t.Errorf("parked waits: %v, want 1", n)
	}
	h := got["palaver_wake_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 101 || h.GetSampleSum() < 0.2 || h.GetSampleSum() > 0.21 {
		t.Errorf("wake-ups: %d, sum %v s; want 101 of 2 ms", h.GetSampleCount(), h.GetSampleSum())
	}
	s := got["palaver_search_seconds"].GetMetric()[0].GetHistogram()
	if s.GetSampleCount() != 101 || s.GetSampleSum() < 0.3 || s.GetSampleSum() > 0.31 {
		t.Errorf("searches: %d, sum %v s; want 101 of 3 ms", s.GetSampleCount(), s.GetSampleSum())
	}
}
