package mcpserver

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/permissions"
)

// request_permission (§19): how a channel relays Claude Code's permission
// prompt to the agent's owner.

type requestPermissionIn struct {
	RequestID    string `json:"request_id" jsonschema:"the five lowercase letters Claude Code gave the prompt"`
	ToolName     string `json:"tool_name" jsonschema:"the tool Claude wants to use, like Bash"`
	Description  string `json:"description,omitempty" jsonschema:"what this use of the tool does, in words"`
	InputPreview string `json:"input_preview,omitempty" jsonschema:"the tool's arguments, as Claude Code previews them"`
	Instance     string `json:"instance,omitempty" jsonschema:"your session's name: the verdict is for it"`
}

func (s *Server) requestPermission(ctx context.Context, c *call, in requestPermissionIn) (any, error) {
	p, err := s.desk.Request(ctx, c.caller, permissions.Input{RequestID: in.RequestID, ToolName: in.ToolName,
		Description: in.Description, InputPreview: in.InputPreview, Instance: in.Instance})
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": hub.StatusPending, "permission_id": p.ID, "request_id": p.RequestID}, nil
}
