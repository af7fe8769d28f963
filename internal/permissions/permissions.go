// Package permissions is the channel's permission relay (DESIGN.md §19):
// Claude Code asks, through the agent's channel, whether it may use a
// tool; the agent's owner allows or denies under Approvals, and the
// verdict goes back to the session that asked as a permission.decided
// event. A request no one decided within Settings.PermissionTTL expires;
// one whose session has had no wait parked for PermissionWithdrawAfter
// (its channel went away) is withdrawn. Both are found where a request is
// read or decided, with the hub's clock, and then recorded.
//
// The hub's one list of approvals and its one Decide reach the requests
// through the hub.PermissionDesk a Desk is: a server registers it with
// hub.KeepPermissions. The MCP face asks (request_permission), the REST
// face and the dashboard show what ended.
package permissions

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Store is what the Desk reads of the hub's store (presence among it,
// which tells a session gone); it writes through hub.Commit.
type Store interface {
	hub.Reader
}

// Desk is the permission requests over the hub and its store; the faces
// decode, call one of its methods, and render.
type Desk struct {
	hub   *hub.Hub // sessions, presence, the clock, commits
	store Store
}

// New returns the Desk over h and its store.
func New(h *hub.Hub, s Store) *Desk { return &Desk{hub: h, store: s} }

// Input is a request_permission call: Claude Code's request and the
// session it is for.
type Input struct {
	RequestID    string
	ToolName     string
	Description  string
	InputPreview string
	Instance     string
}

var requestIDRE = regexp.MustCompile(`^[a-z]{5}$`)

// Request puts the session's permission request to the agent's owner
// (§19): an approval of kind permission, and a permission.request event
// to the owner. The same request_id of the same session while it waits
// returns the request stored then (a retry). The verdict comes back as
// permission.decided, for the session that asked.
func (d *Desk) Request(ctx context.Context, c *hub.Caller, in Input) (*hub.Permission, error) {
	if !requestIDRE.MatchString(in.RequestID) {
		return nil, hub.Invalid("", "request_id must be the five lowercase letters Claude Code gave the request (got %q)", hub.Echo(in.RequestID))
	}
	toolName, err := hub.CheckText("tool_name", strings.TrimSpace(in.ToolName), 1, hub.MaxToolName)
	if err != nil {
		return nil, err
	}
	description, err := hub.CheckText("description", in.Description, 0, hub.MaxPermissionText)
	if err != nil {
		return nil, err
	}
	preview, err := hub.CheckText("input_preview", in.InputPreview, 0, hub.MaxPermissionText)
	if err != nil {
		return nil, err
	}
	instance, err := d.hub.SeeInstance(ctx, c, in.Instance)
	if err != nil {
		return nil, err
	}
	var p *hub.Permission
	err = d.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		pending, err := tx.PendingPermissions(ctx, c.Agent.OwnerID)
		if err != nil {
			return nil, err
		}
		for _, old := range pending {
			if old.AgentID == c.Agent.ID && old.Instance == instance && old.RequestID == in.RequestID {
				p = old
				return nil, nil
			}
		}
		now := d.hub.Now()
		p = &hub.Permission{ID: hub.NewID(hub.IDPermission, now), AgentID: c.Agent.ID, AgentHandle: c.Agent.Handle(), OwnerID: c.Agent.OwnerID,
			Instance: instance, RequestID: in.RequestID, ToolName: toolName, Description: description, InputPreview: preview,
			Status: hub.PermissionPending, CreatedAt: now}
		data, _ := json.Marshal(map[string]any{"permission_id": p.ID, "agent": p.AgentHandle, "instance": instance,
			"request_id": p.RequestID, "tool_name": p.ToolName, "description": p.Description, "input_preview": p.InputPreview})
		return []*hub.Event{{RecipientID: p.OwnerID, Type: hub.EventPermissionRequest, Data: data, CreatedAt: now}}, tx.InsertPermission(ctx, p)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ending is how a pending request ended without a decision, as of now:
// the status and when, or "" while it still waits.
func (d *Desk) ending(ctx context.Context, r hub.Reader, p *hub.Permission) (string, time.Time, error) {
	expires := p.CreatedAt.Add(d.hub.Settings().PermissionTTL)
	last, err := d.hub.LastListened(ctx, r, p.AgentID, p.Instance)
	if err != nil {
		return "", time.Time{}, err
	}
	if last.Before(p.CreatedAt) {
		last = p.CreatedAt
	}
	gone := last.Add(hub.PermissionWithdrawAfter)
	now := d.hub.Now()
	switch {
	case gone.Before(expires) && now.After(gone):
		return hub.PermissionWithdrawn, gone, nil
	case !now.Before(expires):
		return hub.PermissionExpired, expires, nil
	}
	return "", time.Time{}, nil
}

// Pending is the owner's requests that still wait, for the hub's list of
// approvals; those found expired or withdrawn are recorded so, and the
// owner's pages hear they no longer wait.
func (d *Desk) Pending(ctx context.Context, u *hub.User) ([]*hub.Permission, error) {
	all, err := d.store.PendingPermissions(ctx, u.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	var waiting, ended []*hub.Permission
	for _, p := range all {
		status, at, err := d.ending(ctx, d.store, p)
		if err != nil {
			return nil, err
		}
		if status == "" {
			waiting = append(waiting, p)
			continue
		}
		p.Status, p.DecidedAt = status, at
		ended = append(ended, p)
	}
	if len(ended) == 0 {
		return waiting, nil
	}
	err = d.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		var events []*hub.Event
		for _, p := range ended {
			err := tx.EndPermission(ctx, p.ID, p.Status, "", p.DecidedAt)
			switch {
			case errors.Is(err, hub.ErrNoRows): // another replica got there first
			case err != nil:
				return nil, err
			default:
				events = append(events, hub.ApprovalDecided(u, hub.ApprovalPermission, p.ID, p.Status, d.hub.Now()))
			}
		}
		return events, nil
	})
	if err != nil {
		return nil, err
	}
	return waiting, nil
}

