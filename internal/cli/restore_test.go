package cli

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestBackupAndRestore: a backup and a restored database are the owner's
// alone, and a restore starts a new generation of cursors (§6, §13): one
// from before the backup hands over what followed it; one the database
// issued after the backup is cursor_invalid, also once the restored log has
// grown past it.
func TestBackupAndRestore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path, backup := filepath.Join(dir, "palaver.db"), filepath.Join(dir, "backup.db")
	type world struct {
		h                 *hub.Hub
		planner, reviewer *hub.Caller
		conv              string
	}
	var secrets []string
	open := func() (*world, func()) {
		db, err := store.Open(ctx, store.Options{Database: path, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		h, err := hub.New(ctx, hub.Options{Store: db, Waker: notify.NewLocal(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		w := &world{h: h}
		if secrets == nil {
			if _, err := h.CreateUser(ctx, "alice", ""); err != nil {
				t.Fatal(err)
			}
			for _, slug := range []string{"planner", "reviewer"} {
				if _, err := h.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/" + slug}); err != nil {
					t.Fatal(err)
				}
				_, secret, err := h.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: slug})
				if err != nil {
					t.Fatal(err)
				}
				secrets = append(secrets, secret)
			}
		}
		if w.planner, err = h.Authenticate(ctx, secrets[0]); err != nil {
			t.Fatal(err)
		}
		if w.reviewer, err = h.Authenticate(ctx, secrets[1]); err != nil {
			t.Fatal(err)
		}
		v, err := h.OpenConversation(ctx, w.planner, []string{"alice/reviewer"})
		if err != nil {
			t.Fatal(err)
		}
		w.conv = v.Conversation.ID
		return w, func() { db.Close() }
	}
	send := func(w *world, bodies ...string) {
		t.Helper()
		for _, b := range bodies {
			if _, err := w.h.SendMessage(ctx, w.planner, hub.SendInput{ConversationID: w.conv, Body: b}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mode := func(p string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}

	w, closeDB := open()
	send(w, "one")
	before, _ := w.h.LatestCursor(ctx, w.reviewer.Agent.ID)
	closeDB()
	if code, _, stderr := run(t, ctx, nil, "backup", backup, "--database", path); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, stderr)
	}
	if m := mode(backup); m != 0o600 {
		t.Errorf("the backup's mode is %v, want 0600", m)
	}

	w, closeDB = open()
	send(w, "two", "three")
	r, err := w.h.Wait(ctx, w.reviewer, hub.WaitInput{Cursor: &before})
	if err != nil || len(r.Events) != 2 {
		t.Fatalf("wait before the restore: %+v, %v", r, err)
	}
	stale := r.Cursor
	closeDB()

	if code, _, stderr := run(t, ctx, nil, "restore", backup, "--database", path); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, stderr)
	}
	if m := mode(path); m != 0o600 {
		t.Errorf("the restored database's mode is %v, want 0600", m)
	}
	w, closeDB = open()
	defer closeDB()
	send(w, "four", "five", "six", "seven")
	if _, err := w.h.Wait(ctx, w.reviewer, hub.WaitInput{Cursor: &stale}); hub.AsError(err).Code != "cursor_invalid" {
		t.Fatalf("a cursor issued after the backup, once the log regrew past it: %v; want cursor_invalid", err)
	}
	r, err = w.h.Wait(ctx, w.reviewer, hub.WaitInput{Cursor: &before})
	var bodies []string
	for _, e := range r.Events {
		if e.Message != nil {
			bodies = append(bodies, e.Message.Body)
		}
	}
	if err != nil || len(bodies) != 4 || bodies[0] != "four" {
		t.Fatalf("a cursor from before the backup: %v, %v; want four to seven", bodies, err)
	}
	if code, _, stderr := run(t, ctx, nil, "restore", path, "--database", path); code == 0 {
		t.Errorf("restoring the database onto itself succeeded: %s", stderr)
	}
}

// TestRestoreMarkNeedsADatabase: restore --mark on a path with no database
// says so and makes none.
func TestRestoreMarkNeedsADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	code, _, stderr := run(t, t.Context(), nil, "restore", "--mark", "--database", path)
	if code == 0 || !strings.Contains(stderr, "no database at "+path) {
		t.Errorf("restore --mark on a missing database: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("restore --mark made %s: %v", path, err)
	}
}

