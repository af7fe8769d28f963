package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/reach"
)

func runContact(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "contact", args, []verb{
		{"request", "ask another person to be contacts", contactVerb("request", func(ctx context.Context, a *admin, u *hub.User, other string) (*hub.Contact, error) {
			return reach.New(a.hub, a.db).RequestContact(ctx, u, other, "")
		})},
		{"approve", "approve a person's contact request", contactVerb("approve", func(ctx context.Context, a *admin, u *hub.User, other string) (*hub.Contact, error) {
			return a.hub.DecideContact(ctx, u, other, true)
		})},
		{"reject", "reject a person's contact request", contactVerb("reject", func(ctx context.Context, a *admin, u *hub.User, other string) (*hub.Contact, error) {
			return a.hub.DecideContact(ctx, u, other, false)
		})},
		{"cancel", "withdraw your pending contact request", contactVerb("cancel", func(ctx context.Context, a *admin, u *hub.User, other string) (*hub.Contact, error) {
			return reach.New(a.hub, a.db).CancelContact(ctx, u, other)
		})},
		{"list", "list a person's contacts and requests", contactList},
	})
}

// contactVerb makes "palaver contact VERB HANDLE --user ME".
func contactVerb(verb string, do func(context.Context, *admin, *hub.User, string) (*hub.Contact, error)) func(context.Context, *env, []string) error {
	return func(ctx context.Context, e *env, args []string) error {
		var user string
		return adminCommand(ctx, e, args, "contact "+verb+" HANDLE --user ME", 1, userFlag(&user), func(a *admin) error {
			u, err := a.person(ctx, user)
			if err != nil {
				return err
			}
			c, err := do(ctx, a, u, a.pos[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s and %s: %s\n", u.Handle, a.pos[0], c.Status)
			if verb == "request" && c.Status == hub.ContactPending {
				fmt.Fprintf(e.stdout, "next: %s accepts with: palaver contact approve %s --user %s\n", a.pos[0], u.Handle, a.pos[0])
			}
			return nil
		})
	}
}

// contactList: palaver contact list --user ME.
func contactList(ctx context.Context, e *env, args []string) error {
	var user string
	return adminCommand(ctx, e, args, "contact list --user ME", 0, userFlag(&user), func(a *admin) error {
		u, err := a.person(ctx, user)
		if err != nil {
			return err
		}
		cs, err := a.hub.Contacts(ctx, u)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CONTACT\tSTATUS\tREQUESTED BY\tSINCE")
		for _, c := range cs {
			by := c.Other.Handle
			if c.Contact.RequestedBy == u.ID {
				by = u.Handle
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Other.Handle, c.Contact.Status, by, day(c.Contact.RequestedAt))
		}
		return tw.Flush()
	})
}

// runGrant: palaver grant --user OWNER --agent SLUG --contact HANDLE
// [--human=true] [--agents] — sets what the agent may reach of a contact.
func runGrant(ctx context.Context, e *env, args []string) error {
	var user, slug, contact string
	var human, agents bool
	return adminCommand(ctx, e, args, "grant --user OWNER --agent SLUG --contact HANDLE [--human=true|false] [--agents]", 0,
		func(fs *flag.FlagSet) {
			userFlag(&user)(fs)
			requiredFlag(fs, &slug, "agent", "SLUG", "the agent's slug")
			requiredFlag(fs, &contact, "contact", "HANDLE", "the contact's handle")
			fs.BoolVar(&human, "human", true, "the agent may reach the contact")
			fs.BoolVar(&agents, "agents", false, "the agent may reach the contact's agents")
		},
		func(a *admin) error {
			u, err := a.person(ctx, user)
			if err != nil {
				return err
			}
			g, err := a.hub.SetGrant(ctx, u, u.Handle+"/"+slug, contact, human, agents)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s/%s may reach %s: person %v, agents %v\n", u.Handle, slug, contact, g.AllowHuman, g.AllowAgents)
			return nil
		})
}