// ApprovalsAndEnded is the hub's Approvals and Ended, for a page that
// shows both.
func (d *Desk) ApprovalsAndEnded(ctx context.Context, u *hub.User) ([]hub.Approval, []*hub.Permission, error) {
	as, err := d.hub.Approvals(ctx, u)
	if err != nil {
		return nil, nil, err
	}
	ps, err := d.store.EndedPermissions(ctx, u.ID, d.hub.Now().Add(-hub.PermissionsShown))
	if err != nil {
		return nil, nil, hub.AsError(err)
	}
	return as, ps, nil
}

// Ended lists the owner's permission requests that expired or were
// withdrawn in the last PermissionsShown, latest first: the Approvals
// page says so.
func (d *Desk) Ended(ctx context.Context, u *hub.User) ([]*hub.Permission, error) {
	if _, err := d.Pending(ctx, u); err != nil {
		return nil, err
	}
	ps, err := d.store.EndedPermissions(ctx, u.ID, d.hub.Now().Add(-hub.PermissionsShown))
	if err != nil {
		return nil, hub.AsError(err)
	}
	return ps, nil
}

// Decide is the owner's verdict on a permission request (§19), as the
// hub's Decide passes it on: allow or deny, recorded with who and when;
// the session that asked hears permission.decided. Only the agent's owner
// may decide (anyone else: not_found); a request decided already,
// expired or withdrawn is a conflict that says which.
func (d *Desk) Decide(ctx context.Context, u *hub.User, id string, allow bool) (*hub.Permission, error) {
	var p *hub.Permission
	err := d.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		var err error
		p, err = tx.Permission(ctx, id)
		if errors.Is(err, hub.ErrNoRows) || (err == nil && p.OwnerID != u.ID) {
			return nil, hub.NotFound("no permission request %q waits for %s; list them with approvals", hub.Echo(id), u.Handle)
		}
		if err != nil {
			return nil, err
		}
		now := d.hub.Now()
		if p.Status == hub.PermissionPending {
			status, at, err := d.ending(ctx, tx, p)
			if err != nil {
				return nil, err
			}
			if status != "" {
				p.Status, p.DecidedAt = status, at
				if err := tx.EndPermission(ctx, p.ID, status, "", at); err != nil {
					return nil, err
				}
				return []*hub.Event{hub.ApprovalDecided(u, hub.ApprovalPermission, p.ID, status, now)}, hub.CommitThen(ended(p))
			}
		}
		if p.Status != hub.PermissionPending {
			return nil, ended(p)
		}
		p.Status, p.DecidedBy, p.DecidedAt = hub.PermissionDenied, u.ID, now
		if allow {
			p.Status = hub.PermissionAllowed
		}
		if err := tx.EndPermission(ctx, p.ID, p.Status, u.ID, now); err != nil {
			return nil, err
		}
		data, _ := json.Marshal(map[string]any{"permission_id": p.ID, "request_id": p.RequestID, "behavior": p.Behavior(),
			"tool_name": p.ToolName, "by": u.Handle, "instance": p.Instance})
		return []*hub.Event{{RecipientID: p.AgentID, Type: hub.EventPermissionDecided, Data: data, CreatedAt: now},
			hub.ApprovalDecided(u, hub.ApprovalPermission, p.ID, p.Status, now)}, nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ended is the conflict of deciding a request that no longer waits,
// saying why.
func ended(p *hub.Permission) error {
	at := hub.FormatTime(p.DecidedAt)
	switch p.Status {
	case hub.PermissionExpired:
		return &hub.Error{Kind: hub.KindConflict, Code: "permission_expired", Msg: "this permission request expired at " + at + ", undecided: the agent's session no longer waits for the answer (its terminal may have answered)"}
	case hub.PermissionWithdrawn:
		return &hub.Error{Kind: hub.KindConflict, Code: "permission_withdrawn", Msg: "this permission request was withdrawn at " + at + ": the session that asked went away"}
	}
	return &hub.Error{Kind: hub.KindConflict, Msg: "this permission request was " + p.Status + " already, at " + at}
}
