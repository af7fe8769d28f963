package cli

import (
	"context"
	"fmt"
)

// runBackup: palaver backup FILE [--database PATH] — a consistent online
// copy of a SQLite database (§13).
func runBackup(ctx context.Context, e *env, args []string) error {
	return adminCommand(ctx, e, args, "backup FILE", 1, nil, func(a *admin) error {
		if err := a.db.Backup(ctx, a.pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "backed up to %s\n", a.pos[0])
		return nil
	})
}
