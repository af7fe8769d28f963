package hub

import (
	"context"
	"encoding/json"
	"errors"
)

// Agents never make a project real alone (§8): create_project is a
// proposal and request_project_access a request (internal/projects makes
// them), each waiting on the agent's owner under Approvals. The owner's
// decision is here, as Decide makes it for every approval kind; the agent
// hears project.approved or project.rejected.

// DecideProjectRequest is the owner's answer to a proposal or an access
// request (§8). Approving a proposal makes the project, owned by u with the
// agent in it to speak; approving an access request brings the agent into
// the project to speak. The agent hears project.approved (with the
// project's id) or project.rejected. The same decision again is answered
// the same; the other one is a conflict.
func (h *Hub) DecideProjectRequest(ctx context.Context, u *User, id string, approve bool) (*ProjectRequest, error) {
	var r *ProjectRequest
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		var err error
		r, err = tx.ProjectRequest(ctx, id)
		if errors.Is(err, ErrNoRows) || (err == nil && r.OwnerID != u.ID) {
			return nil, notFound("no project request %q waits for %s", echo(id), u.Handle)
		}
		if err != nil {
			return nil, err
		}
		if r.Status != RequestPending {
			return nil, requestDecidedAlready(r, approve)
		}
		now := h.now()
		r.DecidedBy, r.DecidedAt, r.Status = u.ID, now, RequestRejected
		if approve {
			r.Status = RequestApproved
			if r.Kind == RequestProposal {
				r.ProjectID = NewID(IDProject, now)
			}
		}
		// Claim the decision first: of two deciding at once, the second
		// finds it taken and answers as if it came later.
		if err := tx.DecideProjectRequest(ctx, r); errors.Is(err, ErrNoRows) {
			if r, err = tx.ProjectRequest(ctx, id); err != nil {
				return nil, err
			}
			return nil, requestDecidedAlready(r, approve)
		} else if err != nil {
			return nil, err
		}
		var events []*Event
		if approve {
			if events, err = h.grantProjectRequest(ctx, tx, u, r); err != nil {
				return nil, err
			}
		}
		typ := EventProjectRejected
		if approve {
			typ = EventProjectApproved
		}
		data, _ := json.Marshal(map[string]any{"request_id": r.ID, "kind": r.Kind, "project_id": r.ProjectID, "decision": r.Status})
		return append(events, &Event{RecipientID: r.AgentID, Type: typ, Data: data, CreatedAt: now},
			decided(u, ApprovalProjectProposal, r.ID, r.Status, now)), nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// requestDecidedAlready answers a decision of a request already decided:
// the same decision again gets the same answer, the other a conflict.
func requestDecidedAlready(r *ProjectRequest, approve bool) error {
	if (r.Status == RequestApproved) == approve {
		return nil
	}
	return &Error{Kind: KindConflict, Msg: "this request was already " + r.Status}
}

// grantProjectRequest carries out an approved request: the proposed
// project made (its id is r.ProjectID), or the project the agent asked
// into, with the agent in it to speak.
func (h *Hub) grantProjectRequest(ctx context.Context, tx Tx, u *User, r *ProjectRequest) ([]*Event, error) {
	var p *Project
	if r.Kind == RequestProposal {
		p = &Project{ID: r.ProjectID, OwnerID: u.ID, OwnerHandle: u.Handle, Name: r.Name, Description: r.Description,
			CreatedAt: r.DecidedAt, UpdatedAt: r.DecidedAt}
		if err := insertProject(ctx, tx, p); err != nil {
			return nil, err
		}
	} else {
		if err := tx.LockProject(ctx, r.ProjectID); err != nil {
			return nil, err
		}
		var err error
		p, err = memberProject(ctx, tx, u, r.ProjectID)
		if err != nil && AsError(err).Kind != KindNotFound {
			return nil, err
		}
		if err != nil || !p.ArchivedAt.IsZero() {
			return nil, invalid("", "the project this agent asked into is no longer open to you; reject the request instead")
		}
	}
	a, err := tx.AgentByID(ctx, r.AgentID)
	if err != nil {
		return nil, err
	}
	if a.Archived() {
		return nil, invalid("", "%s is archived; reject the request instead", a.Handle())
	}
	// An agent brought in meanwhile keeps the access its owner gave it.
	if _, err := tx.ProjectAgent(ctx, p.ID, a.ID); errors.Is(err, ErrNoRows) {
		if err := tx.PutProjectAgent(ctx, &ProjectAgent{ProjectID: p.ID, AgentID: a.ID, Access: AccessSpeak, AddedAt: r.DecidedAt}); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	return syncThreads(ctx, tx, p, r.DecidedAt)
}
