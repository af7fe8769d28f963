package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/cli"
)

// conformanceEras are the protocol revisions the official conformance
// suite is run at: the modern one and the newest handshake one.
var conformanceEras = []string{"2026-07-28", "2025-11-25"}

// TestConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, installed by .ci/run) against the
// real server — `palaver serve` on a temp SQLite file — with a real agent
// token, at both protocol eras, every server scenario of the era. The
// suite sends no Authorization header, so a reverse proxy in front adds
// the token and passes everything else (the Host header included)
// through. What fails is compared to testdata/conformance/<era>.yml by the
// suite itself: a failure not listed there, or a listed one that now
// passes, fails the test. Each entry names its reason; they are checks
// that need the suite's reference fixtures (tools named test_*, test://
// resources, prompts and completions Palaver does not have).
//
// Skipped unless PALAVER_CONFORMANCE names the suite's `conformance`
// executable; node 22 or newer must be on PATH (CONTRIBUTING.md).
func TestConformance(t *testing.T) {
	bin := os.Getenv("PALAVER_CONFORMANCE")
	if bin == "" {
		t.Skip("PALAVER_CONFORMANCE is not set; it names the MCP conformance suite's executable (CONTRIBUTING.md says how to install it)")
	}
	db := filepath.Join(t.TempDir(), "palaver.db")
	target, logs := servePalaver(t, db)
	for _, args := range [][]string{
		{"user", "create", "conformance", "--name", "Conformance", "--database", db},
		{"agent", "create", "conformance/suite", "--description", "runs the MCP conformance suite", "--database", db},
	} {
		palaver(t, args...)
	}
	lines := strings.Split(strings.TrimSpace(palaver(t, "token", "mint", "--user", "conformance", "--agent", "suite", "--database", db)), "\n")
	token := lines[len(lines)-1]

	proxy := tokenProxy(t, target, token, nil)

	for _, era := range conformanceEras {
		t.Run(era, func(t *testing.T) {
			run := func(out string) (conformanceCount, string, error) {
				cmd := exec.CommandContext(t.Context(), bin, "server",
					"--url", proxy.URL+"/mcp/",
					"--suite", "all", "--spec-version", era,
					"--expected-failures", filepath.Join("testdata", "conformance", era+".yml"),
					"--output-dir", out)
				var stdout bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stdout
				start := time.Now()
				err := cmd.Run()
				n := conformanceCounts(t, out)
				t.Logf("%s: %d scenarios, checks: %d passed, %d failed, %d warned, in %s",
					era, n.scenarios, n.status["SUCCESS"], n.status["FAILURE"], n.status["WARNING"], time.Since(start).Round(time.Second))
				return n, stdout.String(), err
			}
			out := t.ArtifactDir() // each scenario's checks.json, kept with -artifacts
			n, output, err := run(filepath.Join(out, "1"))
			if err != nil {
				// A check the suite times on a machine that is busy (a
				// repeated tools/list, say) may miss once; a real failure
				// fails the second run too. The first is said either way.
				t.Logf("conformance suite at %s failed once; running it again. What the unexpected checks said:\n%s", era, unexpectedChecks(filepath.Join(out, "1"), output))
				n, output, err = run(filepath.Join(out, "2"))
			}
			if err != nil {
				t.Errorf("conformance suite at %s: %v\n%s\nwhat the unexpected checks say:\n%s", era, err, output, unexpectedChecks(filepath.Join(out, "2"), output))
			}
			// Every server scenario of the era ran, not only the suite's
			// default selection.
			list, err := exec.CommandContext(t.Context(), bin, "list", "--server", "--spec-version", era).Output()
			if err != nil {
				t.Fatalf("conformance list: %v", err)
			}
			if want := strings.Count(string(list), "\n  - "); n.scenarios != want {
				t.Errorf("%d scenarios ran at %s, but the suite lists %d:\n%s", n.scenarios, era, want, list)
			}
		})
	}
	// The suite makes many mistakes on purpose; they are the client's, so
	// they are refusals, logged below ERROR.
	if errs := logs.lines("level=ERROR"); len(errs) > 0 {
		t.Errorf("the server logged %d errors during the conformance run:\n%s", len(errs), strings.Join(errs, "\n"))
	}
}

// unexpectedChecks is what the checks the suite calls unexpected (in its
// output under "Unexpected failures") say, from their checks.json files
// under dir: each one that failed or warned, with its message.
func unexpectedChecks(dir, output string) string {
	_, after, _ := strings.Cut(output, "Unexpected failures (not in baseline):")
	var b strings.Builder
	for _, line := range strings.Split(after, "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "✗ ")
		if !ok {
			continue
		}
		scenario, _, _ := strings.Cut(name, ":")
		files, _ := filepath.Glob(filepath.Join(dir, "server-"+scenario+"-*", "checks.json"))
		for _, f := range files {
			raw, _ := os.ReadFile(f)
			var checks []map[string]any
			json.Unmarshal(raw, &checks)
			for _, c := range checks {
				if c["status"] == "FAILURE" || c["status"] == "WARNING" {
					d, _ := json.Marshal(c["details"])
					fmt.Fprintf(&b, "%s %s %s: %v %s\n", scenario, c["id"], c["status"], c["errorMessage"], d)
				}
			}
		}
	}
	return b.String()
}

// conformanceCount is what one run of the suite did: how many scenarios
// it ran and how many checks ended in each status.
type conformanceCount struct {
	scenarios int
	status    map[string]int // SUCCESS, FAILURE, WARNING, SKIPPED, INFO
}

// conformanceCounts adds up the checks.json files the suite wrote under
// dir, one for each scenario.
func conformanceCounts(t *testing.T, dir string) conformanceCount {
	t.Helper()
	n := conformanceCount{status: map[string]int{}}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		n.scenarios++
		for _, c := range checks {
			n.status[c.Status]++
		}
	}
	return n
}

// palaver runs a palaver command in this process and returns its stdout.
func palaver(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" }); code != 0 {
		t.Fatalf("palaver %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
}

// servePalaver runs `palaver serve` on a free loopback port over db until
// the test ends, and returns its base URL and its log.
func servePalaver(t *testing.T, db string) (*url.URL, *serverLog) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--database", db}, strings.NewReader(""), io.Discard, pw, func(string) string { return "" })
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("palaver serve exited %d", code)
		}
	})
	logs := &serverLog{}
	re := regexp.MustCompile(`mcp=(http://\S+)/mcp/`)
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		logs.Write([]byte(sc.Text() + "\n"))
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(logs, pr)
			u, err := url.Parse(m[1])
			if err != nil {
				t.Fatal(err)
			}
			return u, logs
		}
	}
	t.Fatalf("palaver serve ended without saying where it listens:\n%s", logs.String())
	return nil, nil
}

// serverLog is the server's log, kept for the test to read.
type serverLog struct{ syncBuffer }

// lines returns the log lines containing s.
func (l *serverLog) lines(s string) []string {
	var out []string
	for line := range strings.Lines(l.String()) {
		if strings.Contains(line, s) {
			out = append(out, strings.TrimSuffix(line, "\n"))
		}
	}
	return out
}
