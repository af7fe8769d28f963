package cli

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// migrated is a new database made by palaver migrate.
func migrated(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "palaver.db")
	if code, _, stderr := run(t, context.Background(), nil, "migrate", "--database", db); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, stderr)
	}
	return db
}

// files lists what is in dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestAdminCommandsNeedADatabase: an admin command run where there is no
// database — the default ./palaver.db in another folder, or a --database
// or PALAVER_DATABASE path — fails naming the path and how to give the
// right one, and creates nothing.
func TestAdminCommandsNeedADatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	const advice = ": give the server's database with --database PATH or PALAVER_DATABASE=PATH (the default is ./palaver.db in the current folder); palaver serve or palaver migrate makes a new one\n"
	other := filepath.Join(dir, "elsewhere.db")
	for _, tc := range []struct {
		vars map[string]string
		args []string
		path string
	}{
		{nil, []string{"user", "list"}, filepath.Join(dir, "palaver.db")},
		{nil, []string{"user", "create", "alice"}, filepath.Join(dir, "palaver.db")},
		{nil, []string{"agent", "list", "--database", other}, other},
		{map[string]string{"PALAVER_DATABASE": other}, []string{"token", "list", "--user", "alice"}, other},
		{nil, []string{"backup", filepath.Join(dir, "copy.db")}, filepath.Join(dir, "palaver.db")},
	} {
		code, stdout, stderr := run(t, ctx, tc.vars, tc.args...)
		want := "palaver " + tc.args[0] + ": no database at " + tc.path + advice
		if code != 1 || stdout != "" || stderr != want {
			t.Errorf("palaver %v: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, stdout, stderr, want)
		}
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("admin commands on a missing database left %v behind", got)
	}
}

// TestMigrateCreates: palaver migrate makes a new database, says where, and
// makes it (and its -wal and -shm) readable by its owner only; the admin
// commands then use it, and say nothing of creating.
func TestMigrateCreates(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := run(t, ctx, nil, "migrate")
	if want := "created a new database at " + filepath.Join(dir, "palaver.db") + "\n"; code != 0 || stderr != want || stdout != "the database is up to date\n" {
		t.Fatalf("migrate: exit %d, stdout %q, stderr %q; want stderr %q", code, stdout, stderr, want)
	}
	if code, _, stderr := run(t, ctx, nil, "user", "create", "alice"); code != 0 || stderr != "" {
		t.Fatalf("user create: exit %d: %q", code, stderr)
	}
	if code, _, stderr := run(t, ctx, nil, "migrate"); code != 0 || stderr != "" {
		t.Fatalf("migrate again: exit %d: %q", code, stderr)
	}
	for _, name := range files(t, dir) {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want -rw-------", name, fi.Mode().Perm())
		}
	}
}

// TestServeAddressInUse: a server that cannot listen leaves no database
// behind; one that can says it made a new one and where.
func TestServeAddressInUse(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "palaver.db")
	code, _, stderr := run(t, ctx, nil, "serve", "--addr", ln.Addr().String(), "--database", db)
	if code != 1 || !strings.Contains(stderr, "palaver serve: listen on "+ln.Addr().String()+": ") || !strings.Contains(stderr, "pass --addr") {
		t.Fatalf("serve on an address in use: exit %d: %s", code, stderr)
	}
	if got := files(t, dir); len(got) != 0 {
		t.Fatalf("a serve that failed to listen left %v behind", got)
	}

	_, started := startServer(t, nil, "--addr", "127.0.0.1:0", "--database", db)
	if want := `level=INFO msg="created a new database" path=` + db + "\n"; !strings.Contains(started, want) {
		t.Errorf("serve on a new database did not log %q:\n%s", want, started)
	}
}
