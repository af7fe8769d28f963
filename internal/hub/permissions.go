package hub

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"
)

// Permission requests (§19): Claude Code asks, through the agent's
// channel, whether it may use a tool; the agent's owner allows or denies
// under Approvals, and the verdict goes back to the session that asked as
// a permission.decided event. A request no one decided within
// Settings.PermissionTTL expires; one whose session has had no wait
// parked for PermissionWithdrawAfter (its channel went away) is
// withdrawn. Both are found where a request is read or decided, with the
// hub's clock, and then recorded.

// Permission statuses, and the behaviours a verdict carries (Claude
// Code's words).
const (
	PermissionPending   = "pending"
	PermissionAllowed   = "allowed"
	PermissionDenied    = "denied"
	PermissionExpired   = "expired"
	PermissionWithdrawn = "withdrawn"

	BehaviorAllow = "allow"
	BehaviorDeny  = "deny"
)

// Events of permission requests.
const (
	EventPermissionRequest = "permission.request" // to an owner: its agent's session asks to use a tool
	EventPermissionDecided = "permission.decided" // to the agent, for the session that asked: allow or deny
)

// Limits of a permission request's words (§19).
const (
	MaxToolName          = 200
	MaxPermissionText    = 2000
	DefaultPermissionTTL = 10 * time.Minute
	// PermissionWithdrawAfter: a pending request whose session has had
	// no wait parked for this long is withdrawn.
	PermissionWithdrawAfter = time.Minute
	// PermissionsShown is how long a request that expired or was
	// withdrawn stays on the owner's Approvals page, saying so.
	PermissionsShown = time.Hour
)

// Permission is a session's request to use a tool, waiting on (or decided
// by) the agent's owner. RequestID, ToolName, Description and
// InputPreview are Claude Code's words for the agent: untrusted.
type Permission struct {
	ID           string // perm_…
	AgentID      string
	AgentHandle  string // filled by reads
	OwnerID      string
	Instance     string
	RequestID    string
	ToolName     string
	Description  string
	InputPreview string
	Status       string
	DecidedBy    string // the person who decided (an id); "" for one that expired or was withdrawn
	CreatedAt    time.Time
	DecidedAt    time.Time // when it was decided, expired or withdrawn
}

// Behavior is the verdict of a decided request: allow, deny, or "".
func (p *Permission) Behavior() string {
	switch p.Status {
	case PermissionAllowed:
		return BehaviorAllow
	case PermissionDenied:
		return BehaviorDeny
	}
	return ""
}

// PermissionReads is what permission requests read of the store.
type PermissionReads interface {
	Permission(ctx context.Context, id string) (*Permission, error)
	// PendingPermissions lists the requests of the owner's agents that
	// wait for them, oldest first.
	PendingPermissions(ctx context.Context, ownerID string) ([]*Permission, error)
	// EndedPermissions lists the requests of the owner's agents that
	// expired or were withdrawn at or after since, latest first.
	EndedPermissions(ctx context.Context, ownerID string, since time.Time) ([]*Permission, error)
}

// PermissionWrites is what they write.
type PermissionWrites interface {
	InsertPermission(ctx context.Context, p *Permission) error
	// EndPermission records a pending request's status (by whom, for a
	// decision) and when; ErrNoRows when it no longer waits.
	EndPermission(ctx context.Context, id, status, by string, at time.Time) error
}

// PermissionInput is a request_permission call: Claude Code's request
// and the session it is for.
type PermissionInput struct {
	RequestID    string
	ToolName     string
	Description  string
	InputPreview string
	Instance     string
}

var requestIDRE = regexp.MustCompile(`^[a-z]{5}$`)

