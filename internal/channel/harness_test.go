package channel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/mcpclient"
)

// The harness: the palaver binary, built once; a real palaver serve on a
// temp SQLite database; and Claude Code played by the test, speaking
// JSON-RPC lines to palaver channel over its stdin and stdout.

var binary string // the palaver binary, built by TestMain

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "palaver-channel-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !testing.Short() {
		binary = filepath.Join(dir, "palaver")
		if out, err := exec.Command("go", "build", "-o", binary, "github.com/palaverhq/palaver/cmd/palaver").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is the process environment without PALAVER_* settings, plus vars.
func env(vars ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PALAVER_") && !strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, vars...)
}

// world is a database with alice and her agents planner and reviewer, and
// a server serving it.
type world struct {
	t      testing.TB
	dir    string
	db     string
	addr   string
	tokens map[string]string
	server *exec.Cmd
	logs   *lockedBuffer
}

func newWorld(t testing.TB) *world {
	t.Helper()
	if testing.Short() {
		t.Skip("builds palaver and runs it")
	}
	w := &world{t: t, dir: t.TempDir(), tokens: map[string]string{}, logs: &lockedBuffer{}}
	w.db = filepath.Join(w.dir, "palaver.db")
	w.admin("migrate")
	w.admin("user", "create", "alice")
	for _, slug := range []string{"planner", "reviewer"} {
		w.admin("agent", "create", "alice/"+slug)
		lines := strings.Split(strings.TrimSpace(w.admin("token", "mint", "--user", "alice", "--agent", slug)), "\n")
		w.tokens["alice/"+slug] = lines[len(lines)-1]
	}
	w.start("127.0.0.1:0")
	t.Cleanup(func() {
		w.kill()
		if t.Failed() {
			t.Logf("the server's log:\n%s", w.logs)
		}
	})
	return w
}

// admin runs an admin command on the database.
func (w *world) admin(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(binary, append(args, "--database", w.db)...)
	cmd.Env = env()
	out, err := cmd.Output()
	if err != nil {
		w.t.Fatalf("palaver %v: %v", args, err)
	}
	return string(out)
}

var serving = regexp.MustCompile(`palaver is serving.*? addr=(\S+)`)

// start runs palaver serve on addr and waits until it serves.
func (w *world) start(addr string) {
	w.t.Helper()
	cmd := exec.Command(binary, "serve", "--addr", addr, "--database", w.db)
	cmd.Env = env()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	up := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			fmt.Fprintln(w.logs, lines.Text())
			if m := serving.FindStringSubmatch(lines.Text()); m != nil {
				up <- m[1]
			}
		}
		close(up)
	}()
	select {
	case a, ok := <-up:
		if !ok {
			w.t.Fatalf("palaver serve ended before serving:\n%s", w.logs)
		}
		w.addr, w.server = a, cmd
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		w.t.Fatalf("palaver serve did not serve within a minute:\n%s", w.logs)
	}
}

// kill ends the server with SIGKILL.
func (w *world) kill() {
	if w.server != nil {
		w.server.Process.Kill()
		w.server.Wait()
		w.server = nil
	}
}

func (w *world) url() string { return "http://" + w.addr + "/mcp/" }

// agent is a plain MCP client of the server as the agent: another agent,
// or a person's script.
func (w *world) agent(handle string) *mcp.ClientSession {
	w.t.Helper()
	s, err := mcpclient.NewEnv(w.url(), w.tokens[handle], "").Connect(context.Background(), nil)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { s.Close() })
	return s
}

// call calls a tool and returns its structured result; a tool error fails
// the test.
func call(t testing.TB, s *mcp.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	r, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var out map[string]any
	json.Unmarshal(mcpclient.ResultJSON(r), &out)
	if r.IsError {
		t.Fatalf("%s: %v", tool, out)
	}
	return out
}

// claude is Claude Code as the test plays it: palaver channel as its
// subprocess, JSON-RPC lines over stdio.
type claude struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	msgs   chan map[string]any // every message the channel wrote, in order
	lines  chan string         // every line of its log
	log    *lockedBuffer
	done   chan error // the process's end
	nextID int
}

