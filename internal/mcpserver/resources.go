package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
)

// addResources registers the resources (§10.4). Resources never carry
// bodies and never mark anything read.
func (s *Server) addResources() {
	s.mcp.AddResource(&mcp.Resource{URI: "palaver://me", Name: "me", Title: "Who am I",
		Description: "The same as the whoami tool: your handle, owner, siblings, scopes and latest_cursor.", MIMEType: "application/json"},
		s.resource("", func(ctx context.Context, c *call) (any, error) { return s.whoami(ctx, c, whoamiIn{}) }))
	s.mcp.AddResource(&mcp.Resource{URI: "palaver://agents", Name: "agents", Title: "Who I can reach",
		Description: "Everyone this agent can reach and what each is for: its owner, sibling agents, and contacts with their status and agents.", MIMEType: "application/json"},
		s.resource(hub.ScopeContacts, func(ctx context.Context, c *call) (any, error) { return s.listContacts(ctx, c, noArgs{}) }))
	s.mcp.AddResource(&mcp.Resource{URI: "palaver://inbox", Name: "inbox", Title: "Inbox",
		Description: "The messages waiting for you, one line each (summaries, never bodies).", MIMEType: "application/json"},
		s.resource(hub.ScopeRead, func(ctx context.Context, c *call) (any, error) { return s.checkInbox(ctx, c, checkInboxIn{}) }))
}

// resource adapts a read to a resource handler: the same caller and scope
// checks as tools, and every failure through the one translation
// (resourceError).
func (s *Server) resource(scope string, read func(ctx context.Context, c *call) (any, error)) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		c := &call{srv: s, tool: "resource " + req.Params.URI, caller: callerFrom(ctx)}
		if c.caller == nil {
			return nil, c.resourceError(ctx, hub.Errorf(hub.KindUnauthenticated, "no caller: send Authorization: Bearer plv_…"))
		}
		if err := c.caller.Require(scope); err != nil {
			return nil, c.resourceError(ctx, err)
		}
		v, err := read(ctx, c)
		if err != nil {
			return nil, c.resourceError(ctx, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, c.resourceError(ctx, err)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
	}
}
