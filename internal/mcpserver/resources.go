package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
)

// defaultResources are the default profile's resources (§10.4). They never
// carry bodies and never mark anything read.
func (s *Server) defaultResources() []resourceDef {
	return []resourceDef{
		{&mcp.Resource{URI: "palaver://me", Name: "me", Title: "Who am I",
			Description: "The same as the whoami tool: your handle, owner, siblings, scopes and latest_cursor.", MIMEType: "application/json"},
			"", func(ctx context.Context, c *call) (any, error) { return s.whoami(ctx, c, whoamiIn{}) }},
		{&mcp.Resource{URI: "palaver://agents", Name: "agents", Title: "Who I can reach",
			Description: "Everyone this agent can reach and what each is for: its owner, sibling agents, and contacts with their status and agents.", MIMEType: "application/json"},
			hub.ScopeContacts, func(ctx context.Context, c *call) (any, error) { return s.listContacts(ctx, c, noArgs{}) }},
		{&mcp.Resource{URI: "palaver://inbox", Name: "inbox", Title: "Inbox",
			Description: "The messages waiting for you, one line each (summaries, never bodies).", MIMEType: "application/json"},
			hub.ScopeRead, func(ctx context.Context, c *call) (any, error) { return s.checkInbox(ctx, c, checkInboxIn{}) }},
	}
}

// threadHistory is the default profile's palaver://threads/{conversation_id}:
// the conversation and its latest messages, one line each.
func (s *Server) threadHistory(ctx context.Context, c *call, conversationID string) (any, error) {
	v, r, err := s.hub.Recent(ctx, c.caller, conversationID, 0)
	if err != nil {
		return nil, err
	}
	lines := []messageLine{}
	for _, m := range r.Messages {
		lines = append(lines, lineOf(m))
	}
	return map[string]any{"conversation": viewConversation(v), "messages": lines, "has_older": r.HasOlder, "untrusted": true}, nil
}

// resource adapts a read to a resource handler: the same caller and scope
// checks as tools, and every failure through the one translation
// (resourceError).
func (s *Server) resource(p *profile, scope string, read func(ctx context.Context, c *call) (any, error)) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		c := &call{srv: s, prof: p, tool: "resource " + req.Params.URI, caller: callerFrom(ctx)}
		if c.caller == nil {
			return nil, c.resourceError(ctx, noCaller(ctx))
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
