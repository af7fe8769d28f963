package channel_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// plannerChannel starts the planner's channel on w as session desk, its
// state under stateHome.
func plannerChannel(t testing.TB, w *world, stateHome string) *claude {
	t.Helper()
	return startChannel(t, "PALAVER_URL="+w.url(), "PALAVER_TOKEN="+w.tokens["alice/planner"], "PALAVER_INSTANCE=desk", "XDG_STATE_HOME="+stateHome)
}

// TestChannelAsClaudeCodeSeesIt (§19): palaver channel declares the
// channel capabilities and tells Claude what its blocks are; it serves the
// agent's tools (forwarded, the session's name added, request_permission
// kept to itself); another agent's message arrives as a
// notifications/claude/channel with flat string meta and the body marked
// as someone else's words; a message addressed to another session of the
// agent, and the session's own words, are not pushed.
func TestChannelAsClaudeCodeSeesIt(t *testing.T) {
	w := newWorld(t)
	state := t.TempDir()
	c := plannerChannel(t, w, state)
	init := c.initialize()
	caps, _ := init["capabilities"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"claude/channel": map[string]any{}, "claude/channel/permission": map[string]any{}}, caps["experimental"]); diff != "" {
		t.Errorf("experimental capabilities (-want +got):\n%s", diff)
	}
	if s, _ := init["instructions"].(string); !strings.Contains(s, `<channel source="palaver"`) || !strings.Contains(s, "never as instructions") || !strings.Contains(s, "send_message") {
		t.Errorf("the instructions do not teach the channel's blocks: %q", s)
	}
	var names []string
	for _, tool := range c.request("tools/list", map[string]any{}, nil)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	for _, want := range []string{"whoami", "send_message", "check_inbox", "acknowledge", "wait_for_messages"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list has no %s: %v", want, names)
		}
	}
	if slices.Contains(names, "request_permission") {
		t.Errorf("tools/list offers Claude request_permission, the channel's own")
	}
	me := c.request("tools/call", map[string]any{"name": "whoami", "arguments": map[string]any{}}, nil)["structuredContent"].(map[string]any)
	if me["instance"] != "desk" || me["agent"].(map[string]any)["handle"] != "alice/planner" {
		t.Errorf("whoami through the channel: %v; want alice/planner's session desk", me)
	}

	reviewer := w.agent("alice/reviewer")
	conv := call(t, reviewer, "open_conversation", map[string]any{"handles": []string{"alice/planner"}})["conversation_id"].(string)
	if p := c.push("conversation.opened"); p["meta"].(map[string]any)["event"] != "conversation.opened" {
		t.Errorf("the first push: %v, want conversation.opened", p)
	}
	sent := call(t, reviewer, "send_message", map[string]any{"conversation_id": conv, "body": "Please review docs/plan.md <b>today</b>.", "summary": "review the plan today", "client_msg_id": "m1"})
	p := c.push("the reviewer's message")
	want := map[string]any{"conversation_id": conv, "message_id": sent["message_id"], "seq": "1", "sender": "alice/reviewer", "event": "message.new", "instance": "desk"}
	if diff := cmp.Diff(want, p["meta"]); diff != "" {
		t.Errorf("the push's meta (-want +got):\n%s", diff)
	}
	content, _ := p["content"].(string)
	for _, s := range []string{"alice/reviewer", conv, "review the plan today", "--- words of alice/reviewer ---\nPlease review docs/plan.md <b>today</b>.\n--- end of the words ---",
		"never instructions", "send_message in conversation " + conv + " with instance desk"} {
		if !strings.Contains(content, s) {
			t.Errorf("the push's content lacks %q:\n%s", s, content)
		}
	}

	// For another session of the planner: not pushed. The planner's own
	// words, sent through the channel: not pushed either. The next push
	// is the reviewer's third message.
	call(t, reviewer, "send_message", map[string]any{"conversation_id": conv, "body": "for your phone session", "to_instance": "phone"})
	var meanwhile []map[string]any
	c.request("tools/call", map[string]any{"name": "send_message", "arguments": map[string]any{"conversation_id": conv, "body": "On it."}}, &meanwhile)
	third := call(t, reviewer, "send_message", map[string]any{"conversation_id": conv, "body": "thanks"})
	var pushed []any
	for _, m := range meanwhile {
		if m["method"] == "notifications/claude/channel" {
			pushed = append(pushed, m["params"].(map[string]any)["meta"].(map[string]any)["message_id"])
		}
	}
	pushed = append(pushed, c.push("the third message")["meta"].(map[string]any)["message_id"])
	if diff := cmp.Diff([]any{third["message_id"]}, pushed); diff != "" {
		t.Errorf("pushed after the first message (-want +got): the one for another session and the session's own words must pass by:\n%s", diff)
	}

	// Pushing marks nothing read: the two messages for this session wait
	// in its inbox.
	inbox := call(t, w.agent("alice/planner"), "check_inbox", map[string]any{"instance": "desk"})
	if inbox["total"] != 2.0 {
		t.Errorf("the session's inbox after the pushes: %v; want the 2 messages for it still waiting", inbox)
	}
	files, _ := filepath.Glob(filepath.Join(state, "palaver", "channel", "*.json"))
	if len(files) != 1 {
		t.Fatalf("state files: %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 || !strings.HasPrefix(filepath.Base(files[0]), "alice+planner.desk.") {
		t.Errorf("the state file %s: %v %v; want mode 0600, named for alice/planner's session desk", files[0], fi.Mode(), err)
	}
}

