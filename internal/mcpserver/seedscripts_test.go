package mcpserver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedScripts runs, with the official TypeScript MCP client, an agent
// script written only from each seed's text (testdata/seeds) against its
// profile: seed 000 at /mcp/, 004 at /mcp/inbox/, 001 at /mcp/rooms/ (an
// agent's side and a person's). Each asserts its main scenario and prints
// ok.
//
// Skipped unless PALAVER_MCP_TS names a node_modules folder holding
// @modelcontextprotocol/sdk; node 20 or newer must be on PATH
// (CONTRIBUTING.md).
func TestSeedScripts(t *testing.T) {
	modules := os.Getenv("PALAVER_MCP_TS")
	if modules == "" {
		t.Skip("PALAVER_MCP_TS is not set; it names a node_modules folder holding @modelcontextprotocol/sdk")
	}
	abs, err := filepath.Abs(modules)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(abs, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("PALAVER_MCP_TS=%s holds no @modelcontextprotocol/sdk: %v", modules, err)
	}
	for _, script := range []string{"default_000.mjs", "inbox_004.mjs", "rooms_001.mjs"} {
		t.Run(script, func(t *testing.T) {
			ts := newTestServer(t)
			ts.person(t, "alice")
			// Node resolves an ES module's imports from the folders above
			// it: the scripts run from a folder whose node_modules is the SDK's.
			dir := t.TempDir()
			if err := os.Symlink(abs, filepath.Join(dir, "node_modules")); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"lib.mjs", script} {
				src, err := os.ReadFile(filepath.Join("testdata", "seeds", name))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.CommandContext(t.Context(), "node", filepath.Join(dir, script))
			cmd.Env = append(os.Environ(), "PALAVER_URL="+ts.url, "TOKEN_A="+ts.tokens["alice/planner"],
				"TOKEN_B="+ts.tokens["alice/reviewer"], "TOKEN_PERSON="+ts.tokens["alice"])
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "ok" {
				t.Fatalf("node %s: %v\n%s", script, err, out)
			}
		})
	}
}
