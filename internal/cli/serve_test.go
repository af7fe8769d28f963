package cli

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeMetrics: the server answers GET /metrics (§14), counting requests.
func TestServeMetrics(t *testing.T) {
	base := strings.TrimSuffix(serve(t, filepath.Join(t.TempDir(), "palaver.db")), "/mcp/")
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %v", path, resp.Status, err)
		}
		return string(b)
	}
	get("/healthz")
	page := get("/metrics")
	for _, want := range []string{"\ngo_goroutines ", "\ngo_gc_duration_seconds_count ", "\npalaver_http_requests_total{code=\"200\"} 1\n"} {
		if !strings.Contains(page, want) {
			t.Errorf("/metrics does not have %q:\n%s", want, page)
		}
	}
}
