package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/palaverhq/palaver/internal/accounts"
	"github.com/palaverhq/palaver/internal/config"
	"github.com/palaverhq/palaver/internal/hub"
)

func runUser(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "user", args, []verb{
		{"create", "create a person; the first one is the admin", userCreate},
		{"list", "list people", userList},
		{"password", "set a person's dashboard password, read from stdin", userPassword},
		{"invite", "print a one-time sign-up link", userInvite},
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
			if u.Admin {
				fmt.Fprintf(e.stdout, "%s is the admin; set a password to sign in to the dashboard: palaver user password %s\n", u.Handle, u.Handle)
			}
			return nil
		})
}

// userInvite: palaver user invite [--base-url URL] prints a one-time link
// that makes one account, on the URL the server recorded when it started
// unless --base-url (PALAVER_BASE_URL) says otherwise.
func userInvite(ctx context.Context, e *env, args []string) error {
	base := e.getenv("PALAVER_BASE_URL")
	return adminCommand(ctx, e, args, "user invite [--base-url URL]", 0,
		func(fs *flag.FlagSet) {
			fs.StringVar(&base, "base-url", base, "the server's URL as people reach it (env PALAVER_BASE_URL; default: the URL the server recorded when it started)")
		},
		func(a *admin) error {
			if base == "" {
				recorded, err := a.hub.PublicURL(ctx)
				if err != nil {
					return err
				}
				base = recorded
			}
			if base == "" {
				base = "http://" + config.DefaultAddr
				fmt.Fprintf(e.stderr, "no server has started on this database yet, so the link assumes %s; pass --base-url URL if people reach the server elsewhere\n", base)
			}
			u, err := url.Parse(base)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("--base-url %q: give the server's URL, like https://palaver.example.com", base)
			}
			inv, secret, err := accounts.New(a.hub, a.db, nil).CreateInvite(ctx, nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s/signup?invite=%s\n", strings.TrimSuffix(base, "/"), url.QueryEscape(secret))
			fmt.Fprintf(e.stderr, "the link makes one account; it works until %s\n", hub.FormatTime(inv.ExpiresAt))
			return nil
		})
}

// userPassword: palaver user password HANDLE reads the new password from
// stdin (one line), for people made before the dashboard or who forgot
// theirs; it ends their sign-ins.
func userPassword(ctx context.Context, e *env, args []string) error {
	return adminCommand(ctx, e, args, "user password HANDLE   (the password is read from stdin, one line)", 1, nil,
		func(a *admin) error {
			if _, err := a.hub.User(ctx, a.pos[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "new password for %s (at least %d characters), then Enter: ", a.pos[0], accounts.MinPassword)
			line, err := bufio.NewReader(e.stdin).ReadString('\n')
			if err != nil && line == "" {
				return errors.New("no password was given on stdin; type it and press Enter, or pipe it in")
			}
			fmt.Fprintln(e.stderr)
			if err := accounts.New(a.hub, a.db, nil).SetPassword(ctx, a.pos[0], strings.TrimRight(line, "\r\n")); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s can sign in to the dashboard with the new password\n", a.pos[0])
			return nil
		})
}

// userList: palaver user list.
func userList(ctx context.Context, e *env, args []string) error {
	return adminCommand(ctx, e, args, "user list", 0, nil,
		func(a *admin) error {
			us, err := a.hub.Users(ctx, nil)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "HANDLE\tNAME\tADMIN\tCREATED")
			for _, u := range us {
				admin := ""
				if u.Admin {
					admin = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Handle, u.Name, admin, hub.FormatTime(u.CreatedAt))
			}
			return tw.Flush()
		})
}