// startChannel starts palaver channel with vars (PALAVER_URL, …).
func startChannel(t testing.TB, vars ...string) *claude {
	t.Helper()
	cmd := exec.Command(binary, "channel")
	cmd.Env = env(vars...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &claude{t: t, cmd: cmd, stdin: stdin, msgs: make(chan map[string]any, 1000), lines: make(chan string, 1000), log: &lockedBuffer{}, done: make(chan error, 1)}
	var read sync.WaitGroup
	read.Go(func() {
		dec := json.NewDecoder(stdout)
		for {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				if err != io.EOF {
					c.msgs <- map[string]any{"not_json": err.Error()}
				}
				close(c.msgs)
				return
			}
			c.msgs <- m
		}
	})
	read.Go(func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			fmt.Fprintln(c.log, lines.Text())
			select {
			case c.lines <- lines.Text():
			default:
			}
		}
	})
	go func() { read.Wait(); c.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("the channel's log:\n%s", c.log)
		}
	})
	return c
}

// send writes one JSON-RPC message to the channel.
func (c *claude) send(msg map[string]any) {
	c.t.Helper()
	msg["jsonrpc"] = "2.0"
	b, _ := json.Marshal(msg)
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("writing to the channel: %v", err)
	}
}

// request sends a request and returns its response's result, failing on
// an error; notifications read meanwhile are kept in skipped.
func (c *claude) request(method string, params any, skipped *[]map[string]any) map[string]any {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	c.send(map[string]any{"id": id, "method": method, "params": params})
	for {
		m := c.next("the answer to "+method, 30*time.Second)
		if m["id"] == float64(id) {
			if m["error"] != nil {
				c.t.Fatalf("%s: %v", method, m["error"])
			}
			res, _ := m["result"].(map[string]any)
			return res
		}
		if skipped != nil {
			*skipped = append(*skipped, m)
		}
	}
}

// next is the next message the channel writes, within d.
func (c *claude) next(what string, d time.Duration) map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatalf("waiting for %s: the channel ended its output", what)
		}
		if m["not_json"] != nil {
			c.t.Fatalf("the channel wrote something that is not JSON-RPC on stdout: %v", m["not_json"])
		}
		return m
	case <-time.After(d):
		c.t.Fatalf("waiting for %s: nothing within %v", what, d)
	}
	return nil
}

// push is the next notifications/claude/channel, passing by other
// notifications (tools/list_changed).
func (c *claude) push(what string) map[string]any {
	c.t.Helper()
	for {
		m := c.next(what, 30*time.Second)
		if m["method"] == "notifications/claude/channel" {
			p, _ := m["params"].(map[string]any)
			return p
		}
		if m["method"] == nil || !strings.HasPrefix(m["method"].(string), "notifications/") {
			c.t.Fatalf("waiting for %s: the channel wrote %v", what, m)
		}
	}
}

// initialize is Claude Code's handshake; it returns the initialize result.
func (c *claude) initialize() map[string]any {
	c.t.Helper()
	res := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "clientInfo": map[string]any{"name": "claude-code", "version": "2.1.81"},
		"capabilities": map[string]any{}}, nil)
	c.send(map[string]any{"method": "notifications/initialized"})
	return res
}

// logLine waits until the channel logs a line containing s.
func (c *claude) logLine(s string) {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l := <-c.lines:
			if strings.Contains(l, s) {
				return
			}
		case <-deadline:
			c.t.Fatalf("the channel logged no line with %q", s)
		}
	}
}

// stop ends the channel with sig and returns the pushes it wrote before
// it ended, in order.
func (c *claude) stop(sig os.Signal) []map[string]any {
	c.t.Helper()
	c.cmd.Process.Signal(sig)
	var pushes []map[string]any
	for m := range c.msgs {
		if m["method"] == "notifications/claude/channel" {
			pushes = append(pushes, m["params"].(map[string]any))
		}
	}
	<-c.done
	return pushes
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
