package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/palaverhq/palaver/internal/hub"
)

func runApprovals(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "approvals", args, []verb{
		{"list", "list what waits for a person's decision, oldest first", approvalsList},
		{"approve", "approve a held message or a request (allow a permission request), by its id", approvalsApprove},
		{"reject", "reject a held message or a request (deny a permission request), by its id", approvalsReject},
		{"answer", "answer an agent's question", approvalsAnswer},
	})
}

// approvalsList: palaver approvals list --user OWNER — everything waiting
// for the owner's decision, oldest first.
func approvalsList(ctx context.Context, e *env, args []string) error {
	var user string
	return adminCommand(ctx, e, args, "approvals list --user OWNER", 0, userFlag(&user), func(a *admin) error {
		u, err := a.person(ctx, user)
		if err != nil {
			return err
		}
		items, err := a.hub.Approvals(ctx, u)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKIND\tAGENT\tWHEN\tCONTEXT")
		for _, it := range items {
			var what string
			switch {
			case it.Grant != nil:
				what = fmt.Sprintf("reach to %s (person %v, agents %v): %s", it.Contact, it.Grant.AllowHuman, it.Grant.AllowAgents, oneLine(hub.Preview(it.Grant.Reason, 80)))
			case it.Ask != nil:
				what = "asks to talk to " + strings.Join(it.Ask.Handles, ", ")
			case it.Message != nil:
				what = fmt.Sprintf("in %s: %s", it.Message.ConversationID, oneLine(hub.Preview(it.Message.Body, 80)))
			case it.Project != nil && it.Project.Kind == hub.RequestProposal:
				what = fmt.Sprintf("proposes project %q: %s", oneLine(it.Project.Name), oneLine(hub.Preview(it.Project.Reason, 60)))
			case it.Project != nil:
				what = fmt.Sprintf("asks into project %q (%s): %s", oneLine(it.ProjectName), it.Project.ProjectID, oneLine(hub.Preview(it.Project.Reason, 60)))
			case it.Kind == hub.ApprovalContactRequest:
				what = it.Contact + " asks to be your contact"
			case it.Permission != nil:
				p := it.Permission
				what = fmt.Sprintf("session %s asks to use %s: %s %s", p.Instance, oneLine(p.ToolName), oneLine(hub.Preview(p.Description, 60)), oneLine(hub.Preview(p.InputPreview, 60)))
			case it.Question != nil:
				what = oneLine(hub.Preview(it.Question.Question, 80))
				if len(it.Question.Options) > 0 {
					what += " [" + strings.Join(it.Question.Options, " | ") + "]"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.ID, it.Kind, it.Agent, day(it.At), what)
		}
		return tw.Flush()
	})
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// approvalsApprove: palaver approvals approve ID --user OWNER [--edit TEXT]
// — lets a held message go (changed first with --edit), grants a grant
// request (gr_…), or lets an agent in (in_…).
func approvalsApprove(ctx context.Context, e *env, args []string) error {
	var user, edit string
	return adminCommand(ctx, e, args, "approvals approve ID --user OWNER [--edit TEXT]", 1,
		func(fs *flag.FlagSet) {
			userFlag(&user)(fs)
			fs.StringVar(&edit, "edit", "", "for a held message: the words to send instead (the original is kept for audit)")
		},
		func(a *admin) error {
			return decide(ctx, e, a, user, hub.Verdict{Action: hub.VerdictApprove, Body: edit})
		})
}

// approvalsReject: palaver approvals reject ID --user OWNER.
func approvalsReject(ctx context.Context, e *env, args []string) error {
	var user string
	return adminCommand(ctx, e, args, "approvals reject ID --user OWNER", 1, userFlag(&user),
		func(a *admin) error { return decide(ctx, e, a, user, hub.Verdict{Action: hub.VerdictReject}) })
}

// decide gives the verdict on whatever waits under the first argument's id,
// and says what it did.
func decide(ctx context.Context, e *env, a *admin, user string, v hub.Verdict) error {
	u, err := a.person(ctx, user)
	if err != nil {
		return err
	}
	d, err := a.hub.Decide(ctx, u, a.pos[0], v)
	if err != nil {
		return err
	}
	switch {
	case d.Grant != nil:
		fmt.Fprintf(e.stdout, "grant request %s: %s\n", d.Grant.ID, d.Grant.Status)
	case d.Ask != nil:
		fmt.Fprintf(e.stdout, "inbound ask %s: %s\n", d.Ask.ID, d.Ask.Status)
	case d.Question != nil:
		fmt.Fprintf(e.stdout, "answered %s: %s\n", d.Question.ID, d.Question.Answer)
	case d.Project != nil:
		fmt.Fprintf(e.stdout, "project request %s: %s %s\n", d.Project.ID, d.Project.Status, d.Project.ProjectID)
	case d.Contact != nil:
		fmt.Fprintf(e.stdout, "contact request %s: %s\n", d.Contact.ID, d.Contact.Status)
	case d.Permission != nil:
		fmt.Fprintf(e.stdout, "permission request %s (%s, %s): %s\n", d.Permission.ID, d.Permission.RequestID, d.Permission.ToolName, d.Permission.Status)
	case d.Message.Status == hub.MessageRejected:
		fmt.Fprintf(e.stdout, "rejected %s: it is never delivered\n", d.Message.ID)
	default:
		fmt.Fprintf(e.stdout, "approved %s as seq %d (%s)\n", d.Message.ID, d.Message.Seq, d.Message.Authority)
	}
	return nil
}

// approvalsAnswer: palaver approvals answer QUESTION_ID ANSWER --user OWNER.
func approvalsAnswer(ctx context.Context, e *env, args []string) error {
	var user string
	return adminCommand(ctx, e, args, "approvals answer QUESTION_ID ANSWER --user OWNER", 2, userFlag(&user), func(a *admin) error {
		return decide(ctx, e, a, user, hub.Verdict{Action: hub.VerdictAnswer, Answer: a.pos[1]})
	})
}
