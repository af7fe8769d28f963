package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
)

func runAgent(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "agent", args, []verb{
		{"create", "create an agent for its owner", agentCreate},
		{"list", "list agents, with their modes", agentList},
		{"mode", "set an agent's mode: active, review or listen", agentMode},
		{"public", "make an agent public (anyone may talk to it), or private with --off", agentPublic},
		{"a2a", "expose an agent to A2A clients by an Agent Card, with its skills; --off takes the card away", agentA2A},
		{"remote", "remote A2A agents, which live elsewhere: add one by its Agent Card's URL, list, remove", agentRemote},
		{"archive", "archive an agent: its tokens stop working", agentArchive},
	})
}

// agentMode: palaver agent mode OWNER/SLUG active|review|listen.
func agentMode(ctx context.Context, e *env, args []string) error {
	return adminCommand(ctx, e, args, "agent mode OWNER/SLUG active|review|listen", 2, nil, func(a *admin) error {
		ag, err := a.hub.SetAgentMode(ctx, a.pos[0], a.pos[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s is now in %s mode\n", ag.Handle(), ag.Mode)
		return nil
	})
}

// agentPublic: palaver agent public --user OWNER --agent SLUG [--off].
func agentPublic(ctx context.Context, e *env, args []string) error {
	var slug string
	var off bool
	return asPerson(ctx, e, args, "agent public --user OWNER --agent SLUG [--off]", 0,
		func(fs *flag.FlagSet) {
			requiredFlag(fs, &slug, "agent", "SLUG", "the agent's slug")
			fs.BoolVar(&off, "off", false, "make it private again")
		},
		func(a *admin, u *hub.User) error {
			ag, err := a.hub.SetAgentPublic(ctx, u, slug, !off)
			if err != nil {
				return err
			}
			if ag.Public {
				fmt.Fprintf(e.stdout, "%s is now public: anyone on this server can add it to a conversation and talk to it without a grant\n", ag.Handle())
			} else {
				fmt.Fprintf(e.stdout, "%s is now private\n", ag.Handle())
			}
			return nil
		})
}

// skillFlags collects repeated --skill "NAME: DESCRIPTION" flags.
type skillFlags []hub.Skill

func (s *skillFlags) String() string { return "" }

func (s *skillFlags) Set(v string) error {
	*s = append(*s, tasks.ParseSkills(v)...)
	return nil
}

// agentA2A: palaver agent a2a --user OWNER --agent SLUG [--off]
// [--skill "NAME: DESCRIPTION"]... [--no-skills].
func agentA2A(ctx context.Context, e *env, args []string) error {
	var slug string
	var off, none bool
	var skills skillFlags
	return asPerson(ctx, e, args, `agent a2a --user OWNER --agent SLUG [--off] [--skill "NAME: DESCRIPTION"]... [--no-skills]`, 0,
		func(fs *flag.FlagSet) {
			requiredFlag(fs, &slug, "agent", "SLUG", "the agent's slug")
			fs.BoolVar(&off, "off", false, "take its Agent Card away: A2A clients no longer reach it")
			fs.Var(&skills, "skill", "`NAME: DESCRIPTION` of a skill its card lists; repeat for each (they replace those listed before)")
			fs.BoolVar(&none, "no-skills", false, "list no skills")
		},
		func(a *admin, u *hub.User) error {
			if none && len(skills) > 0 {
				return fmt.Errorf("--no-skills and --skill say different things: give one of them")
			}
			s := tasks.Setting{Exposed: !off}
			switch {
			case none:
				s.Skills = []hub.Skill{}
			case len(skills) > 0:
				s.Skills = skills
			}
			ea, err := tasks.New(a.hub, a.db).SetExposure(ctx, u, slug, s)
			if err != nil {
				return err
			}
			ag := ea.Agent
			if !ea.Exposure.Exposed {
				fmt.Fprintf(e.stdout, "%s is no longer exposed over A2A: its card and endpoint answer 404\n", ag.Handle())
				return nil
			}
			var ids []string
			for _, sk := range ea.Exposure.Skills {
				ids = append(ids, sk.ID)
			}
			listed := "no skills"
			if len(ids) > 0 {
				listed = "skills " + strings.Join(ids, ", ")
			}
			fmt.Fprintf(e.stdout, "%s is exposed over A2A, with %s: its card is at %s under the server's URL; who may call it is still who may reach it\n",
				ag.Handle(), listed, tasks.CardPath(ag))
			return nil
		})
}

// agentCreate: palaver agent create OWNER/SLUG [--description TEXT] [--goal TEXT].
func agentCreate(ctx context.Context, e *env, args []string) error {
	var spec hub.AgentSpec
	return adminCommand(ctx, e, args, "agent create OWNER/SLUG [--description TEXT] [--goal TEXT]", 1,
		func(fs *flag.FlagSet) {
			fs.StringVar(&spec.Description, "description", "", "what the agent is for")
			fs.StringVar(&spec.Goal, "goal", "", "the agent's current goal")
		},
		func(a *admin) error {
			spec.Handle = a.pos[0]
			ag, err := a.hub.CreateAgent(ctx, spec)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "created agent %s (%s)\n", ag.Handle(), ag.ID)
			return nil
		})
}

// agentList: palaver agent list [--user OWNER] [--archived].
func agentList(ctx context.Context, e *env, args []string) error {
	var owner string
	var archived bool
	return adminCommand(ctx, e, args, "agent list [--user OWNER] [--archived]", 0,
		func(fs *flag.FlagSet) {
			fs.StringVar(&owner, "user", "", "only this owner's agents")
			fs.BoolVar(&archived, "archived", false, "include archived agents")
		},
		func(a *admin) error {
			as, err := a.hub.Agents(ctx, owner, archived)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "HANDLE\tMODE\tPUBLIC\tCREATED\tARCHIVED\tDESCRIPTION")
			for _, ag := range as {
				public := ""
				if ag.Public {
					public = "public"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ag.Handle(), ag.Mode, public, day(ag.CreatedAt), day(ag.ArchivedAt), ag.Description)
			}
			return tw.Flush()
		})
}

// agentArchive: palaver agent archive OWNER/SLUG.
func agentArchive(ctx context.Context, e *env, args []string) error {
	return adminCommand(ctx, e, args, "agent archive OWNER/SLUG", 1, nil, func(a *admin) error {
		ag, err := a.hub.ArchiveAgent(ctx, a.pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "archived agent %s: its tokens no longer work\n", ag.Handle())
		return nil
	})
}
