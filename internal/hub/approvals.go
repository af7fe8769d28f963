package hub

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// Approvals (§9): everything that waits for an owner's decision, in one list.

// Approval kinds.
const (
	ApprovalHeldMessage     = "held_message"
	ApprovalQuestion        = "question"
	ApprovalGrantRequest    = "grant_request"
	ApprovalInboundAsk      = "inbound_ask"
	ApprovalProjectProposal = "project_proposal"
	ApprovalProjectAccess   = "project_access"
	ApprovalContactRequest  = "contact_request"
	ApprovalPermission      = "permission" // a session asks to use a tool (§19)
)

// approvalKinds maps the kind of an id to the approval it names; a project
// request's id names a proposal or an access request.
var approvalKinds = map[string]string{
	IDMessage: ApprovalHeldMessage, IDQuestion: ApprovalQuestion,
	IDGrantRequest: ApprovalGrantRequest, IDInboundAsk: ApprovalInboundAsk,
	IDRequest: ApprovalProjectProposal, IDContact: ApprovalContactRequest,
	IDPermission: ApprovalPermission,
}

// Approval is one decision waiting for an owner (§9).
type Approval struct {
	Kind     string // one of the Approval kinds
	ID       string
	Agent    string // the agent's handle ("" for a contact request)
	At       time.Time
	Message  *Message        // for held messages
	Question *Question       // for questions
	Grant    *GrantRequest   // for grant requests
	Contact  string          // for grant requests: the contact's handle; for contact requests: who asks
	Ask      *InboundAsk     // for inbound asks
	Project  *ProjectRequest // for project proposals and access requests
	// ProjectName is, for an access request, the project's name.
	ProjectName string
	Permission  *Permission // for permission requests (§19)
}

