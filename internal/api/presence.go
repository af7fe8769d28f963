package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// Presence (§19) and permission requests (§19) as scripts see them.

// presence is GET /presence: each of the person's agents with its
// presence, and each of its named sessions'.
func (a *API) presence(ctx context.Context, r *request) (any, error) {
	agents, presence, err := a.hub.OwnPresence(ctx, r.user)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, ag := range agents {
		p := presence[ag.ID]
		sessions := []map[string]any{}
		for _, s := range p.Sessions {
			sessions = append(sessions, map[string]any{"name": s.Name, "presence": s.State, "last_seen": timeText(s.LastSeen)})
		}
		out = append(out, map[string]any{"handle": ag.Handle(), "presence": p.State, "last_seen": timeText(p.LastSeen), "sessions": sessions})
	}
	return map[string]any{"agents": out}, nil
}

// permissionView is a permission request as an approval shows it; its
// words are Claude Code's for the agent: untrusted.
func permissionView(p *hub.Permission) map[string]any {
	v := map[string]any{"id": p.ID, "kind": hub.ApprovalPermission, "agent": p.AgentHandle, "instance": p.Instance,
		"request_id": p.RequestID, "tool_name": p.ToolName, "description": p.Description, "input_preview": p.InputPreview,
		"status": p.Status, "at": timeText(p.CreatedAt), "untrusted": true}
	if !p.DecidedAt.IsZero() {
		v["decided_at"] = timeText(p.DecidedAt)
	}
	if b := p.Behavior(); b != "" {
		v["behavior"] = b
	}
	return v
}
