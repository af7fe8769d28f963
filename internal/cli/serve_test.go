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

// TestServeLogsPublicURL: the start-up log gives the public URL — the base
// URL when one is set, else the address it listens on — and that address.
func TestServeLogsPublicURL(t *testing.T) {
	url, started := startServer(t, nil, "--addr", "127.0.0.1:0", "--database", filepath.Join(t.TempDir(), "palaver.db"))
	base := strings.TrimSuffix(url, "/mcp/")
	addr := strings.TrimPrefix(base, "http://")
	if want := ` url=` + base + ` dashboard=` + base + `/ mcp=` + base + `/mcp/ addr=` + addr + ` `; !strings.Contains(started, want) {
		t.Errorf("without --base-url the log does not have %q:\n%s", want, started)
	}

	url, started = startServer(t, map[string]string{"PALAVER_BASE_URL": "https://palaver.example.com/"}, "--addr", "127.0.0.1:0", "--database", filepath.Join(t.TempDir(), "palaver.db"))
	addr = strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp/")
	if want := ` url=https://palaver.example.com dashboard=https://palaver.example.com/ mcp=https://palaver.example.com/mcp/ addr=` + addr + ` `; !strings.Contains(started, want) {
		t.Errorf("with a base URL the log does not have %q:\n%s", want, started)
	}
}