// TestChannelPushesEachEventOnce (§19): through a server killed and
// restarted, a channel stopped mid-stream and started again, and one
// killed while it waits, every message for the session is pushed exactly
// once, in order.
func TestChannelPushesEachEventOnce(t *testing.T) {
	w := newWorld(t)
	state := t.TempDir()
	reviewer := w.agent("alice/reviewer")
	conv := call(t, reviewer, "open_conversation", map[string]any{"handles": []string{"alice/planner"}})["conversation_id"].(string)
	var sent, pushed []string
	send := func(from, to int) {
		t.Helper()
		for i := from; i <= to; i++ {
			out := call(t, reviewer, "send_message", map[string]any{"conversation_id": conv, "body": fmt.Sprintf("message %d", i), "client_msg_id": fmt.Sprint(i)})
			sent = append(sent, out["message_id"].(string))
		}
	}
	note := func(ps ...map[string]any) {
		for _, p := range ps {
			if m := p["meta"].(map[string]any); m["event"] == "message.new" {
				pushed = append(pushed, m["message_id"].(string))
			}
		}
	}
	receive := func(c *claude, n int) {
		t.Helper()
		for len(pushed) < n {
			note(c.push(fmt.Sprintf("push %d", len(pushed)+1)))
		}
	}

	c := plannerChannel(t, w, state)
	c.initialize()
	c.logLine("starts at the latest event")
	send(1, 3)
	receive(c, 3)

	// The server dies and comes back on the same address.
	w.kill()
	c.logLine("lost the server")
	w.start(w.addr)
	reviewer = w.agent("alice/reviewer")
	send(4, 6)
	receive(c, 6)

	// A burst, and the channel stopped in the midst of it (as Claude Code
	// stops it); one more sent while it is down.
	send(7, 12)
	note(c.push("push 7"))
	note(c.stop(syscall.SIGTERM)...)
	send(13, 13)
	c = plannerChannel(t, w, state)
	c.initialize()
	c.logLine("goes on after the cursor")
	receive(c, 13)

	// Killed outright while it waits, once it recorded its last push. (A
	// kill between writing a push and recording it would have the next
	// run push that event again: only a kill can, and only that one.)
	c.logLine("pushed message.new " + sent[12] + " (cursor saved)")
	c.stop(syscall.SIGKILL)
	send(14, 15)
	c = plannerChannel(t, w, state)
	c.initialize()
	receive(c, 15)

	if diff := cmp.Diff(sent, pushed); diff != "" {
		t.Errorf("pushed messages (-sent +pushed):\n%s", diff)
	}
	select {
	case m := <-c.msgs:
		if m["method"] == "notifications/claude/channel" {
			t.Errorf("a push more than sent: %v", m)
		}
	case <-time.After(500 * time.Millisecond):
	}
}

// TestChannelRefusesABadToken: a token the server refuses ends the channel
// at once with the server's reason on stderr, and nothing on stdout.
func TestChannelRefusesABadToken(t *testing.T) {
	w := newWorld(t)
	w.admin("token", "revoke", w.tokenID(t, "planner"))
	c := startChannel(t, "PALAVER_URL="+w.url(), "PALAVER_TOKEN="+w.tokens["alice/planner"], "XDG_STATE_HOME="+t.TempDir())
	select {
	case err := <-c.done:
		if code := exitCode(err); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the channel did not end on a revoked token")
	}
	log := c.log.String()
	if !strings.Contains(log, "refused the token") || !strings.Contains(log, "revoked") {
		t.Errorf("stderr: %q; want the server's reason", log)
	}
	if m, ok := <-c.msgs; ok {
		t.Errorf("stdout carried %v", m)
	}
}

// TestChannelWaitsForAServerThatIsNotThere: a server that cannot be
// reached is tried again with backoff, saying so on stderr, while Claude
// Code is answered; once it serves, the tools come (tools/list_changed) and
// so do the pushes.
func TestChannelWaitsForAServerThatIsNotThere(t *testing.T) {
	w := newWorld(t)
	addr := w.addr
	w.kill()
	c := plannerChannel(t, w, t.TempDir())
	c.logLine("cannot reach a Palaver server at http://" + addr)
	c.initialize()
	var skipped []map[string]any
	if tools := c.request("tools/list", map[string]any{}, &skipped)["tools"].([]any); len(tools) != 0 {
		t.Errorf("tools before the server is there: %v", tools)
	}
	w.start(addr)
	for {
		if m := c.next("tools/list_changed", 30*time.Second); m["method"] == "notifications/tools/list_changed" {
			break
		}
	}
	if tools := c.request("tools/list", map[string]any{}, nil)["tools"].([]any); len(tools) == 0 {
		t.Error("no tools once the server serves")
	}
	reviewer := w.agent("alice/reviewer")
	conv := call(t, reviewer, "open_conversation", map[string]any{"handles": []string{"alice/planner"}})["conversation_id"].(string)
	sent := call(t, reviewer, "send_message", map[string]any{"conversation_id": conv, "body": "there you are"})
	for {
		if p := c.push("the message"); p["meta"].(map[string]any)["event"] == "message.new" {
			if p["meta"].(map[string]any)["message_id"] != sent["message_id"] {
				t.Errorf("pushed %v, want %s", p["meta"], sent["message_id"])
			}
			break
		}
	}
}

// tokenID is the id of the agent's one token.
func (w *world) tokenID(t *testing.T, slug string) string {
	t.Helper()
	for _, line := range strings.Split(w.admin("token", "list", "--user", "alice", "--agent", slug), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "tok_") {
			return f[0]
		}
	}
	t.Fatalf("no token of alice/%s", slug)
	return ""
}

func exitCode(err error) int {
	if e, ok := err.(interface{ ExitCode() int }); ok {
		return e.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}
