package cli

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
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
		"\npalaver_webhook_deliveries_total{outcome=\"delivered\"} 0\n", "\npalaver_webhook_deliveries_total{outcome=\"gave_up\"} 0\n",
		"\npalaver_notifications_total{outcome=\"sent\"} 0\n", "\npalaver_notifications_total{outcome=\"dropped\"} 0\n",
		"\npalaver_remote_calls_total{outcome=\"delivered\"} 0\n", "\npalaver_remote_calls_total{outcome=\"failed\"} 0\n", "\npalaver_remote_calls_total{outcome=\"gave_up\"} 0\n"} {
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

// TestServeHubMetrics: /metrics counts sends by outcome, brakes by word,
// the waits parked now and how soon a send woke one (§14), each series
// there from the start and moving as the hub acts.
func TestServeHubMetrics(t *testing.T) {
	ctx := context.Background()
	admin, call, vars := ownerAndAgent(t)
	base := strings.TrimSuffix(vars["PALAVER_URL"], "/mcp/")
	admin("agent", "create", "alice/reviewer")
	lines := strings.Split(strings.TrimSpace(admin("token", "mint", "--user", "alice", "--agent", "reviewer")), "\n")
	reviewer := map[string]string{"PALAVER_URL": vars["PALAVER_URL"], "PALAVER_TOKEN": lines[len(lines)-1]}
	series := func() map[string]string {
		t.Helper()
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out := map[string]string{}
		for line := range strings.Lines(string(b)) {
			if name, value, ok := strings.Cut(strings.TrimSpace(line), " "); ok && strings.HasPrefix(name, "palaver_") {
				out[name] = value
			}
		}
		return out
	}
	want := func(got map[string]string, w map[string]string) {
		t.Helper()
		for name, value := range w {
			if got[name] != value {
				t.Errorf("%s is %q, want %q", name, got[name], value)
			}
		}
	}
	want(series(), map[string]string{`palaver_sends_total{outcome="sent"}`: "0", `palaver_sends_total{outcome="error"}`: "0",
		`palaver_brakes_tripped_total{word="duplicate"}`: "0", `palaver_brakes_tripped_total{word="closing"}`: "0",
		"palaver_parked_waits": "0", "palaver_wake_seconds_count": "0"})

	conv := call("open_conversation", `{"handles": ["alice/reviewer"]}`)["conversation_id"].(string)
	done := make(chan string, 1)
	go func() {
		_, stdout, _ := run(t, ctx, reviewer, "wait", "--once", "--timeout", "30")
		done <- stdout
	}()
	deadline := time.Now().Add(20 * time.Second)
	for series()["palaver_parked_waits"] != "1" {
		if time.Now().After(deadline) {
			t.Fatal("the reviewer's wait is not counted as parked")
		}
		runtime.Gosched()
	}
	for range 3 { // the third time, the duplicate brake refuses the same words
		call("send_message", `{"conversation_id": "`+conv+`", "body": "the same words"}`)
	}
	call("send_message", `{"conversation_id": "conv_nope", "body": "x"}`)
	select {
	case got := <-done:
		if !strings.Contains(got, `"type":"message.new"`) {
			t.Fatalf("palaver wait printed %s", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the reviewer's wait did not wake")
	}
	got := series()
	want(got, map[string]string{`palaver_sends_total{outcome="sent"}`: "2", `palaver_sends_total{outcome="denied"}`: "1",
		`palaver_sends_total{outcome="error"}`: "1", `palaver_sends_total{outcome="held"}`: "0",
		`palaver_brakes_tripped_total{word="duplicate"}`: "1", `palaver_brakes_tripped_total{word="budget"}`: "0",
		"palaver_parked_waits": "0", "palaver_wake_seconds_count": "1"})
	if got[`palaver_wake_seconds_bucket{le="+Inf"}`] != "1" || got["palaver_wake_seconds_sum"] == "0" {
		t.Errorf("palaver_wake_seconds: %v", got)
	}
}
