//go:build unix

package store_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/palaverhq/palaver/internal/store"
)

// TestOpenCreatesPrivateFiles: a new SQLite database and its -wal and -shm
// files are readable by their owner only, whatever the umask allows, with
// the exclusive lock (serve) and without it (migrate).
func TestOpenCreatesPrivateFiles(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	for _, exclusive := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "palaver.db")
		db, err := store.Open(ctx, store.Options{Database: path, Exclusive: exclusive, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		insertUser(t, db, "alice") // the -wal file has something in it
		for _, name := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(name)
			if err != nil {
				t.Errorf("exclusive %v: %v", exclusive, err)
				continue
			}
			if got := fi.Mode().Perm(); got != 0o600 {
				t.Errorf("exclusive %v: %s has mode %v, want -rw-------", exclusive, filepath.Base(name), got)
			}
		}
		db.Close()
	}
}

// TestOpenMustExist: with MustExist a missing file is ErrNoDatabase,
// naming the absolute path, and nothing is created; an existing one opens.
func TestOpenMustExist(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "palaver.db")
	_, err := store.Open(ctx, store.Options{Database: path, MustExist: true, Logger: slog.New(slog.DiscardHandler)})
	if !errors.Is(err, store.ErrNoDatabase) || err.Error() != "no database at "+path {
		t.Fatalf("Open of a missing file with MustExist: %v, want ErrNoDatabase naming %s", err, path)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("Open with MustExist left %v behind", entries)
	}

	db, err := store.Open(ctx, store.Options{Database: path, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	insertUser(t, db, "alice")
	db.Close()
	db, err = store.Open(ctx, store.Options{Database: path, MustExist: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("Open of an existing file with MustExist: %v", err)
	}
	defer db.Close()
	if _, err := db.UserByHandle(ctx, "alice"); err != nil {
		t.Fatalf("the existing database: %v", err)
	}
}
