package cli

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentA2ACommand: palaver agent a2a exposes the owner's agent with
// its skills while the server runs — its card is served — and --off takes
// the card away; bad skills change nothing (§18).
func TestAgentA2ACommand(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "palaver.db")
	base := strings.TrimSuffix(strings.TrimSuffix(serve(t, db), "/"), "/mcp")
	palaver := func(args ...string) (int, string, string) {
		t.Helper()
		return run(t, ctx, nil, append(args, "--database", db)...)
	}
	admin := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := palaver(args...)
		if code != 0 {
			t.Fatalf("palaver %v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	admin("user", "create", "alice")
	admin("agent", "create", "alice/planner")
	card := func() (int, string) {
		t.Helper()
		resp, err := http.Get(base + "/a2a/alice/planner/.well-known/agent-card.json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := card(); code != http.StatusNotFound {
		t.Fatalf("before: card %d, want 404", code)
	}
	out := admin("agent", "a2a", "--user", "alice", "--agent", "planner", "--skill", "Plan releases: turns goals into steps", "--skill", "Triage")
	if out != "alice/planner is exposed over A2A, with skills plan-releases, triage: its card is at /a2a/alice/planner/.well-known/agent-card.json under the server's URL; who may call it is still who may reach it\n" {
		t.Fatalf("agent a2a printed %q", out)
	}
	if code, body := card(); code != http.StatusOK || !strings.Contains(body, `"description":"turns goals into steps","id":"plan-releases","name":"Plan releases"`) {
		t.Fatalf("card: %d %s", code, body)
	}
	code, _, stderr := palaver("agent", "a2a", "--user", "alice", "--agent", "planner", "--skill", "!!!")
	if code == 0 || !strings.Contains(stderr, "has no letter or digit in its name") {
		t.Fatalf("a bad skill: exit %d: %s", code, stderr)
	}
	if _, body := card(); !strings.Contains(body, "Plan releases") {
		t.Fatalf("after the refused change: %s; want the skills unchanged", body)
	}
	if out := admin("agent", "a2a", "--user", "alice", "--agent", "planner", "--off"); out != "alice/planner is no longer exposed over A2A: its card and endpoint answer 404\n" {
		t.Fatalf("agent a2a --off printed %q", out)
	}
	if code, _ := card(); code != http.StatusNotFound {
		t.Fatalf("after --off: card %d, want 404", code)
	}
}
