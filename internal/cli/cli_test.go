package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// run runs the palaver command with env vars and returns its exit status,
// stdout and stderr.
// adminOn runs admin commands on the database file db, as a person at the
// server's machine does, failing the test on a non-zero exit; it returns
// what a command printed.
func adminOn(t *testing.T, ctx context.Context, db string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		code, stdout, stderr := run(t, ctx, nil, append(args, "--database", db)...)
		if code != 0 {
			t.Fatalf("palaver %v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
}

func run(t *testing.T, ctx context.Context, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(ctx, args, strings.NewReader(""), &out, &errOut, func(k string) string { return vars[k] })
	return code, out.String(), errOut.String()
}

// serve starts `palaver serve` on a free port and returns its MCP URL; the
// server stops at the end of the test.
func serve(t *testing.T, db string) string {
	t.Helper()
	url, _ := startServer(t, nil, "--addr", "127.0.0.1:0", "--database", db)
	return url
}

// startServer runs `palaver serve args…` until the end of the test and
// returns the MCP URL it listens on and its log up to the line that says
// so.
func startServer(t *testing.T, vars map[string]string, args ...string) (url, started string) {
	t.Helper()
	url, started, stop := launchServer(t, vars, args...)
	t.Cleanup(stop)
	return url, started
}

// launchServer is startServer with the stop left to the caller: stop ends
// the server and waits until it has, failing the test unless it exits 0.
func launchServer(t *testing.T, vars map[string]string, args ...string) (url, started string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"serve"}, args...), strings.NewReader(""), io.Discard, pw, func(k string) string { return vars[k] })
		pw.Close()
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("serve exited %d", code)
			}
		})
	}
	lines := bufio.NewScanner(pr)
	re := regexp.MustCompile(`msg="palaver is serving" .* addr=(\S+)`)
	for lines.Scan() {
		started += lines.Text() + "\n"
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			go io.Copy(io.Discard, pr) // keep draining the log
			return "http://" + m[1] + "/mcp/", started, stop
		}
	}
	stop()
	t.Fatal("serve ended without saying where it listens:\n" + started)
	return "", "", nil
}

