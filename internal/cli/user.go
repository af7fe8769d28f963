package cli

import (
	"context"
	"flag"
	"fmt"
)

func runUser(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "user", args, map[string]func(context.Context, *env, []string) error{
		"create": userCreate,
	})
}

// userCreate: palaver user create HANDLE [--name "Display Name"].
func userCreate(ctx context.Context, e *env, args []string) error {
	var name string
	return adminCommand(ctx, e, args, "user create HANDLE [--name NAME]", 1,
		func(fs *flag.FlagSet) { fs.StringVar(&name, "name", "", "display name") },
		func(a *admin) error {
			u, err := a.hub.CreateUser(ctx, a.pos[0], name)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "created user %s (%s)\n", u.Handle, u.ID)
			return nil
		})
}
