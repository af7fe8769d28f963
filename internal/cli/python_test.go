package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/mcpclient"
)

// TestServedPythonClient: GET /palaver.py serves clients/palaver.py as it
// is kept, without a token; that script, run by python3 against the real
// server, lists the tools of each profile, calls tools (with
// PALAVER_INSTANCE passed as instance), follows the event stream resuming
// from each returned cursor, and says what went wrong with the exit status
// palaver call uses.
func TestServedPythonClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := filepath.Join(t.TempDir(), "palaver.db")
	mcpURL := serve(t, db)
	base := strings.TrimSuffix(mcpURL, "/mcp/")

	resp, err := http.Get(base + "/palaver.py")
	if err != nil {
		t.Fatal(err)
	}
	served, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	kept, err := os.ReadFile("../../clients/palaver.py")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/x-python; charset=utf-8" || string(served) != string(kept) {
		t.Fatalf("GET /palaver.py: %s, Content-Type %q, %d bytes; want 200, text/x-python and the %d bytes of clients/palaver.py",
			resp.Status, resp.Header.Get("Content-Type"), len(served), len(kept))
	}

	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the served client is not run")
	}
	script := filepath.Join(t.TempDir(), "palaver.py")
	if err := os.WriteFile(script, served, 0o644); err != nil {
		t.Fatal(err)
	}

	tokens := map[string]string{}
	for _, args := range [][]string{
		{"user", "create", "alice", "--database", db},
		{"agent", "create", "alice/planner", "--database", db},
		{"agent", "create", "alice/reviewer", "--database", db},
	} {
		if code, _, stderr := run(t, ctx, nil, args...); code != 0 {
			t.Fatalf("palaver %v: exit %d: %s", args, code, stderr)
		}
	}
	for _, slug := range []string{"planner", "reviewer"} {
		code, stdout, stderr := run(t, ctx, nil, "token", "mint", "--user", "alice", "--agent", slug, "--database", db)
		if code != 0 {
			t.Fatalf("token mint: exit %d: %s", code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		tokens[slug] = lines[len(lines)-1]
	}
	code, stdout, stderr := run(t, ctx, nil, "token", "mint", "--user", "alice", "--owner", "--database", db)
	if code != 0 {
		t.Fatalf("token mint --owner: exit %d: %s", code, stderr)
	}
	tokens["alice"] = strings.TrimSpace(stdout[strings.LastIndex(strings.TrimSpace(stdout), "\n")+1:])
	env := func(who string, extra ...string) []string {
		return append([]string{"PALAVER_URL=" + base, "PALAVER_TOKEN=" + tokens[who], "PYTHONIOENCODING=utf-8", "PYTHONDONTWRITEBYTECODE=1"}, extra...)
	}
	py := func(env []string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, python, append([]string{script}, args...)...)
		cmd.Env = env
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errOut.String()
	}
	jsonOf := func(s string) map[string]any {
		t.Helper()
		var v map[string]any
		if err := json.Unmarshal([]byte(s), &v); err != nil || !strings.HasSuffix(s, "}\n") || strings.Count(s, "\n") != 1 {
			t.Fatalf("want one JSON line, got %q", s)
		}
		return v
	}
	// The Go SDK's client, to say what the server answers.
	sdk := func(who, path string) *mcp.ClientSession {
		s, err := mcpclient.NewEnv(base+path, tokens[who], "").Connect(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	reviewer := sdk("reviewer", "/mcp/")

	// tools, in each profile: name and title, as tools/list has them.
	for _, p := range []struct{ flags []string }{{nil}, {[]string{"--profile", "inbox"}}, {[]string{"--path", "/mcp/inbox/"}}} {
		path := "/mcp/"
		if p.flags != nil {
			path = "/mcp/inbox/"
		}
		list, err := sdk("reviewer", path).ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for _, tool := range list.Tools {
			fmt.Fprintf(&want, "%s\t%s\n", tool.Name, tool.Title)
		}
		code, stdout, stderr := py(env("reviewer"), append(p.flags, "tools")...)
		if diff := cmp.Diff(want.String(), stdout); code != 0 || diff != "" {
			t.Errorf("palaver.py %v tools: exit %d %s (-want +got):\n%s", p.flags, code, stderr, diff)
		}
	}

	// whoami with PALAVER_INSTANCE names the session; its cursor is where
	// the wait below starts.
	code, stdout, stderr = py(env("reviewer", "PALAVER_INSTANCE=laptop"), "call", "whoami")
	me := jsonOf(stdout)
	if code != 0 || me["instance"] != "laptop" {
		t.Fatalf("call whoami with PALAVER_INSTANCE=laptop: exit %d %s: instance %v", code, stderr, me["instance"])
	}
	start := me["latest_cursor"].(string)

	code, stdout, _ = py(env("planner"), "call", "open_conversation", `{"handles": ["alice/reviewer"]}`)
	conv, _ := jsonOf(stdout)["conversation_id"].(string)
	if code != 0 || conv == "" {
		t.Fatalf("call open_conversation: exit %d %s", code, stdout)
	}
	send := func(body string) map[string]any {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"conversation_id": conv, "body": body})
		code, stdout, stderr := py(env("planner"), "call", "send_message", string(args))
		sent := jsonOf(stdout)
		if code != 0 || sent["status"] != "sent" {
			t.Fatalf("call send_message: exit %d %s %s", code, stdout, stderr)
		}
		return sent
	}
	sent := send("Please review docs/plan.md")
	code, stdout, stderr = py(env("reviewer"), "call", "check_inbox")
	want := fmt.Sprintf(`{"answers":[],"messages":[{"message_id":%q,"conversation_id":%q,"seq":1,"sender":{"handle":"alice/planner"},"summary":"Please review docs/plan.md"}],"more":0,"total":1,"untrusted":true}`+"\n",
		sent["message_id"], conv)
	if diff := cmp.Diff(want, stdout); code != 0 || diff != "" {
		t.Errorf("call check_inbox: exit %d %s (-want +got):\n%s", code, stderr, diff)
	}

	// wait prints every event as the server has it, one JSON line each, and
	// resumes from the cursor each wait returned: the second send comes
	// alone.
	waitFrom := func(cursor string) []any {
		t.Helper()
		r, err := reviewer.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_messages", Arguments: map[string]any{"cursor": cursor, "timeout_s": 0}})
		if err != nil || r.IsError {
			t.Fatalf("wait_for_messages: %v %v", err, r)
		}
		return r.StructuredContent.(map[string]any)["events"].([]any)
	}
	cmd := exec.CommandContext(ctx, python, script, "wait", "--cursor", start, "--timeout", "30")
	cmd.Env = env("reviewer")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(pipe)
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("wait printed no more lines: %v", lines.Err())
		}
		return jsonOf(lines.Text() + "\n")
	}
	events := waitFrom(start) // conversation.opened, message.new
	if len(events) != 2 {
		t.Fatalf("events after whoami's cursor: %v", events)
	}
	for i, ev := range events {
		if diff := cmp.Diff(ev, any(next())); diff != "" {
			t.Errorf("wait's line %d (-server +palaver.py):\n%s", i+1, diff)
		}
	}
	last := events[1].(map[string]any)["cursor"].(string)
	send("Ready to ship?")
	got := next()
	events = waitFrom(last)
	if diff := cmp.Diff(events, []any{got}); len(events) != 1 || diff != "" {
		t.Errorf("wait's line after the second send (-server +palaver.py):\n%s", diff)
	}
	newest := got["cursor"].(string)
	code, stdout, _ = py(env("reviewer"), "wait", "--once", "--timeout", "0", "--cursor", newest)
	if want := fmt.Sprintf(`{"cursor":%q,"timed_out":true}`+"\n", newest); code != 0 || stdout != want {
		t.Errorf("wait --once with nothing new: exit %d %q, want %q", code, stdout, want)
	}

	// Errors: what went wrong on stderr, and palaver call's exit statuses.
	for _, tc := range []struct {
		name   string
		env    []string
		args   []string
		code   int
		stdout string // a substring; "" for nothing printed
		stderr string // the start of stderr
	}{
		{"a tool error", env("reviewer"), []string{"call", "read_message", `{"message_id": "msg_nope"}`}, 1, `{"error":{"code":"not_found",`, "palaver.py: read_message: not_found: "},
		{"a denial", env("planner"), []string{"call", "open_conversation", `{"handles": ["alice/planner"]}`}, 3, `"status":"denied"`, "palaver.py: open_conversation: denied: "},
		{"an unknown token", []string{"PALAVER_URL=" + base, "PALAVER_TOKEN=" + tokens["planner"][:len(tokens["planner"])-6] + "000000"}, []string{"tools"}, 1, "",
			"palaver.py: the server at " + base + "/mcp/ refused the token in PALAVER_TOKEN: the token's checksum does not match: it was mistyped or cut\n"},
		{"no token", []string{"PALAVER_URL=" + base}, []string{"tools"}, 2, "", "palaver.py: PALAVER_TOKEN is not set: "},
		{"arguments not JSON", env("reviewer"), []string{"call", "check_inbox", "{limit: 5}"}, 2, "", "palaver.py: the arguments of check_inbox are not JSON: "},
		{"an unknown profile", env("reviewer"), []string{"--profile", "lobby", "tools"}, 2, "", "palaver.py: --profile lobby: give one of default, inbox, rooms\n"},
		{"the rooms profile", env("reviewer"), []string{"--profile", "rooms", "tools"}, 0, "get_agent_next_message\tNext message", ""},
		{"the rooms profile's user side", env("alice"), []string{"--profile", "rooms", "call", "health_check"}, 0, `"connected_as":"alice"`, ""},
		{"a person's token elsewhere", env("alice"), []string{"tools"}, 2, "", "palaver.py: PALAVER_TOKEN holds a person's API token (plu_...), which serves the REST API and the rooms profile's user side"},
		{"no wait in the rooms profile", env("reviewer"), []string{"--profile", "rooms", "wait"}, 2, "", "palaver.py: the rooms profile has no event stream: poll get_agent_next_message"},
		{"no server", []string{"PALAVER_URL=http://127.0.0.1:1", "PALAVER_TOKEN=" + tokens["planner"]}, []string{"tools"}, 1, "", "palaver.py: cannot reach a Palaver server at http://127.0.0.1:1/mcp/: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := py(tc.env, tc.args...)
			if code != tc.code || (tc.stdout == "") != (stdout == "") || !strings.Contains(stdout, tc.stdout) || !strings.HasPrefix(stderr, tc.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr starting %q", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestPythonWaitAcrossRestart: palaver.py wait, like palaver wait, prints
// each timed-out wait's cursor and outlives a restart of the server on the
// same address: it says on stderr that it is reconnecting and from which
// cursor, and goes on from it, so the next event is printed once.
func TestPythonWaitAcrossRestart(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "palaver.db")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	url, _, stop := launchServer(t, nil, "--addr", addr, "--database", db)
	admin := adminOn(t, ctx, db)
	admin("user", "create", "alice")
	admin("agent", "create", "alice/planner")
	admin("agent", "create", "alice/reviewer")
	minted := strings.Split(strings.TrimSpace(admin("token", "mint", "--user", "alice", "--agent", "planner")), "\n")
	token := minted[len(minted)-1]
	_, opened, _ := run(t, ctx, map[string]string{"PALAVER_URL": url, "PALAVER_TOKEN": token}, "call", "open_conversation", `{"handles": ["alice/reviewer"]}`)
	var conv struct {
		ID string `json:"conversation_id"`
	}
	if json.Unmarshal([]byte(opened), &conv) != nil || conv.ID == "" {
		t.Fatalf("open_conversation: %s", opened)
	}

	cmd := exec.Command(python, "../../clients/palaver.py", "wait", "--timeout", "1")
	cmd.Env = []string{"PALAVER_URL=" + strings.TrimSuffix(url, "/mcp/"), "PALAVER_TOKEN=" + token, "PYTHONDONTWRITEBYTECODE=1"}
	outR, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	stdout, stderr := lines(outR), lines(errR)

	first(t, stdout, `"timed_out":true`)
	admin("conversation", "post", conv.ID, "before the restart", "--user", "alice")
	line, _ := next(t, stdout, "palaver.py wait", `"before the restart"`)
	var ev struct {
		Cursor string `json:"cursor"`
	}
	if json.Unmarshal([]byte(line), &ev) != nil || ev.Cursor == "" {
		t.Fatalf("an event line without a cursor: %s", line)
	}
	next(t, stdout, "palaver.py wait", `{"cursor":"`+ev.Cursor+`","timed_out":true}`)

	stop()
	lost, _ := next(t, stderr, "palaver.py wait's stderr", "palaver.py: wait: lost the server")
	if want := "; reconnecting, to go on after cursor " + ev.Cursor; !strings.HasSuffix(lost, want) {
		t.Errorf("stderr said %q, want it to end %q", lost, want)
	}
	launchServer(t, nil, "--addr", addr, "--database", db)
	admin("conversation", "post", conv.ID, "after the restart", "--user", "alice")
	next(t, stderr, "palaver.py wait's stderr", "palaver.py: wait: reconnected to ")
	_, skipped := next(t, stdout, "palaver.py wait", `"after the restart"`)
	for _, l := range skipped {
		if strings.Contains(l, "before the restart") {
			t.Errorf("an event came again after the restart: %s", l)
		}
	}
}
