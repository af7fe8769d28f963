package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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