// TestRestoreMarkWhileServed: restore --mark refuses a database a server
// has open, as restore does, on SQLite and on PostgreSQL (where any replica
// serving it refuses it): a new generation under a running server would
// later refuse the cursors it hands out now. With every server stopped it
// marks.
func TestRestoreMarkWhileServed(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		database   func(t testing.TB) string
	}{
		{"sqlite", "another palaver server is already using it", func(t testing.TB) string { return filepath.Join(t.TempDir(), "palaver.db") }},
		{"postgres", "palaver servers are serving it; stop every replica first", storetest.Schema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			database := tc.database(t)
			serving := func() *store.DB {
				db, err := store.Open(t.Context(), store.Options{Database: database, Exclusive: true, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				return db
			}
			first := serving()
			if store.IsPostgresURL(database) {
				second := serving() // replicas share the database
				first.Close()
				first = second
			}
			code, stdout, stderr := run(t, t.Context(), nil, "restore", "--mark", "--database", database)
			if code == 0 || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("restore --mark under a server: exit %d, %q %q", code, stdout, stderr)
			}
			first.Close()
			if code, stdout, stderr := run(t, t.Context(), nil, "restore", "--mark", "--database", database); code != 0 || !strings.Contains(stdout, "a new generation begins") {
				t.Errorf("restore --mark with the servers stopped: exit %d, %q %q", code, stdout, stderr)
			}
		})
	}
}

// TestFileErrorsSayWhatToDo: a backup, restore or database file that is
// not there, or not a database, is said once with its path.
func TestFileErrorsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte("junk"), 0o600)
	missing := filepath.Join(dir, "no", "such", "folder", "p.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"restore", filepath.Join(dir, "nope.db"), "--database", filepath.Join(dir, "q.db")}, "there is no backup file at " + filepath.Join(dir, "nope.db") + "; give the path of a file palaver backup made\n"},
		{[]string{"restore", junk, "--database", filepath.Join(dir, "q.db")}, junk + " is not a Palaver database: give a file palaver backup made\n"},
		{[]string{"migrate", "--database", missing}, "cannot make the database: open " + missing + ": no such file or directory; check that its folder exists and that this user may write there\n"},
	} {
		code, _, stderr := run(t, t.Context(), nil, tc.args...)
		if _, msg, _ := strings.Cut(stderr, ": "); code != 1 || msg != tc.want {
			t.Errorf("palaver %v: exit %d, %q; want 1, %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestCopiedBackBackupNeverSkips: a backup copied back over the database
// by hand, with the server stopped, is not marked by palaver restore; the
// server's next start begins a new generation all the same, so a cursor
// the server issued after the backup is cursor_invalid, also once the log
// has regrown past it, and one from before the backup goes on (§6, §13).
func TestCopiedBackBackupNeverSkips(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path, backup := filepath.Join(dir, "palaver.db"), filepath.Join(dir, "backup.db")
	admin := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := run(t, ctx, nil, append(args, "--database", path)...)
		if code != 0 {
			t.Fatalf("palaver %v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	admin("migrate")
	admin("user", "create", "alice")
	token := map[string]string{}
	for _, slug := range []string{"planner", "reviewer"} {
		admin("agent", "create", "alice/"+slug)
		lines := strings.Split(strings.TrimSpace(admin("token", "mint", "--user", "alice", "--agent", slug)), "\n")
		token[slug] = lines[len(lines)-1]
	}
	var url string
	call := func(slug, tool, args string) (map[string]any, string) {
		t.Helper()
		_, stdout, stderr := run(t, ctx, map[string]string{"PALAVER_URL": url, "PALAVER_TOKEN": token[slug]}, "call", tool, args)
		var out map[string]any
		json.Unmarshal([]byte(stdout), &out)
		return out, stdout + stderr
	}
	var stop func()
	start := func() {
		url, _, stop = launchServer(t, nil, "--addr", "127.0.0.1:0", "--database", path)
	}
	start()
	conv, _ := call("planner", "open_conversation", `{"handles": ["alice/reviewer"]}`)
	id := conv["conversation_id"].(string)
	send := func(bodies ...string) {
		t.Helper()
		for _, b := range bodies {
			if out, text := call("planner", "send_message", `{"conversation_id": "`+id+`", "body": "`+b+`"}`); out["status"] != "sent" {
				t.Fatalf("send %q: %s", b, text)
			}
		}
	}
	send("one")
	me, _ := call("reviewer", "whoami", "")
	before := me["latest_cursor"].(string)
	admin("backup", backup)
	send("two", "three")
	waited, text := call("reviewer", "wait_for_messages", `{"cursor": "`+before+`", "timeout_s": 1}`)
	stale, _ := waited["cursor"].(string)
	if events, _ := waited["events"].([]any); len(events) != 2 {
		t.Fatalf("wait before the copy: %s", text)
	}
	stop()

	for _, p := range []string{path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	if err := copyFile(backup, path); err != nil {
		t.Fatal(err)
	}
	start()
	defer stop()
	send("four", "five", "six", "seven")
	if out, text := call("reviewer", "wait_for_messages", `{"cursor": "`+stale+`", "timeout_s": 1}`); !strings.Contains(text, "cursor_invalid") {
		t.Fatalf("a cursor issued after the backup, once the copied-back log regrew past it: %v; want cursor_invalid", out)
	}
	out, text := call("reviewer", "wait_for_messages", `{"cursor": "`+before+`", "timeout_s": 1}`)
	if events, _ := out["events"].([]any); len(events) != 4 {
		t.Fatalf("a cursor from before the backup: %s; want four to seven", text)
	}
}

// copyFile copies src over dst, as a person copying a backup back would.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o600)
}
