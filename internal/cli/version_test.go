package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/build"
)

// TestVersion: palaver version, the start-up log and whoami's server_build
// name the build in the same words.
func TestVersion(t *testing.T) {
	ctx := context.Background()
	b := build.Current().String()
	code, stdout, stderr := run(t, ctx, nil, "version")
	if want := "palaver " + b + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"; code != 0 || stdout != want {
		t.Fatalf("palaver version: exit %d, %q %q; want %q", code, stdout, stderr, want)
	}

	db := filepath.Join(t.TempDir(), "palaver.db")
	url, started := startServer(t, nil, "--addr", "127.0.0.1:0", "--database", db)
	if want := ` build="` + b + `" `; !strings.Contains(started, want) && !strings.Contains(started, " build="+b+" ") {
		t.Errorf("the start-up log does not name the build %q:\n%s", b, started)
	}
	for _, args := range [][]string{{"user", "create", "alice"}, {"agent", "create", "alice/planner"}} {
		if code, _, stderr := run(t, ctx, nil, append(args, "--database", db)...); code != 0 {
			t.Fatalf("palaver %v: %s", args, stderr)
		}
	}
	_, out, _ := run(t, ctx, nil, "token", "mint", "--user", "alice", "--agent", "planner", "--database", db)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	_, out, stderr = run(t, ctx, map[string]string{"PALAVER_URL": url, "PALAVER_TOKEN": lines[len(lines)-1]}, "call", "whoami")
	var me struct {
		ServerBuild string `json:"server_build"`
	}
	if err := json.Unmarshal([]byte(out), &me); err != nil {
		t.Fatalf("call whoami: %v %s %s", err, out, stderr)
	}
	if !strings.HasPrefix(me.ServerBuild, "palaver "+b+", tools 2.") {
		t.Errorf("whoami server_build = %q, want it to begin %q", me.ServerBuild, "palaver "+b+", tools 2.")
	}
}
