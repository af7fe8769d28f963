package cli

import (
	"context"
	"fmt"
)

func runUser(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "user", args, map[string]func(context.Context, *env, []string) error{
		"create": userCreate,
	})
}

// userCreate: palaver user create HANDLE [--name "Display Name"].
func userCreate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "user create", "user create HANDLE [--name NAME] [--database PATH]")
	cfg := adminFlags(e, fs)
	name := fs.String("name", "", "display name")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 1); err != nil {
		return err
	}
	a, err := openAdmin(ctx, *cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	u, err := a.hub.CreateUser(ctx, pos[0], *name)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created user %s (%s)\n", u.Handle, u.ID)
	return nil
}
