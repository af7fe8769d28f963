package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
)

// A profile is one tool surface at its own path (§10.5): the default one at
// /mcp/, the inbox product's at /mcp/inbox/. Each is a thin adapter over the
// same hub — its own tools, resources, prompts and instructions, served by
// an SDK server of its own, with a version hashed from what its clients see.
type profile struct {
	name  string
	path  string // served as it is and with a trailing slash
	tools map[string]toolDef
	mcp   *mcp.Server
	impl  *mcp.Implementation // serverInfo
	build string              // whoami.server_build
	words hub.Words           // how its errors name things (nil: as the hub does)
	// refusalErrors: its product knows no contract statuses, so a refusal
	// is a tool error saying the reason and what to do (the inbox profile).
	refusalErrors bool
	// people is the surface served at the same path to a person's token
	// (the rooms profile's user side, §10.5); nil: agents only.
	people *profile
}

// profileSpec is what a profile declares.
type profileSpec struct {
	name, path   string
	instructions string
	tools        []toolDef
	resources    []resourceDef
	threads      *threadsDef // nil: none
	prompts      []promptDef
	// words names the placeholders of the hub's messages in this
	// profile's words: its arguments, tools and things (nil: the hub's,
	// which are the default profile's).
	words hub.Words
	// refusalErrors answers refusals as tool errors (profile.refusalErrors).
	refusalErrors bool
	// aliases are URI prefixes read as another's (alias → served), for
	// resource URIs its product spelled its own way; never listed.
	aliases map[string]string
	// people is the surface a person's token gets at the same path.
	people *profileSpec
	// push is what it pushes on a subscriptions/listen stream (§19);
	// nil: nothing, and no resources.subscribe.
	push *pushSpec
}

// threadsDef is a profile's template of one conversation's history, listed
// once for each of the caller's open conversations (§10.4).
type threadsDef struct {
	template string // with one {…} at its end for the conversation's id
	read     func(ctx context.Context, c *call, conversationID string) (any, error)
}

// resourceDef is one resource of a profile: what the client sees, the
// scope it needs, and its read.
type resourceDef struct {
	res   *mcp.Resource
	scope string
	read  func(ctx context.Context, c *call) (any, error)
}

// promptDef is one prompt of a profile.
type promptDef struct {
	prompt *mcp.Prompt
	get    mcp.PromptHandler
}

// newProfile builds a profile's SDK server from its spec.
func (s *Server) newProfile(spec profileSpec) (*profile, error) {
	version, err := surfaceVersion(spec)
	if err != nil {
		return nil, err
	}
	p := &profile{name: spec.name, path: spec.path, tools: map[string]toolDef{}, build: buildName(version), words: spec.words, refusalErrors: spec.refusalErrors,
		impl: &mcp.Implementation{Name: "palaver", Title: "Palaver", Version: version}}
	if spec.people != nil {
		if p.people, err = s.newProfile(*spec.people); err != nil {
			return nil, fmt.Errorf("its people's side: %w", err)
		}
	}
	opts := &mcp.ServerOptions{
		Instructions: spec.instructions,
		// The SDK logs every stateless request at info level; keep its
		// warnings only.
		Logger: quiet(s.log),
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{},
			Prompts:   &mcp.PromptCapabilities{},
		},
		SetCacheable: func(ctx context.Context, req mcp.Request, c *mcp.Cacheable) {
			c.CacheScope = "private"
			c.TTLMs = 60000
			if _, ok := req.(*mcp.ReadResourceRequest); ok {
				c.TTLMs = 0
			}
		},
	}
	if spec.push != nil {
		subscribeOptions(opts)
	}
	p.mcp = mcp.NewServer(p.impl, opts)
	for _, d := range spec.tools {
		p.tools[d.tool.Name] = d
		p.mcp.AddTool(d.tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.callTool(ctx, p, d, req.Params.Arguments)
		})
	}
	for _, r := range spec.resources {
		p.mcp.AddResource(r.res, s.resource(p, r.scope, r.read))
	}
	if spec.threads != nil {
		s.addThreads(p, spec.threads)
	}
	for _, pr := range spec.prompts {
		p.mcp.AddPrompt(pr.prompt, pr.get)
	}
	if len(spec.aliases) > 0 {
		p.mcp.AddReceivingMiddleware(aliasResources(spec.aliases))
	}
	// Nothing is pushed outside a response (§10.1), but on a profile's
	// subscriptions/listen stream when it has one (§19).
	if spec.push != nil {
		s.addPush(p, spec.push)
	} else {
		noPush(p)
	}
	return p, nil
}

