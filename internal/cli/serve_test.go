package cli

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
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
	for _, want := range []string{"\ngo_goroutines ", "\ngo_gc_duration_seconds_count ", "\npalaver_http_requests_total{code=\"200\"} 1\n",
		"\npalaver_webhook_deliveries_total{outcome=\"delivered\"} 0\n", "\npalaver_webhook_deliveries_total{outcome=\"gave_up\"} 0\n"} {
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

	// On every interface, it is reached on loopback.
	_, started = startServer(t, nil, "--addr", "0.0.0.0:0", "--database", filepath.Join(t.TempDir(), "palaver.db"))
	if !regexp.MustCompile(` url=http://127\.0\.0\.1:\d+ dashboard=http://127\.0\.0\.1:\d+/ mcp=http://127\.0\.0\.1:\d+/mcp/ addr=\[::\]:\d+ `).MatchString(started) {
		t.Errorf("listening on 0.0.0.0, the log does not give a loopback URL:\n%s", started)
	}

	url, started = startServer(t, map[string]string{"PALAVER_BASE_URL": "https://palaver.example.com/"}, "--addr", "127.0.0.1:0", "--database", filepath.Join(t.TempDir(), "palaver.db"))
	addr = strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp/")
	if want := ` url=https://palaver.example.com dashboard=https://palaver.example.com/ mcp=https://palaver.example.com/mcp/ addr=` + addr + ` `; !strings.Contains(started, want) {
		t.Errorf("with a base URL the log does not have %q:\n%s", want, started)
	}
}

// TestHealth: palaver health asks the server on --addr (or PALAVER_ADDR)
// for /readyz: exit 0 and "ready" while it serves, 1 with the reason once
// it is gone; a server on every interface is asked on loopback.
func TestHealth(t *testing.T) {
	ctx := context.Background()
	// With a base URL, as behind a proxy: /readyz answers any Host.
	url, _, stop := launchServer(t, map[string]string{"PALAVER_BASE_URL": "https://palaver.example.com"}, "--addr", "127.0.0.1:0", "--database", filepath.Join(t.TempDir(), "palaver.db"))
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp/")
	if code, stdout, stderr := run(t, ctx, map[string]string{"PALAVER_ADDR": addr}, "health"); code != 0 || stdout != "ready\n" || stderr != "" {
		t.Errorf("palaver health: exit %d, %q %q", code, stdout, stderr)
	}
	_, port, _ := strings.Cut(addr, ":")
	if code, stdout, _ := run(t, ctx, nil, "health", "--addr", "0.0.0.0:"+port); code != 0 || stdout != "ready\n" {
		t.Errorf("palaver health --addr 0.0.0.0:%s: exit %d, %q", port, code, stdout)
	}
	stop()
	code, _, stderr := run(t, ctx, nil, "health", "--addr", addr)
	if want := "palaver health: no answer from http://" + addr + "/readyz: "; code != 1 || !strings.HasPrefix(stderr, want) {
		t.Errorf("palaver health with no server: exit %d, %q; want exit 1 and %q…", code, stderr, want)
	}
}
