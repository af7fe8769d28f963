package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/config"
	"github.com/palaverhq/palaver/internal/hub"
)

// newRemoteClient is how the server and the commands call remote A2A
// agents; tests trust their own certificates and resolve their own names.
var newRemoteClient = func() *a2aclient.Client { return a2aclient.New(a2aclient.Options{}) }

// remotes are the remote agents over the admin command's database, called
// through h (nil: the command's hub) with client (nil: none can be added).
func remotes(a *admin, h *hub.Hub, client *a2aclient.Client) *a2aclient.Remotes {
	if h == nil {
		h = a.hub
	}
	return a2aclient.NewRemotes(a2aclient.RemotesOptions{Hub: h, Store: a.db, Client: client, Logger: slog.New(slog.DiscardHandler)})
}

func agentRemote(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "agent remote", args, []verb{
		{"add", "add an A2A agent that lives elsewhere, by its Agent Card's URL, as an agent of its owner", remoteAdd},
		{"list", "list an owner's remote A2A agents, with their cards and latest delivery", remoteList},
		{"remove", "remove a remote A2A agent: it is archived and its messages still to go out are dropped", remoteRemove},
	})
}

// remoteAdd: palaver agent remote add CARD_URL --user OWNER --name NAME
// [--credential-file FILE] [--allow-private-host HOST].
func remoteAdd(ctx context.Context, e *env, args []string) error {
	var name, credFile string
	cfg := config.Default()
	return asPerson(ctx, e, args, "agent remote add --user OWNER --name NAME [--credential-file FILE] [--allow-private-host HOST] CARD_URL", 1,
		func(fs *flag.FlagSet) {
			requiredFlag(fs, &name, "name", "NAME", "its name among the owner's agents: it becomes OWNER/NAME")
			fs.StringVar(&credFile, "credential-file", "", "`FILE` holding the credential presented on every call (a bearer token, or SCHEME TOKEN); it is never shown back")
			cfg.PrivateHostsFlag(fs, e.getenv)
		},
		func(a *admin, u *hub.User) error {
			var cred string
			if credFile != "" {
				b, err := os.ReadFile(credFile)
				if err != nil {
					return fmt.Errorf("the credential file could not be read: %w; give a file holding only the credential", err)
				}
				cred = strings.TrimSpace(string(b))
			}
			h, err := privateHub(ctx, a, cfg.PrivateHosts)
			if err != nil {
				return err
			}
			r, err := remotes(a, h, newRemoteClient()).Add(ctx, u, a2aclient.RemoteAgentInput{Slug: name, CardURL: a.pos[0], Credential: cred})
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "added %s: %s, called over A2A %s at %s; %s's agents may talk to it now, other owners' agents only through a grant\n",
				r.Handle, cardName(r), r.Version, r.Endpoint, u.Handle)
			if len(cfg.PrivateHosts) > 0 {
				fmt.Fprintln(e.stdout, "The server must be given the same --allow-private-host to call it.")
			}
			return nil
		})
}

// cardName is the card's name, with its provider when it names one.
func cardName(r *hub.RemoteAgent) string {
	name := fmt.Sprintf("%q", r.Name)
	if r.Provider != "" {
		name += " by " + r.Provider
	}
	return name
}

// remoteList: palaver agent remote list --user OWNER.
func remoteList(ctx context.Context, e *env, args []string) error {
	return asPerson(ctx, e, args, "agent remote list --user OWNER", 0, nil,
		func(a *admin, u *hub.User) error {
			rs, err := remotes(a, nil, nil).List(ctx, u)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "HANDLE\tNAME\tPROVIDER\tSKILLS\tCARD URL\tA2A\tCREDENTIAL\tCARD READ\tWAITING\tLAST DELIVERY")
			for _, r := range rs {
				skills := strings.Join(r.Skills, ", ")
				cred := "none"
				if r.HasCredential {
					cred = "kept"
				}
				last := "-"
				if !r.LastAt.IsZero() {
					last = day(r.LastAt) + " ok"
					if r.LastError != "" {
						last = day(r.LastAt) + " failed: " + r.LastError
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Handle, r.Name, dash(r.Provider), dash(skills), r.CardURL, r.Version, cred,
					day(r.FetchedAt), r.Pending, last)
			}
			return tw.Flush()
		})
}

// dash is s, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// remoteRemove: palaver agent remote remove --user OWNER NAME.
func remoteRemove(ctx context.Context, e *env, args []string) error {
	return asPerson(ctx, e, args, "agent remote remove --user OWNER NAME", 1, nil,
		func(a *admin, u *hub.User) error {
			if err := remotes(a, nil, nil).Remove(ctx, u, a.pos[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "removed %s/%s: it is archived, its credential forgotten, and nothing more is sent to it\n", u.Handle, a.pos[0])
			return nil
		})
}
