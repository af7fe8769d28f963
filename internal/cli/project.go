package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/palaverhq/palaver/internal/hub"
)

func runProject(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "project", args, []verb{
		{"create", "create a project", projectCreate},
		{"list", "list a person's projects", projectList},
		{"show", "show a project: members, agents, threads and items", projectShow},
		{"update", "rename a project, describe it, or cap what agents may do in it", projectUpdate},
		{"archive", "archive a project", projectArchive(true)},
		{"unarchive", "bring an archived project back", projectArchive(false)},
		{"add-member", "add a person to a project", projectAddMember},
		{"remove-member", "remove a person from a project", projectRemoveMember},
		{"add-agent", "bring one of your agents into a project", projectAddAgent},
		{"remove-agent", "take an agent out of a project", projectRemoveAgent},
	})
}

// projectCreate: palaver project create NAME --user OWNER [--description TEXT].
func projectCreate(ctx context.Context, e *env, args []string) error {
	var description string
	return asPerson(ctx, e, args, "project create NAME --user OWNER [--description TEXT]", 1,
		func(fs *flag.FlagSet) { fs.StringVar(&description, "description", "", "what the project is for") },
		func(a *admin, u *hub.User) error {
			p, err := a.hub.CreateProject(ctx, u, a.pos[0], description)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "created project %s (%s), owned by %s\n", p.Name, p.ID, u.Handle)
			return nil
		})
}

// projectList: palaver project list --user HANDLE.
func projectList(ctx context.Context, e *env, args []string) error {
	return asPerson(ctx, e, args, "project list --user HANDLE", 0, nil, func(a *admin, u *hub.User) error {
		ps, err := a.hub.Projects(ctx, u)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tOWNER\tAGENT CAP\tCREATED")
		for _, p := range ps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.ID, oneLine(p.Name), p.OwnerHandle, orDash(p.AgentCap), day(p.CreatedAt))
		}
		return tw.Flush()
	})
}

// projectShow: palaver project show PROJECT_ID --user HANDLE — members,
// agents with their access, threads and items.
func projectShow(ctx context.Context, e *env, args []string) error {
	return asPerson(ctx, e, args, "project show PROJECT_ID --user HANDLE", 1, nil, func(a *admin, u *hub.User) error {
		d, err := a.hub.Project(ctx, u, a.pos[0])
		if err != nil {
			return err
		}
		p := d.Project
		fmt.Fprintf(e.stdout, "%s (%s), owned by %s; you are its %s\n", oneLine(p.Name), p.ID, p.OwnerHandle, d.Access)
		if p.AgentCap != "" {
			fmt.Fprintf(e.stdout, "every agent is capped at %s here\n", p.AgentCap)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		for _, m := range d.Members {
			fmt.Fprintf(tw, "member\t%s\t%s\n", m.Handle, oneLine(m.Name))
		}
		for _, ag := range d.Agents {
			line := ag.Access
			if ag.Review {
				line += " review"
			}
			fmt.Fprintf(tw, "agent\t%s\t%s\n", ag.Handle, line)
		}
		for _, t := range d.Threads {
			fmt.Fprintf(tw, "thread\t%s\t%s (%d messages)\n", t.ID, oneLine(t.Title), t.LastSeq)
		}
		for _, it := range d.Items {
			fmt.Fprintf(tw, "item\t%s\t[%s] %s: %s\n", it.ID, it.Status, it.Kind, oneLine(it.Title))
		}
		return tw.Flush()
	})
}

// projectUpdate: palaver project update PROJECT_ID --user OWNER [--name N]
// [--description D] [--cap none|listen|off].
func projectUpdate(ctx context.Context, e *env, args []string) error {
	var name, description, agentCap string
	return asPerson(ctx, e, args, "project update PROJECT_ID --user OWNER [--name NAME] [--description TEXT] [--cap none|listen|off]", 1,
		func(fs *flag.FlagSet) {
			fs.StringVar(&name, "name", "", "a new name")
			fs.StringVar(&description, "description", "", "a new description")
			fs.StringVar(&agentCap, "cap", "", "the most any agent may do here: none, listen or off")
		},
		func(a *admin, u *hub.User) error {
			var up hub.ProjectUpdate
			set := map[string]bool{}
			a.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
			if set["name"] {
				up.Name = &name
			}
			if set["description"] {
				up.Description = &description
			}
			if set["cap"] {
				up.AgentCap = &agentCap
			}
			if len(set) == 0 {
				return fmt.Errorf("nothing to change: give --name, --description or --cap")
			}
			p, err := a.hub.UpdateProject(ctx, u, a.pos[0], up)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "updated %s: %s, agent cap %s\n", p.ID, oneLine(p.Name), orDash(p.AgentCap))
			return nil
		})
}