// RequestPermission puts the session's permission request to the agent's
// owner (§19): an approval of kind permission, and a permission.request
// event to the owner. The same request_id of the same session while it
// waits returns the request stored then (a retry). The verdict comes back
// as permission.decided, for the session that asked.
func (h *Hub) RequestPermission(ctx context.Context, c *Caller, in PermissionInput) (*Permission, error) {
	if !requestIDRE.MatchString(in.RequestID) {
		return nil, invalid("", "request_id must be the five lowercase letters Claude Code gave the request (got %q)", echo(in.RequestID))
	}
	toolName, err := checkText("tool_name", strings.TrimSpace(in.ToolName), 1, MaxToolName)
	if err != nil {
		return nil, err
	}
	description, err := checkText("description", in.Description, 0, MaxPermissionText)
	if err != nil {
		return nil, err
	}
	preview, err := checkText("input_preview", in.InputPreview, 0, MaxPermissionText)
	if err != nil {
		return nil, err
	}
	instance, err := h.seeInstance(ctx, c, in.Instance)
	if err != nil {
		return nil, err
	}
	var p *Permission
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
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
		now := h.now()
		p = &Permission{ID: NewID(IDPermission, now), AgentID: c.Agent.ID, AgentHandle: c.Agent.Handle(), OwnerID: c.Agent.OwnerID,
			Instance: instance, RequestID: in.RequestID, ToolName: toolName, Description: description, InputPreview: preview,
			Status: PermissionPending, CreatedAt: now}
		data, _ := json.Marshal(map[string]any{"permission_id": p.ID, "agent": p.AgentHandle, "instance": instance,
			"request_id": p.RequestID, "tool_name": p.ToolName, "description": p.Description, "input_preview": p.InputPreview})
		return []*Event{{RecipientID: p.OwnerID, Type: EventPermissionRequest, Data: data, CreatedAt: now}}, tx.InsertPermission(ctx, p)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ending is how a pending request ended without a decision, as of now:
// the status and when, or "" while it still waits.
func (h *Hub) ending(ctx context.Context, r Reader, p *Permission) (string, time.Time, error) {
	expires := p.CreatedAt.Add(h.settings.PermissionTTL)
	last, err := h.lastListened(ctx, r, p.AgentID, p.Instance)
	if err != nil {
		return "", time.Time{}, err
	}
	if last.Before(p.CreatedAt) {
		last = p.CreatedAt
	}
	gone := last.Add(PermissionWithdrawAfter)
	now := h.now()
	switch {
	case gone.Before(expires) && now.After(gone):
		return PermissionWithdrawn, gone, nil
	case !now.Before(expires):
		return PermissionExpired, expires, nil
	}
	return "", time.Time{}, nil
}

// pendingPermissions is the owner's requests that still wait; those found
// expired or withdrawn are recorded so, and the owner's pages hear they
// no longer wait.
func (h *Hub) pendingPermissions(ctx context.Context, u *User) ([]*Permission, error) {
	all, err := h.store.PendingPermissions(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	var waiting, ended []*Permission
	for _, p := range all {
		status, at, err := h.ending(ctx, h.store, p)
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
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		var events []*Event
		for _, p := range ended {
			err := tx.EndPermission(ctx, p.ID, p.Status, "", p.DecidedAt)
			switch {
			case errors.Is(err, ErrNoRows): // another replica got there first
			case err != nil:
				return nil, err
			default:
				events = append(events, decided(u, ApprovalPermission, p.ID, p.Status, h.now()))
			}
		}
		return events, nil
	})
	if err != nil {
		return nil, err
	}
	return waiting, nil
}

// ApprovalsAndEnded is Approvals and EndedPermissions, for a page that
// shows both.
func (h *Hub) ApprovalsAndEnded(ctx context.Context, u *User) ([]Approval, []*Permission, error) {
	as, err := h.Approvals(ctx, u)
	if err != nil {
		return nil, nil, err
	}
	ps, err := h.store.EndedPermissions(ctx, u.ID, h.now().Add(-PermissionsShown))
	if err != nil {
		return nil, nil, AsError(err)
	}
	return as, ps, nil
}

// EndedPermissions lists the owner's permission requests that expired or
// were withdrawn in the last PermissionsShown, latest first: the
// Approvals page says so.
func (h *Hub) EndedPermissions(ctx context.Context, u *User) ([]*Permission, error) {
	if _, err := h.pendingPermissions(ctx, u); err != nil {
		return nil, err
	}
	ps, err := h.store.EndedPermissions(ctx, u.ID, h.now().Add(-PermissionsShown))
	if err != nil {
		return nil, AsError(err)
	}
	return ps, nil
}

// DecidePermission is the owner's verdict on a permission request (§19):
// allow or deny, recorded with who and when; the session that asked
// hears permission.decided. Only the agent's owner may decide (anyone
// else: not_found); a request decided already, expired or withdrawn is a
// conflict that says which.
func (h *Hub) DecidePermission(ctx context.Context, u *User, id string, allow bool) (*Permission, error) {
	var p *Permission
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		var err error
		p, err = tx.Permission(ctx, id)
		if errors.Is(err, ErrNoRows) || (err == nil && p.OwnerID != u.ID) {
			return nil, notFound("no permission request %q waits for %s; list them with approvals", echo(id), u.Handle)
		}
		if err != nil {
			return nil, err
		}
		now := h.now()
		if p.Status == PermissionPending {
			status, at, err := h.ending(ctx, tx, p)
			if err != nil {
				return nil, err
			}
			if status != "" {
				p.Status, p.DecidedAt = status, at
				if err := tx.EndPermission(ctx, p.ID, status, "", at); err != nil {
					return nil, err
				}
				return []*Event{decided(u, ApprovalPermission, p.ID, status, now)}, &commitThen{permissionEnded(p)}
			}
		}
		if p.Status != PermissionPending {
			return nil, permissionEnded(p)
		}
		p.Status, p.DecidedBy, p.DecidedAt = PermissionDenied, u.ID, now
		if allow {
			p.Status = PermissionAllowed
		}
		if err := tx.EndPermission(ctx, p.ID, p.Status, u.ID, now); err != nil {
			return nil, err
		}
		data, _ := json.Marshal(map[string]any{"permission_id": p.ID, "request_id": p.RequestID, "behavior": p.Behavior(),
			"tool_name": p.ToolName, "by": u.Handle, "instance": p.Instance})
		return []*Event{{RecipientID: p.AgentID, Type: EventPermissionDecided, Data: data, CreatedAt: now},
			decided(u, ApprovalPermission, p.ID, p.Status, now)}, nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// permissionEnded is the conflict of deciding a request that no longer
// waits, saying why.
func permissionEnded(p *Permission) error {
	at := FormatTime(p.DecidedAt)
	switch p.Status {
	case PermissionExpired:
		return &Error{Kind: KindConflict, Code: "permission_expired", Msg: "this permission request expired at " + at + ", undecided: the agent's session no longer waits for the answer (its terminal may have answered)"}
	case PermissionWithdrawn:
		return &Error{Kind: KindConflict, Code: "permission_withdrawn", Msg: "this permission request was withdrawn at " + at + ": the session that asked went away"}
	}
	return &Error{Kind: KindConflict, Msg: "this permission request was " + p.Status + " already, at " + at}
}
