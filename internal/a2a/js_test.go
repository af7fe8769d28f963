package a2a_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJSClient runs A2A clients on the A2A project's JavaScript SDK
// (@a2a-js/sdk, installed by .ci/run) against the real server: the SDK's
// native A2A 1.0 client (testdata/client10.mjs, js10_test.go), and the
// A2A 0.3 client it is through its compatibility layer
// (testdata/client.mjs), which must keep working as before (§18).
//
// Skipped unless PALAVER_A2A_JS names a node_modules folder holding
// @a2a-js/sdk; node 22 or newer must be on PATH (CONTRIBUTING.md).
func TestJSClient(t *testing.T) {
	modules := os.Getenv("PALAVER_A2A_JS")
	if modules == "" {
		t.Skip("PALAVER_A2A_JS is not set; it names a node_modules folder holding @a2a-js/sdk (CONTRIBUTING.md says how to install it)")
	}
	if _, err := os.Stat(filepath.Join(modules, "@a2a-js", "sdk", "package.json")); err != nil {
		t.Fatalf("PALAVER_A2A_JS=%s holds no @a2a-js/sdk: %v", modules, err)
	}
	t.Run("A2A 1.0", func(t *testing.T) { jsClient10(t, modules) })
	t.Run("A2A 0.3 through legacyCompat", func(t *testing.T) { jsClient03(t, modules) })
}

// script is a node script of testdata running against a server: next
// reads its next step, say writes a line to its stdin, and end waits for
// it to finish.
type script struct {
	next func(want string) map[string]any
	say  func(line string)
	end  func()
}

// runScript runs testdata/name with node against ts, with env added.
func runScript(t *testing.T, modules, name string, ts *testServer, env ...string) *script {
	t.Helper()
	// Node resolves an ES module's imports from the folders above the
	// script: the script runs from a folder whose node_modules is the SDK's.
	dir := t.TempDir()
	abs, err := filepath.Abs(modules)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join(dir, name))
	cmd.Env = append(append(os.Environ(), "PALAVER_URL="+ts.url), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("node: %v (is node 22 or newer on PATH?)", err)
	}
	steps := make(chan map[string]any)
	go func() {
		defer close(steps)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var step map[string]any
			if err := json.Unmarshal(sc.Bytes(), &step); err != nil {
				t.Errorf("the script printed %q", sc.Text())
				continue
			}
			steps <- step
		}
	}()
	return &script{
		next: func(want string) map[string]any {
			t.Helper()
			select {
			case step, ok := <-steps:
				if !ok {
					cmd.Wait()
					t.Fatalf("the script ended before %q: %s", want, stderr.String())
				}
				if step["step"] != want {
					t.Fatalf("the script's step %v; want %q (stderr: %s)", step, want, stderr.String())
				}
				return step
			case <-time.After(20 * time.Second):
				t.Fatalf("no %q from the script within 20s: %s", want, stderr.String())
			}
			return nil
		},
		say: func(line string) { io.WriteString(stdin, line+"\n") },
		end: func() {
			t.Helper()
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("the script: %v: %s", err, stderr.String())
			}
		},
	}
}

// jsClient03 runs testdata/client.mjs: it fetches the exposed agent's
// card, naming no A2A-Version, gets 0.3's and speaks 0.3; it sends with a
// bearer token over message/stream and sees submitted → working as the
// Palaver agent starts processing over MCP → completed with the reply as
// artifact; a second message in the same context lands in the same
// conversation; a caller without reach is refused with the consent step;
// an unexposed agent's card is 404.
func jsClient03(t *testing.T, modules string) {
	ts := newTestServer(t)
	ts.expose(t)
	js := runScript(t, modules, "client.mjs", ts, "A2A_TOKEN="+ts.tokens["alice/planner"], "A2A_STRANGER_TOKEN="+ts.tokens["bob/helper"])
	next := js.next

	card := next("card")
	if card["name"] != "alice/reviewer" || card["description"] != "the alice/reviewer agent" || jsonOf(card["skills"]) != `["review-code=Review code","triage=Triage"]` || card["version"] != "0.3" {
		t.Errorf("card: %v", card)
	}
	first := next("event")
	if first["kind"] != "task" || first["state"] != "TASK_STATE_SUBMITTED" {
		t.Fatalf("first event: %v; want the submitted task", first)
	}
	taskID, conv := first["id"].(string), first["contextId"].(string)
	agent := ts.mcpAgent(t, "alice/reviewer")
	tool(t, agent, "acknowledge", map[string]any{"message_id": taskID, "outcome": "processing"})
	if ev := next("event"); ev["kind"] != "status" || ev["state"] != "TASK_STATE_WORKING" {
		t.Fatalf("after processing started: %v; want working", ev)
	}
	tool(t, agent, "send_message", map[string]any{"conversation_id": conv, "body": "Looks good; one nit in store.go."})
	tool(t, agent, "acknowledge", map[string]any{"message_id": taskID})
	if ev := next("event"); ev["kind"] != "artifact" || ev["text"] != "Looks good; one nit in store.go." {
		t.Fatalf("after the reply: %v; want the reply as an artifact", ev)
	}
	if ev := next("event"); ev["kind"] != "status" || ev["state"] != "TASK_STATE_COMPLETED" || ev["text"] != "Looks good; one nit in store.go." {
		t.Fatalf("after the acknowledgement: %v; want completed with the reply", ev)
	}

	second := next("second")
	if second["contextId"] != conv || second["id"] == taskID || second["state"] != "TASK_STATE_SUBMITTED" {
		t.Fatalf("second message: %v; want a new submitted task in %s", second, conv)
	}
	tool(t, agent, "acknowledge", map[string]any{"message_id": second["id"], "outcome": "processing"})
	js.say("go")
	if got := next("got"); got["state"] != "TASK_STATE_WORKING" {
		t.Errorf("tasks/get of the second task: %v; want working", got)
	}
	if refused := next("refused"); !strings.Contains(refused["error"].(string), "contact: ") || !strings.Contains(refused["error"].(string), "(trace tr_") {
		t.Errorf("a caller without reach: %v; want the contact refusal with its trace", refused)
	}
	if missing := next("missing"); !strings.Contains(missing["error"].(string), "404") {
		t.Errorf("an unexposed agent's card: %v; want 404", missing)
	}
	js.end()
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
