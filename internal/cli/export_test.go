package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestExport: palaver export writes a conversation, or a project with its
// threads, as one zip of export.md and export.json (to -o FILE, or - for
// stdout), for a person who may see it; anyone else gets not_found.
func TestExport(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "palaver.db")
	url := serve(t, db)
	admin := adminOn(t, ctx, db)
	admin("user", "create", "alice")
	admin("user", "create", "bob")
	admin("agent", "create", "alice/planner")
	admin("agent", "create", "alice/reviewer")
	lines := strings.Split(strings.TrimSpace(admin("token", "mint", "--user", "alice", "--agent", "planner")), "\n")
	vars := map[string]string{"PALAVER_URL": url, "PALAVER_TOKEN": lines[len(lines)-1]}
	call := func(tool, args string) map[string]any {
		t.Helper()
		_, stdout, stderr := run(t, ctx, vars, "call", tool, args)
		var out map[string]any
		if json.Unmarshal([]byte(stdout), &out) != nil {
			t.Fatalf("call %s: %s %s", tool, stdout, stderr)
		}
		return out
	}
	conv := call("open_conversation", `{"handles": ["alice/reviewer"]}`)["conversation_id"].(string)
	call("send_message", `{"conversation_id": "`+conv+`", "body": "Which branch?"}`)
	admin("conversation", "post", conv, "Use main.", "--user", "alice")

	// unzip reads an archive's files.
	unzip := func(data []byte) map[string][]byte {
		t.Helper()
		z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("not a zip archive: %v", err)
		}
		out := map[string][]byte{}
		for _, f := range z.File {
			r, _ := f.Open()
			var b bytes.Buffer
			b.ReadFrom(r)
			out[f.Name] = b.Bytes()
		}
		return out
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "conv.zip")
	if got := admin("export", "--user", "alice", "--conversation", conv, "-o", out); got != "exported "+conv+" (2 messages) to "+out+"\n" {
		t.Errorf("export printed %q", got)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	archive := unzip(data)
	var doc struct {
		Conversations []struct {
			Messages []struct {
				Body       string
				Provenance struct{ Authority string }
			}
		}
	}
	if err := json.Unmarshal(archive["export.json"], &doc); err != nil || len(doc.Conversations) != 1 || len(doc.Conversations[0].Messages) != 2 ||
		doc.Conversations[0].Messages[1].Provenance.Authority != "human_interject" {
		t.Fatalf("export.json: %s (%v)", archive["export.json"], err)
	}
	if md := string(archive["export.md"]); !strings.Contains(md, "AI agent for @alice") || !strings.Contains(md, "`human_interject`") {
		t.Errorf("export.md:\n%s", md)
	}

	// To stdout, and by default to palaver-ID.zip in the current folder.
	code, stdout, _ := run(t, ctx, nil, "export", "--user", "alice", "--conversation", conv, "-o", "-", "--database", db)
	if code != 0 || unzip([]byte(stdout))["export.md"] == nil {
		t.Errorf("export -o -: exit %d", code)
	}
	t.Chdir(dir)
	admin("export", "--user", "alice", "--conversation", conv)
	if names := files(t, dir); !slices.Contains(names, "palaver-"+conv+".zip") || len(names) != 2 {
		t.Errorf("export without -o left %v in the folder", names)
	}

	// A project, with its thread.
	project := regexp.MustCompile(`proj_[0-9a-z]{26}`).FindString(admin("project", "create", "Launch", "--user", "alice"))
	admin("project", "add-agent", project, "planner", "--user", "alice")
	thread := call("open_thread", `{"project_id": "`+project+`", "title": "Plan"}`)["conversation_id"].(string)
	call("send_message", `{"conversation_id": "`+thread+`", "body": "First, the notes."}`)
	call("add_item", `{"project_id": "`+project+`", "title": "Write the notes"}`)
	out = filepath.Join(dir, "project.zip")
	if got := admin("export", "--user", "alice", "--project", project, "-o", out); got != "exported "+project+" with 1 thread (1 message), 1 item and 0 images to "+out+"\n" {
		t.Errorf("export --project printed %q", got)
	}
	data, _ = os.ReadFile(out)
	if md := string(unzip(data)["export.md"]); !strings.Contains(md, "# Project: Launch") || !strings.Contains(md, "### Thread: Plan") || !strings.Contains(md, "First, the notes.") {
		t.Errorf("the project's export.md:\n%s", md)
	}

	// What bob cannot see is not there for him; both at once is a usage error.
	for _, args := range [][]string{{"--conversation", conv}, {"--project", project}} {
		code, stdout, stderr := run(t, ctx, nil, append([]string{"export", "--user", "bob", "-o", filepath.Join(dir, "bob.zip"), "--database", db}, args...)...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "is open to") && !strings.Contains(stderr, "no project") {
			t.Errorf("bob exporting %v: exit %d, %q %q", args, code, stdout, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bob.zip")); err == nil {
		t.Error("a refused export left a file")
	}
	if code, _, stderr := run(t, ctx, nil, "export", "--user", "alice", "--conversation", conv, "--project", project, "--database", db); code != 2 || !strings.Contains(stderr, "not both") {
		t.Errorf("export with both: exit %d, %q", code, stderr)
	}
}
