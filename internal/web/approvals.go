package web

import (
	"context"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// Approvals (§9): everything waiting for the person, oldest first, each
// with its context and its decisions.

func (w *Web) approvals(ctx context.Context, r *request) (*reply, error) {
	as, ended, err := w.hub.ApprovalsAndEnded(ctx, r.user)
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
		return "Let in: " + strings.Join(d.Ask.Handles, ", ") + " may be reached."
	case d.Ask != nil:
		return "Not let in."
	case d.Permission != nil && d.Permission.Status == hub.PermissionAllowed:
		return "Allowed: the session may use " + d.Permission.ToolName + " this once."
	case d.Permission != nil:
		return "Denied: the session hears it."
	}
	return "Decided."
}