// surfaceVersion is serverInfo.version, 2.<tool count>.<hash>: the hash of
// everything a client sees of the profile — each tool's name, title,
// description, schemas and annotations, the resources and prompts, and the
// instructions (§10.1).
func surfaceVersion(spec profileSpec) (string, error) {
	h := sha256.New()
	for _, d := range spec.tools {
		b, err := json.Marshal(d.tool)
		if err != nil {
			return "", fmt.Errorf("tool %s: %w", d.tool.Name, err)
		}
		h.Write(b)
	}
	for _, r := range spec.resources {
		b, _ := json.Marshal(r.res)
		h.Write(b)
	}
	if spec.threads != nil {
		h.Write([]byte(spec.threads.template))
	}
	for _, pr := range spec.prompts {
		b, _ := json.Marshal(pr.prompt)
		h.Write(b)
	}
	h.Write([]byte(spec.instructions))
	if spec.push != nil {
		b, _ := json.Marshal(spec.push.inbox)
		h.Write(append([]byte("subscribe"), b...))
	}
	return fmt.Sprintf("2.%d.%s", len(spec.tools), hex.EncodeToString(h.Sum(nil))[:8]), nil
}

// addThreads adds the profile's template of one conversation's history
// (summaries only, nothing marked read), and lists each of the caller's
// open conversations as one of its resources (§10.4).
func (s *Server) addThreads(p *profile, t *threadsDef) {
	prefix, _, _ := strings.Cut(t.template, "{")
	p.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t.template, Name: "thread", Title: "A conversation's history",
		Description: "One conversation's latest messages, one line each (summaries, never bodies); reading it marks nothing read.", MIMEType: "application/json"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, prefix)
			return s.resource(p, hub.ScopeRead, func(ctx context.Context, c *call) (any, error) { return t.read(ctx, c, id) })(ctx, req)
		})
	p.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListResourcesResult)
			c := callerFrom(ctx)
			if err != nil || !ok || list.NextCursor != "" || c == nil || !c.Can(hub.ScopeRead) {
				return res, err
			}
			convs, err := s.hub.ListConversations(ctx, c, "", 0)
			if err != nil {
				return nil, (&call{srv: s, prof: p, tool: "resources/list", caller: c}).resourceError(ctx, err)
			}
			for _, l := range convs.Conversations {
				title := l.Conversation.Title
				if title == "" {
					title = "direct conversation"
				}
				list.Resources = append(list.Resources, &mcp.Resource{URI: prefix + l.Conversation.ID, Name: l.Conversation.ID, Title: title,
					MIMEType: "application/json"})
			}
			return list, nil
		}
	})
}

// aliasResources reads a resource asked for at an alias as the one it
// stands for, and answers under the URI that was asked for.
func aliasResources(aliases map[string]string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			read, ok := req.(*mcp.ReadResourceRequest)
			if method != "resources/read" || !ok || read.Params == nil {
				return next(ctx, method, req)
			}
			asked := read.Params.URI
			for alias, served := range aliases {
				if rest, ok := strings.CutPrefix(asked, alias); ok {
					read.Params.URI = served + rest
					break
				}
			}
			res, err := next(ctx, method, req)
			read.Params.URI = asked
			if r, ok := res.(*mcp.ReadResourceResult); ok && err == nil {
				for _, c := range r.Contents {
					c.URI = asked
				}
			}
			return res, err
		}
	}
}
