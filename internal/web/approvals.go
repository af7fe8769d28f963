package web

import (
	"context"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// Approvals (§9): everything waiting for the person, oldest first, each
// with its context and its decisions.

func (w *Web) approvals(ctx context.Context, r *request) (*reply, error) {
	as, ended, err := w.desk.ApprovalsAndEnded(ctx, r.user)
	if err != nil {
		return nil, err
	}
	r.approvals = &as
	return &reply{page: "approvals", data: approvalsPage{Waiting: as, Ended: ended}}, nil
}

// approvalsPage is what waits, and the permission requests that ended
// undecided lately (§19), which the page says expired or were withdrawn.
type approvalsPage struct {
	Waiting []hub.Approval
	Ended   []*hub.Permission
}

// decide is one decision — approve (a held message with its words as the
// form left them), reject, or answer — through the hub's one entry point.
func (w *Web) decide(ctx context.Context, r *request) (*reply, error) {
	v := hub.Verdict{Action: r.PathValue("action"), Body: form(r, "body"), Answer: strings.TrimSpace(form(r, "answer"))}
	if choice := form(r, "choice"); choice != "" && v.Answer == "" {
		v.Answer = choice
	}
	d, err := w.hub.Decide(ctx, r.user, r.PathValue("id"), v)
	if err != nil {
		return nil, err
	}
	back := localPath(form(r, "back")) // the Contacts page decides asks too
	if back == "" {
		back = "/approvals"
	}
	return &reply{redirect: back, notice: decidedNotice(d)}, nil
}

// decidedNotice says what a decision did, in a line.
func decidedNotice(d *hub.Decided) string {
	switch {
	case d.Message != nil && d.Message.Status == hub.MessageRejected:
		return "Rejected; the agent hears it was."
	case d.Message != nil && d.Message.Authority == hub.AuthorityEdited:
		return "Sent with your edits (owner_edited)."
	case d.Message != nil:
		return "Sent as written (owner_approved)."
	case d.Question != nil:
		return "Answered: the agent hears it."
	case d.Ask != nil && d.Ask.Status == hub.AskApproved:
		return "Approved: " + strings.Join(d.Ask.Handles, ", ") + " may be reached by the agent that asked."
	case d.Ask != nil:
		return "Refused: the agent that asked may not reach " + strings.Join(d.Ask.Handles, ", ") + "."
	case d.Grant != nil && d.Grant.Status == hub.AskApproved:
		return "Approved: your agent " + grantReach(d.Grant) + "."
	case d.Grant != nil:
		return "Refused: your agent still may not reach @" + d.Grant.ContactHandle + " as it asked."
	case d.Project != nil && d.Project.Kind == hub.RequestProposal:
		return map[bool]string{true: "Approved: the project " + d.Project.Name + " is made.", false: "Refused: the project " + d.Project.Name + " is not made."}[d.Project.Status == hub.RequestApproved]
	case d.Project != nil:
		return map[bool]string{true: "Approved: " + d.Project.AgentHandle + " is in the project.", false: "Refused: " + d.Project.AgentHandle + " stays out of the project."}[d.Project.Status == hub.RequestApproved]
	case d.Permission != nil && d.Permission.Status == hub.PermissionAllowed:
		return "Allowed: the session may use " + d.Permission.ToolName + " this once."
	case d.Permission != nil:
		return "Denied: the session hears it."
	}
	return "Decided."
}

// grantReach says whom a granted request lets the agent reach.
func grantReach(g *hub.GrantRequest) string {
	switch {
	case g.AllowHuman && g.AllowAgents:
		return "may reach @" + g.ContactHandle + " and their agents"
	case g.AllowHuman:
		return "may reach @" + g.ContactHandle
	}
	return "may reach @" + g.ContactHandle + "'s agents"
}
