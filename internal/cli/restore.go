package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/palaverhq/palaver/internal/config"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
)

// runRestore: palaver restore FILE [--database PATH] puts a backup of a
// SQLite database in its place, with every server stopped; palaver restore
// --mark [--database URL] records a restore made by other means (pg_restore,
// a file copied back). Either way the database starts a new generation:
// cursors up to the backup point keep working, every cursor issued after it
// is cursor_invalid for ever (§6, §13).
func runRestore(ctx context.Context, e *env, args []string) error {
	usage := "restore FILE [--database PATH] | restore --mark [--database URL]"
	fs := newFlags(e, "restore", usage)
	cfg := config.Default()
	cfg.DatabaseFlag(fs, e.getenv)
	var mark bool
	fs.BoolVar(&mark, "mark", false, "only record that the database was restored by other means (PostgreSQL); run it before any server starts")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	nargs := 1
	if mark {
		nargs = 0
	}
	if err := wantArgs(fs, pos, nargs); err != nil {
		return err
	}
	newGeneration := func(db *store.DB) error {
		ended, err := hub.MarkRestored(ctx, db)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "a new generation begins: cursors up to event %s keep working, later ones are refused\n", ended.End())
		return nil
	}
	if mark {
		db, err := store.Open(ctx, store.Options{Database: cfg.Database, MustExist: true, Alone: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return databaseErr(err)
		}
		defer db.Close()
		return newGeneration(db)
	}
	if err := store.Restore(ctx, pos[0], cfg.Database, newGeneration); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "restored %s from %s\n", cfg.Database, pos[0])
	return nil
}
