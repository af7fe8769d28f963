package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// Approvals (§9): one list of what waits for the person, and one way to
// decide each.

// approvalView is one decision waiting for the person: what every kind
// has, and the part its kind adds (the other parts left out).
type approvalView struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Agent     string `json:"agent"`
	At        string `json:"at"`
	Untrusted bool   `json:"untrusted"`
	// ConversationID is a held message's conversation, or the one a
	// question is about ("" for none); Reason, why an agent asks for a
	// grant or a project. They are pointers as two kinds share each.
	ConversationID *string `json:"conversation_id,omitempty"`
	Reason         *string `json:"reason,omitempty"`
	// Description is a project's (a proposal's or an access request's),
	// or what a tool would do (a permission request).
	Description *string `json:"description,omitempty"`
	*heldApproval
	*questionApproval
	*grantApproval
	*askApproval
	*projectApproval
	*contactApproval
	*permissionApproval
}

type heldApproval struct {
	Body    string `json:"body"`
	Summary string `json:"summary"`
}

type questionApproval struct {
	Question string   `json:"question"`
	Options  []string `json:"options"`
}

type grantApproval struct {
	Contact     string `json:"contact"`
	AllowHuman  bool   `json:"allow_human"`
	AllowAgents bool   `json:"allow_agents"`
}

type askApproval struct {
	Handles []string `json:"handles"`
}

// projectApproval is a proposal, or a request into a project (which
// names it by its id and the project's name).
type projectApproval struct {
	RequestKind string `json:"request_kind"`
	Name        string `json:"name"`
	ProjectID   string `json:"project_id,omitempty"`
}

type contactApproval struct {
	From string `json:"from"`
}

// permissionApproval is a session asking to use a tool (§19): Claude
// Code's words for the agent, untrusted like the rest.
type permissionApproval struct {
	Instance     string `json:"instance"`
	RequestID    string `json:"request_id"`
	ToolName     string `json:"tool_name"`
	InputPreview string `json:"input_preview"`
	Status       string `json:"status"`
	DecidedAt    string `json:"decided_at,omitempty"`
	Behavior     string `json:"behavior,omitempty"`
}

// newPermissionView is a permission request as the approvals list and a
// decision show it.
func newPermissionView(p *hub.Permission) approvalView {
	v := approvalView{ID: p.ID, Kind: hub.ApprovalPermission, Agent: p.AgentHandle, At: timeText(p.CreatedAt), Untrusted: true,
		Description: &p.Description,
		permissionApproval: &permissionApproval{Instance: p.Instance, RequestID: p.RequestID, ToolName: p.ToolName,
			InputPreview: p.InputPreview, Status: p.Status, Behavior: p.Behavior()}}
	if !p.DecidedAt.IsZero() {
		v.DecidedAt = timeText(p.DecidedAt)
	}
	return v
}

func newApprovalView(it hub.Approval) approvalView {
	if it.Permission != nil {
		return newPermissionView(it.Permission)
	}
	v := approvalView{ID: it.ID, Kind: it.Kind, Agent: it.Agent, At: timeText(it.At), Untrusted: true}
	switch {
	case it.Message != nil:
		v.ConversationID = &it.Message.ConversationID
		v.heldApproval = &heldApproval{Body: it.Message.Body, Summary: it.Message.Summary}
	case it.Question != nil:
		v.ConversationID = &it.Question.ConversationID
		v.questionApproval = &questionApproval{Question: it.Question.Question, Options: it.Question.Options}
	case it.Grant != nil:
		v.Reason = &it.Grant.Reason
		v.grantApproval = &grantApproval{Contact: it.Contact, AllowHuman: it.Grant.AllowHuman, AllowAgents: it.Grant.AllowAgents}
	case it.Ask != nil:
		v.askApproval = &askApproval{Handles: it.Ask.Handles}
	case it.Project != nil:
		v.Reason = &it.Project.Reason
		v.Description = &it.Project.Description
		v.projectApproval = &projectApproval{RequestKind: it.Project.Kind, Name: it.Project.Name}
		if it.Project.Kind == hub.RequestAccess {
			v.ProjectID, v.Name = it.Project.ProjectID, it.ProjectName
		}
	case it.Kind == hub.ApprovalContactRequest:
		v.contactApproval = &contactApproval{From: it.Contact}
	}
	return v
}

type approvalsView struct {
	Approvals []approvalView `json:"approvals"`
	// EndedPermissions are the permission requests that expired or were
	// withdrawn lately, undecided.
	EndedPermissions []approvalView `json:"ended_permissions"`
}

func (a *API) approvals(ctx context.Context, r *request) (any, error) {
	items, ended, err := a.desk.ApprovalsAndEnded(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return approvalsView{Approvals: viewsOf(items, newApprovalView), EndedPermissions: viewsOf(ended, newPermissionView)}, nil
}

// decidedView is a decision's outcome: what was decided, and its status.
type decidedView struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// answeredView is a question answered.
type answeredView struct {
	ID     string `json:"id"`
	Answer string `json:"answer"`
}

// projectDecidedView is a project request decided, with its project (the
// one approval made, for a proposal).
type projectDecidedView struct {
	decidedView
	ProjectID string `json:"project_id"`
}

// messageDecidedView is a held message let go or not: its seq once sent,
// and the authority it went out with (§7).
type messageDecidedView struct {
	decidedView
	Seq       int64  `json:"seq"`
	Authority string `json:"authority"`
}

// decide gives a verdict (approve, reject or answer) on whatever waits
// under the id; the body may carry a held message's new words or a
// question's answer.
func (a *API) decide(action string) handler {
	return func(ctx context.Context, r *request) (any, error) {
		var in struct {
			Body   string `json:"body"`
			Answer string `json:"answer"`
		}
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		d, err := a.hub.Decide(ctx, r.user, r.PathValue("id"), hub.Verdict{Action: action, Body: in.Body, Answer: in.Answer})
		if err != nil {
			return nil, err
		}
		switch {
		case d.Grant != nil:
			return decidedView{ID: d.Grant.ID, Status: d.Grant.Status}, nil
		case d.Ask != nil:
			return decidedView{ID: d.Ask.ID, Status: d.Ask.Status}, nil
		case d.Question != nil:
			return answeredView{ID: d.Question.ID, Answer: d.Question.Answer}, nil
		case d.Project != nil:
			return projectDecidedView{decidedView: decidedView{ID: d.Project.ID, Status: d.Project.Status}, ProjectID: d.Project.ProjectID}, nil
		case d.Contact != nil:
			return decidedView{ID: d.Contact.ID, Status: d.Contact.Status}, nil
		case d.Permission != nil:
			return newPermissionView(d.Permission), nil
		}
		return messageDecidedView{decidedView: decidedView{ID: d.Message.ID, Status: d.Message.Status}, Seq: d.Message.Seq, Authority: d.Message.Authority}, nil
	}
}
