package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
)

// Backup and restore of a SQLite database (§13). Both files hold every
// message and token hash, so they are made readable by their owner only.

// Backup writes a consistent copy of a SQLite database to path, while the
// server runs (§13): the copy keeps every id, so tokens, cursors and inboxes
// are the same after a restore. The copy is mode 0600. PostgreSQL is backed
// up with its own tools.
func (db *DB) Backup(ctx context.Context, path string) error {
	if db.dialect != sqliteDialect {
		return errors.New("palaver backup copies a SQLite database; back up PostgreSQL with pg_dump")
	}
	// VACUUM INTO fills an empty file it finds; made here first, the copy
	// is never readable by others, not even while it is written.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s already exists; give a new file name", path)
	}
	if err != nil { // err names the path
		return fmt.Errorf("cannot make the backup file: %w; give a path in a folder that exists and this user may write", err)
	}
	f.Close()
	// VACUUM INTO reads one snapshot: writers go on while it copies. The
	// read pool is query-only, so the copy gets a connection of its own.
	src, err := sql.Open("sqlite", "file:"+db.path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		os.Remove(path)
		return err
	}
	defer src.Close()
	if _, err := src.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		os.Remove(path)
		return fmt.Errorf("backup to %s: %w", path, err)
	}
	return nil
}

// Restore puts the backup file in the place of the SQLite database at
// path, refusing while a server uses it (§13). The copy is checked to be a
// Palaver database, opened (which migrates an older schema) and handed to
// mark — where the hub starts a new generation of cursors — before it takes
// the database's place in one rename, so no server ever opens it unmarked.
// The restored file is mode 0600; the replaced database's WAL and
// shared-memory files go with it. PostgreSQL is restored with its own
// tools, then marked (palaver restore --mark).
func Restore(ctx context.Context, backup, path string, mark func(*DB) error) error {
	if IsPostgresURL(path) {
		return errors.New("palaver restore puts back a SQLite file; restore PostgreSQL with pg_restore or psql, then run palaver restore --mark --database URL before any server starts")
	}
	if a, b := abs(backup), abs(path); a == b {
		return fmt.Errorf("%s is the database itself; give the backup file to restore from", backup)
	}
	if err := checkBackup(ctx, backup); err != nil {
		return err
	}
	unlock, err := lockFile(path)
	if err != nil {
		return err
	}
	defer unlock()
	tmp := path + ".restoring"
	for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("restore: %w", err)
		}
	}
	if err := copyFile(backup, tmp); err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			os.Remove(tmp)
		}
	}()
	db, err := Open(ctx, Options{Database: tmp, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("restore: opening the copy: %w", err)
	}
	err = mark(db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// Closing the last connection checkpoints the copy's WAL into it.
	if fi, err := os.Stat(tmp + "-wal"); err == nil && fi.Size() > 0 {
		return fmt.Errorf("restore: the copy's write-ahead log was not checkpointed; %s is left as it was", path)
	}
	for _, p := range []string{path + "-wal", path + "-shm", tmp + "-wal", tmp + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("restore: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	done = true
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// checkBackup refuses a file that is not a whole Palaver database.
func checkBackup(ctx context.Context, path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("there is no backup file at %s; give the path of a file palaver backup made", path)
	} else if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var epoch, check string
	if err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'epoch'`).Scan(&epoch); err != nil || epoch == "" {
		return fmt.Errorf("%s is not a Palaver database: give a file palaver backup made", path)
	}
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil || check != "ok" {
		return fmt.Errorf("%s is damaged (quick_check: %s %v); restore another backup", path, check, err)
	}
	return nil
}

// copyFile copies src to a new file dst, mode 0600, synced to disk.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("restore: %w", err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("restore: %w", err)
	}
	return out.Close()
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