// TestReadmeFlow follows the README: serve, create a person and an agent,
// mint a token, and `palaver call whoami`.
func TestReadmeFlow(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "palaver.db")
	url := serve(t, db)

	resp, err := http.Get(strings.TrimSuffix(url, "/mcp/") + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %v %v", resp, err)
	}
	resp.Body.Close()

	for _, args := range [][]string{
		{"user", "create", "alice", "--name", "Alice", "--database", db},
		{"agent", "create", "alice/planner", "--description", "plans the work", "--database", db},
	} {
		if code, _, stderr := run(t, ctx, nil, args...); code != 0 {
			t.Fatalf("palaver %v: exit %d: %s", args, code, stderr)
		}
	}
	code, stdout, stderr := run(t, ctx, nil, "token", "mint", "--user", "alice", "--agent", "planner", "--name", "laptop", "--database", db)
	if code != 0 {
		t.Fatalf("token mint: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	token := lines[len(lines)-1]
	if !strings.HasPrefix(token, "plv_") || strings.Count(stdout, "plv_") != 1 || strings.Contains(stderr, "plv_") {
		t.Fatalf("the token must be alone on the last line of stdout and nowhere else:\nstdout %q\nstderr %q", stdout, stderr)
	}

	vars := map[string]string{"PALAVER_URL": url, "PALAVER_TOKEN": token}
	code, stdout, stderr = run(t, ctx, vars, "call", "whoami")
	if code != 0 {
		t.Fatalf("call whoami: exit %d: %s", code, stderr)
	}
	var me struct {
		Agent struct{ Handle string } `json:"agent"`
	}
	if err := json.Unmarshal([]byte(stdout), &me); err != nil || me.Agent.Handle != "alice/planner" {
		t.Fatalf("call whoami printed %s", stdout)
	}

	// A tool error prints the result and exits 1; a denial exits 3.
	if code, stdout, _ = run(t, ctx, vars, "call", "read_message", `{"message_id": "msg_nope"}`); code != 1 || !strings.Contains(stdout, `"not_found"`) {
		t.Errorf("call with a tool error: exit %d, %s", code, stdout)
	}
	if code, stdout, _ = run(t, ctx, vars, "call", "open_conversation", `{"handles": ["alice/planner"]}`); code != 3 || !strings.Contains(stdout, `"denied"`) {
		t.Errorf("call with a denial: exit %d, %s", code, stdout)
	}

	// Arguments that are not one JSON object are a usage error, exit 2; an
	// unknown tool is named.
	for _, args := range []string{"notjson", `{"limit": 5} {}`} {
		if code, stdout, stderr = run(t, ctx, vars, "call", "check_inbox", args); code != 2 || stdout != "" || !strings.HasPrefix(stderr, "palaver call: the arguments of check_inbox are not one JSON object") {
			t.Errorf("call with the arguments %s: exit %d, %q %q", args, code, stdout, stderr)
		}
	}
	if code, _, stderr = run(t, ctx, vars, "call", "nosuch"); code != 1 || !strings.Contains(stderr, `no tool is named "nosuch"; list the tools with`) {
		t.Errorf("call of an unknown tool: exit %d, %q", code, stderr)
	}

	// A person's token serves the rooms profile's user side, and only it;
	// the rooms profile has no wait.
	code, stdout, stderr = run(t, ctx, nil, "token", "mint", "--user", "alice", "--owner", "--database", db)
	if code != 0 {
		t.Fatalf("token mint --owner: exit %d: %s", code, stderr)
	}
	person := strings.TrimSpace(stdout[strings.LastIndex(strings.TrimSpace(stdout), "\n")+1:])
	rooms := strings.TrimSuffix(url, "/") + "/rooms/"
	if code, stdout, stderr = run(t, ctx, map[string]string{"PALAVER_URL": rooms, "PALAVER_TOKEN": person + "\n"}, "call", "health_check"); code != 0 || !strings.Contains(stdout, `"connected_as": "alice"`) {
		t.Errorf("call health_check on the rooms profile with a person's token: exit %d %q %q", code, stdout, stderr)
	}
	if code, _, stderr = run(t, ctx, map[string]string{"PALAVER_URL": url, "PALAVER_TOKEN": person}, "call", "whoami"); code == 0 || !strings.Contains(stderr, "the rooms profile's user side (PALAVER_URL=…/mcp/rooms/)") {
		t.Errorf("a person's token on the default profile: exit %d %q", code, stderr)
	}
	if code, _, stderr = run(t, ctx, map[string]string{"PALAVER_URL": rooms, "PALAVER_TOKEN": token}, "wait", "--once"); code != 1 || !strings.Contains(stderr, "has no event stream") {
		t.Errorf("wait on the rooms profile: exit %d %q", code, stderr)
	}

	// The token list shows it without the secret; revoking ends it.
	code, stdout, _ = run(t, ctx, nil, "token", "list", "--user", "alice", "--database", db)
	if code != 0 || strings.Contains(stdout, "plv_") || !strings.Contains(stdout, "laptop") {
		t.Fatalf("token list: exit %d:\n%s", code, stdout)
	}
	id := regexp.MustCompile(`tok_\w+`).FindString(stdout)
	if code, _, _ = run(t, ctx, nil, "token", "revoke", id, "--database", db); code != 0 {
		t.Fatalf("token revoke: exit %d", code)
	}
	if code, _, stderr = run(t, ctx, vars, "call", "whoami"); code == 0 || !strings.Contains(stderr, "refused the token in PALAVER_TOKEN: the token was revoked") {
		t.Fatalf("call with a revoked token: exit %d: %s", code, stderr)
	}
}

// TestSecondServeRefused: a second server on the same database refuses to
// start, with a clear message (§13).
func TestSecondServeRefused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "palaver.db")
	serve(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, _, stderr := run(t, ctx, nil, "serve", "--addr", "127.0.0.1:0", "--database", db)
	if code != 1 || !strings.Contains(stderr, "another palaver server is already using it") {
		t.Fatalf("second serve: exit %d: %s", code, stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	ctx := context.Background()
	db := migrated(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"token", "mint", "--user", "alice", "--agent", "x", "--owner", "--database", db}, 2, "not both"},
		{[]string{"token", "mint", "--user", "alice", "--agent", "x", "--scope", "msg:admin", "--database", db}, 1, "unknown scope"},
		{[]string{"token", "mint", "--user", "alice", "--agent", "x", "--expires", "soon", "--database", db}, 1, "30d"},
		{[]string{"serve", "--addr", "nowhere"}, 1, "host:port"},
		{[]string{"call", "whoami"}, 1, "PALAVER_TOKEN is not set"},
	} {
		code, _, stderr := run(t, ctx, nil, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("palaver %v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// ownerAndAgent runs the server on a fresh database with alice and her
// agent alice/planner. admin runs an admin command on the database (failing
// the test unless it succeeds); call calls a tool as the planner through
// the server and returns its JSON result; vars is the planner's client
// environment.
func ownerAndAgent(t *testing.T) (admin func(args ...string) string, call func(tool, args string) map[string]any, vars map[string]string) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "palaver.db")
	url := serve(t, db)
	admin = func(args ...string) string {
		t.Helper()
		code, stdout, stderr := run(t, ctx, nil, append(args, "--database", db)...)
		if code != 0 {
			t.Fatalf("palaver %v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	admin("user", "create", "alice")
	admin("agent", "create", "alice/planner")
	lines := strings.Split(strings.TrimSpace(admin("token", "mint", "--user", "alice", "--agent", "planner")), "\n")
	vars = map[string]string{"PALAVER_URL": url, "PALAVER_TOKEN": lines[len(lines)-1], "PALAVER_DATABASE": db}
	call = func(tool, args string) map[string]any {
		t.Helper()
		_, stdout, stderr := run(t, ctx, vars, "call", tool, args)
		var out map[string]any
		if json.Unmarshal([]byte(stdout), &out) != nil {
			t.Fatalf("call %s: %s %s", tool, stdout, stderr)
		}
		return out
	}
	return admin, call, vars
}

// TestOwnerFlow: an owner reviews an agent's messages and answers its
// question from the command line while the server runs; the agent hears
// the answer through the server (a wait wakes for another process's commit).
func TestOwnerFlow(t *testing.T) {
	ctx := context.Background()
	admin, call, vars := ownerAndAgent(t)
	admin("agent", "create", "alice/reviewer")

	admin("agent", "mode", "alice/planner", "review")
	conv := call("open_conversation", `{"handles": ["alice/reviewer"]}`)["conversation_id"].(string)
	held := call("send_message", `{"conversation_id": "`+conv+`", "body": "Ship it?"}`)
	if held["status"] != "held" {
		t.Fatalf("send in review mode: %v", held)
	}
	asked := call("ask_owner", `{"question": "Ship on Friday?", "options": ["yes", "no"]}`)
	list := admin("approvals", "list", "--user", "alice")
	if !strings.Contains(list, held["message_id"].(string)) || !strings.Contains(list, asked["question_id"].(string)) || !strings.Contains(list, "[yes | no]") {
		t.Fatalf("approvals list:\n%s", list)
	}
	if out := admin("approvals", "approve", held["message_id"].(string), "--user", "alice", "--edit", "Ship it on Friday."); !strings.Contains(out, "owner_edited") {
		t.Fatalf("approve --edit: %s", out)
	}

	cursor := call("whoami", "")["latest_cursor"].(string)
	done := make(chan string, 1)
	go func() {
		_, stdout, _ := run(t, ctx, vars, "wait", "--once", "--cursor", cursor, "--timeout", "30")
		done <- stdout
	}()
	admin("approvals", "answer", asked["question_id"].(string), "YES", "--user", "alice")
	select {
	case got := <-done:
		if !strings.Contains(got, `"type":"owner.answer"`) || !strings.Contains(got, `"answer":"yes"`) {
			t.Fatalf("palaver wait printed %s", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent's wait did not hear the answer")
	}
	if inbox := call("check_inbox", ""); len(inbox["answers"].([]any)) != 1 {
		t.Fatalf("check_inbox answers: %v", inbox)
	}
	// A direct conversation is not closed, here as over REST (§4).
	code, _, stderr := run(t, ctx, vars, "conversation", "close", conv)
	if code != 1 || !strings.Contains(stderr, "a direct conversation is not closed") {
		t.Fatalf("conversation close of a direct conversation: exit %d, %q", code, stderr)
	}
}

// TestAgentPublicCommand: palaver agent public makes bob's agent public,
// so alice's planner opens a conversation with it and speaks without any
// contact or grant, while the server runs; agent list shows it; --off
// makes it private again and the planner's next send is denied (§1, §3).
func TestAgentPublicCommand(t *testing.T) {
	admin, call, _ := ownerAndAgent(t)
	admin("user", "create", "bob")
	admin("agent", "create", "bob/desk", "--description", "answers questions")
	if got := call("open_conversation", `{"handles": ["bob/desk"]}`); got["status"] != "denied" {
		t.Fatalf("opening with bob's private desk: %v, want denied", got)
	}
	if out := admin("agent", "public", "--user", "bob", "--agent", "desk"); out != "bob/desk is now public: anyone on this server can add it to a conversation and talk to it without a grant\n" {
		t.Fatalf("agent public printed %q", out)
	}
	if list := admin("agent", "list", "--user", "bob"); !regexp.MustCompile(`(?m)^bob/desk\s+active\s+public\s`).MatchString(list) {
		t.Fatalf("agent list does not show the desk public:\n%s", list)
	}
	conv, _ := call("open_conversation", `{"handles": ["bob/desk"]}`)["conversation_id"].(string)
	if conv == "" {
		t.Fatal("opening with bob's public desk: no conversation")
	}
	if got := call("send_message", `{"conversation_id": "`+conv+`", "body": "hello desk"}`); got["status"] != "sent" {
		t.Fatalf("planner → public desk: %v", got)
	}
	if out := admin("agent", "public", "--user", "bob", "--agent", "desk", "--off"); out != "bob/desk is now private\n" {
		t.Fatalf("agent public --off printed %q", out)
	}
	if list := admin("agent", "list", "--user", "bob"); strings.Contains(list, "public") {
		t.Fatalf("agent list still shows the desk public:\n%s", list)
	}
	if got := call("send_message", `{"conversation_id": "`+conv+`", "body": "still there?"}`); got["status"] != "denied" {
		t.Fatalf("a send to the desk made private: %v, want denied", got)
	}
}

// TestProjectCommands: the owner's side of projects from the command line
// while the server runs, with the agent calling the project tools.
func TestProjectCommands(t *testing.T) {
	admin, call, _ := ownerAndAgent(t)

	created := admin("project", "create", "Launch", "--user", "alice", "--description", "ship v1")
	id := regexp.MustCompile(`proj_[0-9a-z]{26}`).FindString(created)
	if id == "" {
		t.Fatalf("project create printed %q", created)
	}
	if got := call("get_project", `{"project_id": "`+id+`"}`); got["error"] == nil {
		t.Fatalf("get_project before the agent is brought in: %v, want not_found", got)
	}
	admin("project", "add-agent", id, "planner", "--user", "alice", "--access", "listen")
	thread := call("open_thread", `{"project_id": "`+id+`", "title": "Plan"}`)
	if thread["status"] != "denied" {
		t.Fatalf("a listening agent starting a thread: %v, want denied", thread)
	}
	admin("project", "add-agent", id, "planner", "--user", "alice")
	thread = call("open_thread", `{"project_id": "`+id+`", "title": "Plan"}`)
	call("add_item", `{"project_id": "`+id+`", "title": "Write the notes"}`)
	show := admin("project", "show", id, "--user", "alice")
	for _, want := range []string{"alice/planner", "speak", thread["conversation_id"].(string), "Plan (0 messages)", "[open] task: Write the notes"} {
		if !strings.Contains(show, want) {
			t.Fatalf("project show lacks %q:\n%s", want, show)
		}
	}
	admin("project", "update", id, "--user", "alice", "--cap", "off")
	if got := call("get_project", `{"project_id": "`+id+`"}`); got["status"] != "denied" || !strings.HasPrefix(got["reason"].(string), "off:") {
		t.Fatalf("get_project with agents off: %v", got)
	}

	proposal := call("create_project", `{"name": "Website", "reason": "the site needs a home"}`)
	list := admin("approvals", "list", "--user", "alice")
	if !strings.Contains(list, proposal["request_id"].(string)) || !strings.Contains(list, `proposes project "Website"`) {
		t.Fatalf("approvals list:\n%s", list)
	}
	if out := admin("approvals", "approve", proposal["request_id"].(string), "--user", "alice"); !strings.Contains(out, "approved proj_") {
		t.Fatalf("approving the proposal printed %s", out)
	}
	if projects := admin("project", "list", "--user", "alice"); !strings.Contains(projects, "Website") || !strings.Contains(projects, "Home") {
		t.Fatalf("project list:\n%s", projects)
	}
}

// TestUserCommands: the first person made on the command line is the
// admin and is told how to sign in; user password (from stdin) lets them
// sign in to the dashboard the server serves; user invite prints a
// one-time link; user list shows who is the admin.
func TestUserCommands(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "palaver.db")
	vars := map[string]string{"PALAVER_DATABASE": db}
	if code, _, errOut := run(t, ctx, vars, "migrate"); code != 0 {
		t.Fatalf("migrate: %d %s", code, errOut)
	}
	if code, out, errOut := run(t, ctx, vars, "user", "create", "alice", "--name", "Alice"); code != 0 || !strings.Contains(out, "palaver user password alice") {
		t.Fatalf("user create: %d %s %s", code, out, errOut)
	}
	password := func(stdin string) (int, string) {
		var out, errOut bytes.Buffer
		code := Main(ctx, []string{"user", "password", "alice"}, strings.NewReader(stdin), &out, &errOut, func(k string) string { return vars[k] })
		return code, out.String() + errOut.String()
	}
	if code, out := password("short\n"); code == 0 || !strings.Contains(out, "at least 10 characters") {
		t.Fatalf("a short password: %d %s", code, out)
	}
	if code, out := password(""); code == 0 || !strings.Contains(out, "no password was given on stdin") {
		t.Fatalf("no password: %d %s", code, out)
	}
	if code, out := password("correct horse battery\n"); code != 0 || !strings.Contains(out, "can sign in") {
		t.Fatalf("user password: %d %s", code, out)
	}
	code, out, errOut := run(t, ctx, vars, "user", "invite", "--base-url", "https://palaver.example.com")
	if code != 0 || !regexp.MustCompile(`^https://palaver\.example\.com/signup\?invite=pli_\w+\n$`).MatchString(out) || !strings.Contains(errOut, "makes one account") {
		t.Fatalf("user invite: %d %q %q", code, out, errOut)
	}
	if code, out, _ := run(t, ctx, vars, "user", "list"); code != 0 || !regexp.MustCompile(`alice\s+Alice\s+yes`).MatchString(out) {
		t.Fatalf("user list: %d %s", code, out)
	}

	base := strings.TrimSuffix(serve(t, db), "/mcp/")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(base+"/signin", map[string][]string{"handle": {"alice"}, "password": {"correct horse battery"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(resp.Cookies()) == 0 {
		t.Fatalf("signing in to the dashboard: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestFlagsBeforeCommand: a flag given before the command is read as the
// command's own; one with no command after it is refused in one line that
// says where it goes.
func TestFlagsBeforeCommand(t *testing.T) {
	ctx := context.Background()
	db := migrated(t)
	if code, out, errOut := run(t, ctx, nil, "--database", db, "user", "create", "alice"); code != 0 || !strings.Contains(out, "created user alice") {
		t.Fatalf("palaver --database DB user create alice: exit %d, %q %q", code, out, errOut)
	}
	if code, out, errOut := run(t, ctx, nil, "--database="+db, "user", "list"); code != 0 || !strings.Contains(out, "alice") {
		t.Fatalf("palaver --database=DB user list: exit %d, %q %q", code, out, errOut)
	}
	code, _, errOut := run(t, ctx, nil, "--database", db)
	if want := "palaver: --database is a flag of a command: give it after the command, like palaver serve --database\n"; code != 2 || errOut != want {
		t.Fatalf("palaver --database DB: exit %d, stderr %q; want exit 2 and %q", code, errOut, want)
	}
}

// TestInviteLinkNamesTheServer: palaver user invite links to the URL the
// server recorded when it started, not the default port; before any server
// started it says the link assumes the default.
func TestInviteLinkNamesTheServer(t *testing.T) {
	ctx := context.Background()
	db := migrated(t)
	_, out, errOut := run(t, ctx, nil, "user", "invite", "--database", db)
	if !strings.HasPrefix(out, "http://127.0.0.1:8420/signup?invite=") || !strings.Contains(errOut, "pass --base-url") {
		t.Fatalf("invite before any server started: %q %q; want the default address and a word on --base-url", out, errOut)
	}
	base := strings.TrimSuffix(serve(t, db), "/mcp/")
	_, out, errOut = run(t, ctx, nil, "user", "invite", "--database", db)
	if !strings.HasPrefix(out, base+"/signup?invite=pli_") || strings.Contains(errOut, "--base-url") {
		t.Fatalf("invite while the server runs at %s: %q %q", base, out, errOut)
	}
	_, out, _ = run(t, ctx, map[string]string{"PALAVER_BASE_URL": "https://palaver.example.com"}, "user", "invite", "--database", db)
	if !strings.HasPrefix(out, "https://palaver.example.com/signup?invite=") {
		t.Fatalf("invite with PALAVER_BASE_URL: %q", out)
	}
}

// TestPermissionFromTheCommandLine (§19): a session's permission request
// is listed by palaver approvals with its tool and session, allowed there,
// and the session's wait hears the verdict through the server.
func TestPermissionFromTheCommandLine(t *testing.T) {
	ctx := context.Background()
	admin, call, vars := ownerAndAgent(t)
	vars["PALAVER_INSTANCE"] = "desk"
	cursor := call("whoami", "")["latest_cursor"].(string)
	asked := call("request_permission", `{"request_id": "tbxkq", "tool_name": "Bash", "description": "List the files", "input_preview": "{\"command\":\"ls\"}"}`)
	id, _ := asked["permission_id"].(string)
	list := admin("approvals", "list", "--user", "alice")
	if !strings.Contains(list, id) || !strings.Contains(list, "permission") || !strings.Contains(list, `session desk asks to use Bash: List the files {"command":"ls"}`) {
		t.Fatalf("approvals list:\n%s", list)
	}
	if out := admin("approvals", "approve", id, "--user", "alice"); out != "permission request "+id+" (tbxkq, Bash): allowed\n" {
		t.Errorf("approvals approve: %q", out)
	}
	_, stdout, stderr := run(t, ctx, vars, "wait", "--once", "--cursor", cursor, "--timeout", "30")
	var ev struct {
		Type   string         `json:"type"`
		Data   map[string]any `json:"data"`
		ForYou bool           `json:"for_you"`
	}
	if err := json.Unmarshal([]byte(strings.Split(stdout, "\n")[0]), &ev); err != nil || ev.Type != "permission.decided" ||
		ev.Data["request_id"] != "tbxkq" || ev.Data["behavior"] != "allow" || !ev.ForYou {
		t.Errorf("the session's wait: %s %s", stdout, stderr)
	}
}