// projectArchive: palaver project archive|unarchive PROJECT_ID --user OWNER.
func projectArchive(archived bool) func(context.Context, *env, []string) error {
	verb := map[bool]string{true: "archive", false: "unarchive"}[archived]
	return func(ctx context.Context, e *env, args []string) error {
		return asPerson(ctx, e, args, "project "+verb+" PROJECT_ID --user OWNER", 1, nil, func(a *admin, u *hub.User) error {
			p, err := a.hub.UpdateProject(ctx, u, a.pos[0], hub.ProjectUpdate{Archived: &archived})
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%sd %s\n", verb, p.ID)
			return nil
		})
	}
}

// projectAddMember: palaver project add-member PROJECT_ID HANDLE --user OWNER.
func projectAddMember(ctx context.Context, e *env, args []string) error {
	return asPerson(ctx, e, args, "project add-member PROJECT_ID HANDLE --user OWNER", 2, nil, func(a *admin, u *hub.User) error {
		if _, err := a.hub.AddMember(ctx, u, a.pos[0], a.pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s is a member of %s\n", a.pos[1], a.pos[0])
		return nil
	})
}

// projectRemoveMember: palaver project remove-member PROJECT_ID HANDLE --user HANDLE.
func projectRemoveMember(ctx context.Context, e *env, args []string) error {
	return asPerson(ctx, e, args, "project remove-member PROJECT_ID HANDLE --user HANDLE", 2, nil, func(a *admin, u *hub.User) error {
		if err := a.hub.RemoveMember(ctx, u, a.pos[0], a.pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s left %s, with their agents\n", a.pos[1], a.pos[0])
		return nil
	})
}

// projectAddAgent: palaver project add-agent PROJECT_ID SLUG --user OWNER
// [--access speak|listen] [--review] — brings one's own agent in, or
// changes its access and review there.
func projectAddAgent(ctx context.Context, e *env, args []string) error {
	var access string
	var review bool
	return asPerson(ctx, e, args, "project add-agent PROJECT_ID SLUG --user OWNER [--access speak|listen] [--review]", 2,
		func(fs *flag.FlagSet) {
			fs.StringVar(&access, "access", hub.AccessSpeak, "speak or listen")
			fs.BoolVar(&review, "review", false, "hold its sends here for your review")
		},
		func(a *admin, u *hub.User) error {
			pa, err := a.hub.SetProjectAgent(ctx, u, a.pos[0], a.pos[1], access, review)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s is in %s with %s (review %v)\n", pa.Handle, pa.ProjectID, pa.Access, pa.Review)
			return nil
		})
}

// projectRemoveAgent: palaver project remove-agent PROJECT_ID AGENT --user HANDLE.
func projectRemoveAgent(ctx context.Context, e *env, args []string) error {
	return asPerson(ctx, e, args, "project remove-agent PROJECT_ID AGENT --user HANDLE", 2, nil, func(a *admin, u *hub.User) error {
		ag, err := a.hub.RemoveProjectAgent(ctx, u, a.pos[0], a.pos[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s left %s\n", ag.Handle(), a.pos[0])
		return nil
	})
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
