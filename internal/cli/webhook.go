package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"text/tabwriter"

	"github.com/palaverhq/palaver/internal/config"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/webhook"
)

func runWebhook(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "webhook", args, []verb{
		{"add", "give an agent an HTTPS endpoint to call when an event waits and no session does", webhookAdd},
		{"list", "list an agent's webhooks with their latest attempts", webhookList},
		{"remove", "remove one of an agent's webhooks by its id", webhookRemove},
		{"enable", "turn a disabled webhook on again", webhookEnable},
	})
}

// privateHub is a hub over the admin command's database that lets the
// hosts of --allow-private-host through, as the server given them does.
func privateHub(ctx context.Context, a *admin, privateHosts []string) (*hub.Hub, error) {
	return hub.New(ctx, hub.Options{Store: a.db, Waker: notify.NewLocal(), Logger: slog.New(slog.DiscardHandler), PrivateHosts: privateHosts})
}

// hooks are the webhooks over the admin command's database, checked by h
// (nil: the command's hub); they make no calls: the server does.
func hooks(a *admin, h *hub.Hub) *webhook.Hooks {
	if h == nil {
		h = a.hub
	}
	return webhook.NewHooks(webhook.HooksOptions{Hub: h, Store: a.db, Logger: slog.New(slog.DiscardHandler)})
}

// webhookAdd: palaver webhook add --user OWNER --agent SLUG --url URL
// [--allow-private-host HOST]. The signing secret is printed alone on the
// last line of stdout and nowhere else.
func webhookAdd(ctx context.Context, e *env, args []string) error {
	var slug, endpoint string
	cfg := config.Default()
	return asPerson(ctx, e, args, "webhook add --user OWNER --agent SLUG --url https://… [--allow-private-host HOST]", 0,
		func(fs *flag.FlagSet) {
			requiredFlag(fs, &slug, "agent", "SLUG", "the agent to wake")
			requiredFlag(fs, &endpoint, "url", "URL", "the https URL to call")
			cfg.PrivateHostsFlag(fs, e.getenv)
		},
		func(a *admin, u *hub.User) error {
			h, err := privateHub(ctx, a, cfg.PrivateHosts)
			if err != nil {
				return err
			}
			w, secret, err := hooks(a, h).Add(ctx, u, slug, endpoint)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "added %s: %s is called at %s when an event arrives for it while none of its sessions waits.\n", w.ID, w.AgentHandle, w.URL)
			if len(cfg.PrivateHosts) > 0 {
				fmt.Fprintln(e.stdout, "The server must be given the same --allow-private-host to call it.")
			}
			fmt.Fprintf(e.stdout, "Its signing secret (Standard Webhooks) is shown only once:\n%s\n", secret)
			return nil
		})
}

// webhookList: palaver webhook list --user OWNER --agent SLUG.
func webhookList(ctx context.Context, e *env, args []string) error {
	var slug string
	return asPerson(ctx, e, args, "webhook list --user OWNER --agent SLUG", 0,
		func(fs *flag.FlagSet) { requiredFlag(fs, &slug, "agent", "SLUG", "whose webhooks") },
		func(a *admin, u *hub.User) error {
			vs, err := hooks(a, nil).List(ctx, u, slug)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tURL\tSTATE\tWAITING\tCREATED\tLAST ATTEMPT")
			for _, v := range vs {
				state := "on"
				if !v.Enabled() {
					state = "off since " + day(v.DisabledAt) + ": " + v.DisabledReason
				}
				last := "-"
				if len(v.Attempts) > 0 {
					at := v.Attempts[0]
					last = day(at.At) + " " + at.Type + " "
					if at.OK() {
						last += fmt.Sprint(at.Status)
					} else {
						last += "failed: " + at.Problem()
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", v.ID, v.URL, state, v.Pending, day(v.CreatedAt), last)
			}
			return tw.Flush()
		})
}

// webhookRemove: palaver webhook remove --user OWNER --agent SLUG ID.
func webhookRemove(ctx context.Context, e *env, args []string) error {
	var slug string
	return asPerson(ctx, e, args, "webhook remove --user OWNER --agent SLUG WEBHOOK_ID", 1,
		func(fs *flag.FlagSet) { requiredFlag(fs, &slug, "agent", "SLUG", "whose webhook") },
		func(a *admin, u *hub.User) error {
			w, err := hooks(a, nil).Remove(ctx, u, slug, a.pos[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "removed %s (%s): it is called no more\n", w.ID, w.URL)
			return nil
		})
}

// webhookEnable: palaver webhook enable --user OWNER --agent SLUG ID
// [--allow-private-host HOST].
func webhookEnable(ctx context.Context, e *env, args []string) error {
	var slug string
	cfg := config.Default()
	return asPerson(ctx, e, args, "webhook enable --user OWNER --agent SLUG WEBHOOK_ID [--allow-private-host HOST]", 1,
		func(fs *flag.FlagSet) {
			requiredFlag(fs, &slug, "agent", "SLUG", "whose webhook")
			cfg.PrivateHostsFlag(fs, e.getenv)
		},
		func(a *admin, u *hub.User) error {
			h, err := privateHub(ctx, a, cfg.PrivateHosts)
			if err != nil {
				return err
			}
			w, err := hooks(a, h).Enable(ctx, u, slug, a.pos[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s (%s) is on: events from now on call it\n", w.ID, w.URL)
			return nil
		})
}
