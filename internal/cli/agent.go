package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/palaverhq/palaver/internal/hub"
)

func runAgent(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "agent", args, map[string]func(context.Context, *env, []string) error{
		"create":  agentCreate,
		"list":    agentList,
		"archive": agentArchive,
	})
}

// agentCreate: palaver agent create OWNER/SLUG [--description TEXT] [--goal TEXT].
func agentCreate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent create", "agent create OWNER/SLUG [--description TEXT] [--goal TEXT] [--database PATH]")
	cfg := adminFlags(e, fs)
	desc := fs.String("description", "", "what the agent is for")
	goal := fs.String("goal", "", "the agent's current goal")
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
	ag, err := a.hub.CreateAgent(ctx, hub.AgentSpec{Handle: pos[0], Description: *desc, Goal: *goal})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created agent %s (%s)\n", ag.Handle(), ag.ID)
	return nil
}

// agentList: palaver agent list [--user OWNER] [--archived].
func agentList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent list", "agent list [--user OWNER] [--archived] [--database PATH]")
	cfg := adminFlags(e, fs)
	owner := fs.String("user", "", "only this owner's agents")
	archived := fs.Bool("archived", false, "include archived agents")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0); err != nil {
		return err
	}
	a, err := openAdmin(ctx, *cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	as, err := a.hub.Agents(ctx, *owner, *archived)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HANDLE\tMODE\tCREATED\tARCHIVED\tDESCRIPTION")
	for _, ag := range as {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ag.Handle(), ag.Mode, day(ag.CreatedAt), day(ag.ArchivedAt), ag.Description)
	}
	return tw.Flush()
}

// agentArchive: palaver agent archive OWNER/SLUG.
func agentArchive(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent archive", "agent archive OWNER/SLUG [--database PATH]")
	cfg := adminFlags(e, fs)
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
	ag, err := a.hub.ArchiveAgent(ctx, pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "archived agent %s: its tokens no longer work\n", ag.Handle())
	return nil
}
