package hub

import (
	"context"
	"time"
)

// Permission requests (§19) as records: a session's request to use a
// tool, waiting on its agent's owner. Asking, deciding and ending them is
// internal/permissions.

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

// A PermissionDesk is the permission requests as the hub's Approvals and
// Decide reach them: internal/permissions keeps them, and a server
// registers its desk with KeepPermissions. Without one, no request waits
// and none is found.
type PermissionDesk interface {
	// Pending is the owner's requests that still wait.
	Pending(ctx context.Context, u *User) ([]*Permission, error)
	// Decide is the owner's verdict on one: allow or deny.
	Decide(ctx context.Context, u *User, id string, allow bool) (*Permission, error)
}

// KeepPermissions registers the desk of permission requests the hub's
// Approvals list and its Decide decides; call it before serving.
func (h *Hub) KeepPermissions(d PermissionDesk) { h.permissions = d }
