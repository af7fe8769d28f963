package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestWebhookCommands: palaver webhook add refuses a loopback endpoint
// unless --allow-private-host names its host, prints the secret alone on
// its last line, and list and remove see it.
func TestWebhookCommands(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "palaver.db")
	for _, args := range [][]string{{"migrate"}, {"user", "create", "alice"}, {"agent", "create", "alice/planner"}} {
		if code, _, stderr := run(t, ctx, nil, append(args, "--database", db)...); code != 0 {
			t.Fatalf("palaver %v: %d %s", args, code, stderr)
		}
	}
	add := []string{"webhook", "add", "--user", "alice", "--agent", "planner", "--url", "https://127.0.0.1:8443/hook", "--database", db}
	if code, _, stderr := run(t, ctx, nil, add...); code != 1 || !strings.Contains(stderr, "127.0.0.1, a loopback address (127.0.0.0/8)") || !strings.Contains(stderr, "allow-private-host setting") {
		t.Errorf("a loopback endpoint: exit %d, %q; want it refused, naming the allow-private-host setting", code, stderr)
	}
	if code, _, stderr := run(t, ctx, nil, "webhook", "add", "--user", "alice", "--agent", "planner", "--url", "http://93.184.215.14/hook", "--database", db); code != 1 || !strings.Contains(stderr, "not https") {
		t.Errorf("an http endpoint: exit %d, %q", code, stderr)
	}
	code, stdout, stderr := run(t, ctx, map[string]string{"PALAVER_ALLOW_PRIVATE_HOSTS": "127.0.0.1"}, add...)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || !strings.HasPrefix(lines[len(lines)-1], "whsec_") || !strings.HasPrefix(stdout, "added wh_") {
		t.Fatalf("let through: exit %d, %q %q", code, stdout, stderr)
	}
	id := strings.TrimSuffix(strings.Fields(stdout)[1], ":")
	list := []string{"webhook", "list", "--user", "alice", "--agent", "planner", "--database", db}
	if code, stdout, _ := run(t, ctx, nil, list...); code != 0 || !strings.Contains(stdout, id+"  https://127.0.0.1:8443/hook  on ") || strings.Contains(stdout, "whsec_") {
		t.Errorf("list: exit %d:\n%s", code, stdout)
	}
	if code, stdout, stderr := run(t, ctx, nil, "webhook", "remove", "--user", "alice", "--agent", "planner", id, "--database", db); code != 0 || !strings.Contains(stdout, "removed "+id) {
		t.Errorf("remove: exit %d, %q %q", code, stdout, stderr)
	}
	if _, stdout, _ := run(t, ctx, nil, list...); strings.Contains(stdout, id) {
		t.Errorf("after remove, list has it:\n%s", stdout)
	}
}