// Approvals lists every decision waiting for the owner, oldest first, with
// its context.
func (h *Hub) Approvals(ctx context.Context, u *User) ([]Approval, error) {
	held, err := h.store.HeldMessages(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	qs, err := h.store.PendingQuestions(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	grants, err := h.store.GrantRequests(ctx, u.ID, "")
	if err != nil {
		return nil, AsError(err)
	}
	asks, err := h.store.InboundAsks(ctx, u.ID, true)
	if err != nil {
		return nil, AsError(err)
	}
	projects, err := h.store.PendingProjectRequests(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	contacts, err := h.Contacts(ctx, u)
	if err != nil {
		return nil, err
	}
	var perms []*Permission
	if h.permissions != nil {
		if perms, err = h.permissions.Pending(ctx, u); err != nil {
			return nil, err
		}
	}
	var out []Approval
	for _, p := range perms {
		out = append(out, Approval{Kind: ApprovalPermission, ID: p.ID, Agent: p.AgentHandle, At: p.CreatedAt, Permission: p})
	}
	for _, r := range projects {
		a := Approval{Kind: ApprovalProjectProposal, ID: r.ID, Agent: r.AgentHandle, At: r.CreatedAt, Project: r}
		if r.Kind == RequestAccess {
			p, err := h.store.Project(ctx, r.ProjectID)
			if err != nil {
				return nil, AsError(err)
			}
			a.Kind, a.ProjectName = ApprovalProjectAccess, p.Name
		}
		out = append(out, a)
	}
	for _, cv := range contacts {
		if cv.Contact.Status == ContactPending && cv.Contact.RequestedBy != u.ID {
			out = append(out, Approval{Kind: ApprovalContactRequest, ID: cv.Contact.ID, At: cv.Contact.RequestedAt, Contact: cv.Other.Handle})
		}
	}
	for _, r := range grants {
		a, err := h.store.AgentByID(ctx, r.AgentID)
		if err != nil {
			return nil, AsError(err)
		}
		contact, err := h.store.UserByID(ctx, r.ContactID)
		if err != nil {
			return nil, AsError(err)
		}
		out = append(out, Approval{Kind: ApprovalGrantRequest, ID: r.ID, Agent: a.Handle(), At: r.CreatedAt, Grant: r, Contact: contact.Handle})
	}
	for _, ask := range asks {
		a, err := h.store.AgentByID(ctx, ask.AgentID)
		if err != nil {
			return nil, AsError(err)
		}
		out = append(out, Approval{Kind: ApprovalInboundAsk, ID: ask.ID, Agent: a.Handle(), At: ask.CreatedAt, Ask: ask})
	}
	for _, m := range held {
		out = append(out, Approval{Kind: ApprovalHeldMessage, ID: m.ID, Agent: m.SenderHandle, At: m.CreatedAt, Message: m})
	}
	for _, q := range qs {
		out = append(out, Approval{Kind: ApprovalQuestion, ID: q.ID, Agent: q.AgentHandle, At: q.CreatedAt, Question: q})
	}
	slices.SortStableFunc(out, func(a, b Approval) int { return a.At.Compare(b.At) })
	return out, nil
}

// decided is the event that tells the person who decided (their other
// pages and scripts) that an approval no longer waits (§9).
func decided(u *User, kind, id, decision string, now time.Time) *Event {
	data, _ := json.Marshal(map[string]any{"id": id, "kind": kind, "decision": decision})
	return &Event{RecipientID: u.ID, Type: EventApprovalDecided, Data: data, CreatedAt: now}
}

// Verdicts an owner gives on an approval (§9).
const (
	VerdictApprove = "approve" // let a held message go (Body: edited first), grant, let in
	VerdictReject  = "reject"
	VerdictAnswer  = "answer" // a question's answer
)

// Verdict is an owner's decision on one approval.
type Verdict struct {
	Action string // VerdictApprove, VerdictReject or VerdictAnswer
	// Body, with approve of a held message, replaces the agent's words
	// (owner_edited); "" lets them go as written.
	Body string
	// Answer is a question's answer.
	Answer string
}

// Decided is what Decide did: the approval's kind and id, and the record as
// the decision left it (one of Message, Grant, Ask, Question, Project,
// Contact).
type Decided struct {
	Kind       string
	ID         string
	Message    *Message
	Grant      *GrantRequest
	Ask        *InboundAsk
	Question   *Question
	Project    *ProjectRequest
	Contact    *Contact
	Permission *Permission
}

// Decide is an owner's decision on any approval (§9), dispatched on the
// kind of its id: a held message (approve, edited or not, or reject); a
// grant request, an inbound ask, a project proposal or access request, a
// contact request, or a permission request (approve: allow, reject:
// deny); or a question (answer). Every face
// decides through it. An id that names nothing
// waiting for u is not_found; a verdict the kind does not take is invalid.
func (h *Hub) Decide(ctx context.Context, u *User, id string, v Verdict) (*Decided, error) {
	kind, ok := approvalKinds[idKind(id)]
	if !ok {
		return nil, notFound("no approval %q waits for %s; the ids come from the list of approvals", echo(id), u.Handle)
	}
	switch {
	case v.Action != VerdictApprove && v.Action != VerdictReject && v.Action != VerdictAnswer:
		return nil, invalid("", "a decision is approve, reject or answer (got %q)", echo(v.Action))
	case kind == ApprovalQuestion && v.Action != VerdictAnswer:
		return nil, invalid("", "a question is answered, not approved or rejected: give the answer")
	case kind != ApprovalQuestion && v.Action == VerdictAnswer:
		return nil, invalid("", "only a question takes an answer; approve or reject this %s", strings.ReplaceAll(kind, "_", " "))
	case v.Body != "" && (kind != ApprovalHeldMessage || v.Action != VerdictApprove):
		return nil, invalid("", "new words go only with approving a held message")
	case v.Answer != "" && v.Action != VerdictAnswer:
		return nil, invalid("", "an answer goes only with answering a question")
	}
	d := &Decided{Kind: kind, ID: id}
	approve := v.Action == VerdictApprove
	var err error
	switch kind {
	case ApprovalHeldMessage:
		d.Message, err = h.DecideHeld(ctx, u, id, Decision{Approve: approve, Body: v.Body})
	case ApprovalGrantRequest:
		d.Grant, err = h.DecideGrantRequest(ctx, u, id, approve)
	case ApprovalInboundAsk:
		d.Ask, err = h.DecideInbound(ctx, u, id, approve)
	case ApprovalQuestion:
		d.Question, err = h.AnswerQuestion(ctx, u, id, v.Answer)
	case ApprovalProjectProposal:
		if d.Project, err = h.DecideProjectRequest(ctx, u, id, approve); err == nil && d.Project.Kind == RequestAccess {
			d.Kind = ApprovalProjectAccess
		}
	case ApprovalContactRequest:
		d.Contact, err = h.DecideContactRequest(ctx, u, id, approve)
	case ApprovalPermission:
		if h.permissions == nil {
			return nil, notFound("no permission request %q waits for %s; list them with approvals", echo(id), u.Handle)
		}
		d.Permission, err = h.permissions.Decide(ctx, u, id, approve)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}
