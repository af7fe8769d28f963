package projects

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// Agents never make a project real alone (§8): create_project is a
// proposal and request_project_access a request, each waiting on the
// agent's owner under the hub's Approvals, which decides them. The owner
// hears project.request.

// ProposeProject is create_project: a proposal of a project the agent's
// owner would own, returned pending.
func (x *Projects) ProposeProject(ctx context.Context, c *hub.Caller, name, description, reason, instance string) (*hub.ProjectRequest, error) {
	name, description, err := hub.CheckProject(name, description)
	if err != nil {
		return nil, err
	}
	r := &hub.ProjectRequest{Kind: hub.RequestProposal, Name: name, Description: description}
	return x.requestProject(ctx, c, r, reason, instance)
}

// RequestProjectAccess is request_project_access: the agent asks its owner
// to bring it into one of the owner's projects (list_projects' not_joined).
// A project that is not its owner's, or does not exist, is not_found.
func (x *Projects) RequestProjectAccess(ctx context.Context, c *hub.Caller, projectID, reason string) (*hub.ProjectRequest, error) {
	if projectID == "" {
		return nil, hub.Invalid("", "project_id is required: take it from not_joined in list_projects")
	}
	if err := x.hub.HomeOnFirstUse(ctx, c.Agent.OwnerID, projectID); err != nil {
		return nil, err
	}
	if _, err := x.hub.MemberProject(ctx, c.Owner, projectID); err != nil {
		return nil, hub.AsOutcome(err)
	}
	if _, err := x.store.ProjectAgent(ctx, projectID, c.Agent.ID); err == nil {
		return nil, hub.Invalid("", "you are in this project already; open its threads with open_thread")
	} else if !errors.Is(err, hub.ErrNoRows) {
		return nil, hub.AsError(err)
	}
	return x.requestProject(ctx, c, &hub.ProjectRequest{Kind: hub.RequestAccess, ProjectID: projectID}, reason, "")
}

// requestProject stores a request of the caller for its owner to decide,
// and tells the owner with project.request.
func (x *Projects) requestProject(ctx context.Context, c *hub.Caller, r *hub.ProjectRequest, reason, instance string) (*hub.ProjectRequest, error) {
	reason, err := hub.CheckText("reason", strings.TrimSpace(reason), 0, hub.MaxQuestion)
	if err != nil {
		return nil, err
	}
	if r.Instance, err = x.hub.SeeInstance(ctx, c, instance); err != nil {
		return nil, err
	}
	now := x.hub.Now()
	r.ID, r.AgentID, r.AgentHandle, r.OwnerID, r.Reason, r.Status, r.CreatedAt = hub.NewID(hub.IDRequest, now), c.Agent.ID, c.Agent.Handle(), c.Agent.OwnerID, reason, hub.RequestPending, now
	data, _ := json.Marshal(map[string]any{"request_id": r.ID, "kind": r.Kind, "agent": c.Agent.Handle(), "name": r.Name, "project_id": r.ProjectID})
	err = x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		return []*hub.Event{{RecipientID: c.Agent.OwnerID, Type: hub.EventProjectRequest, Data: data, CreatedAt: now}}, tx.InsertProjectRequest(ctx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}
