package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestAdminCommandsReachTheNextSend: what a send checks, some of which the
// server keeps in memory (DESIGN.md §17), changed by the admin command
// line on the same database while the server runs (on SQLite it acts on
// the file directly), reaches the agent's very next send: a held message
// rejected leaves the budget, and a revoked token is refused. On both
// stores.
func TestAdminCommandsReachTheNextSend(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { adminCommandsReachTheNextSend(t, filepath.Join(t.TempDir(), "palaver.db")) })
	t.Run("postgres", func(t *testing.T) { adminCommandsReachTheNextSend(t, storetest.Schema(t)) })
}

func adminCommandsReachTheNextSend(t *testing.T, db string) {
	ctx := context.Background()
	url, _ := startServer(t, nil, "--addr", "127.0.0.1:0", "--database", db, "--budget", "2")
	admin := adminOn(t, ctx, db)
	admin("user", "create", "alice")
	admin("agent", "create", "alice/planner")
	admin("agent", "create", "alice/reviewer")
	admin("agent", "mode", "alice/planner", "review")
	lines := strings.Split(strings.TrimSpace(admin("token", "mint", "--user", "alice", "--agent", "planner")), "\n")
	vars := map[string]string{"PALAVER_URL": url, "PALAVER_TOKEN": lines[len(lines)-1]}
	call := func(tool, args string) (int, map[string]any, string) {
		t.Helper()
		code, stdout, stderr := run(t, ctx, vars, "call", tool, args)
		var out map[string]any
		json.Unmarshal([]byte(stdout), &out)
		return code, out, stderr
	}
	_, opened, _ := call("open_conversation", `{"handles": ["alice/reviewer"]}`)
	conv, _ := opened["conversation_id"].(string)
	send := func(body string) (int, map[string]any, string) {
		t.Helper()
		return call("send_message", `{"conversation_id": "`+conv+`", "body": "`+body+`"}`)
	}
	var first string
	for _, body := range []string{"draft 1", "draft 2"} {
		code, out, stderr := send(body)
		if code != 0 || out["status"] != "held" {
			t.Fatalf("send %q in review mode: exit %d, %v %s; want held", body, code, out, stderr)
		}
		if first == "" {
			first, _ = out["message_id"].(string)
		}
	}
	if code, out, _ := send("draft 3"); code != 3 || !strings.HasPrefix(out["reason"].(string), "budget:") {
		t.Fatalf("a third held message within the hour: exit %d, %v; want the budget's denial", code, out)
	}
	admin("approvals", "reject", first, "--user", "alice")
	if code, out, stderr := send("draft 3"); code != 0 || out["status"] != "held" {
		t.Errorf("the send after palaver approvals reject: exit %d, %v %s; want held", code, out, stderr)
	}

	id := regexp.MustCompile(`tok_\w+`).FindString(admin("token", "list", "--user", "alice"))
	admin("token", "revoke", id)
	if code, _, stderr := send("draft 4"); code == 0 || !strings.Contains(stderr, "the token was revoked") {
		t.Errorf("the send after palaver token revoke: exit %d, %q; want the token refused as revoked", code, stderr)
	}
}
