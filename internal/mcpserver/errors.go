package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
)

type refusedKey struct{}

// noCaller is why a request has no caller: the hub's refusal of its token
// (over its request rate, §15), which bearer leaves in the context so that
// the tool or resource asked for answers it in its own shape — a
// rate_limited tool error with retry_after_s — or else no credential.
func noCaller(ctx context.Context) error {
	if err, ok := ctx.Value(refusedKey{}).(error); ok {
		return err
	}
	return hub.Errorf(hub.KindUnauthenticated, "no caller: send Authorization: Bearer plv_…")
}

// result turns a handler's value into a tool result: structured content and
// the same JSON as text, for clients older than structured output (§10.2).
func result(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(bareArray); ok {
		// Structured content is an object; an array is text alone.
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	}
	return &mcp.CallToolResult{
		StructuredContent: json.RawMessage(b),
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
	}, nil
}

// bareArray is a result its product's documentation shows as a JSON array
// (the inbox profile's list_agents), answered as text alone.
type bareArray []any

// refusalResult answers a contract refusal (§7, §10.2): a normal result
// with status and reason, carrying a trace id that matches one log line.
func (c *call) refusalResult(ctx context.Context, r *hub.Refusal) (*mcp.CallToolResult, error) {
	trace := httpx.NewTrace()
	c.logLine(ctx, slog.LevelInfo, "tool refused", trace, slog.String("status", r.Status), slog.String("reason", r.Text(nil)))
	out := map[string]any{"status": r.Status, "reason": r.Text(c.words()), "trace": trace}
	for k, v := range r.Details {
		out[k] = v
	}
	return result(out)
}

// refusalError answers a contract refusal as a tool error, for a profile
// whose product has no statuses (profile.refusalErrors): the code is the
// status, the message the reason with what to do, and the rule's word.
func (c *call) refusalError(ctx context.Context, r *hub.Refusal) (*mcp.CallToolResult, error) {
	trace := httpx.NewTrace()
	c.logLine(ctx, slog.LevelInfo, "tool refused", trace, slog.String("status", r.Status), slog.String("reason", r.Text(nil)))
	body := map[string]any{"code": r.Status, "message": r.Text(c.words()), "rule": r.Word()}
	for k, v := range r.Details {
		body[k] = v
	}
	res, err := result(map[string]any{"error": body, "trace": trace})
	if err != nil {
		return nil, err
	}
	res.IsError = true
	return res, nil
}

// toolError answers a failed tool call: an isError result
// {"error":{"code","message",…details},"trace"} (§10.2).
func (c *call) toolError(ctx context.Context, err error) (*mcp.CallToolResult, error) {
	_, body, trace := c.translate(ctx, err)
	res, rerr := result(map[string]any{"error": body, "trace": trace})
	if rerr != nil {
		return nil, rerr
	}
	res.IsError = true
	return res, nil
}

// resourceError answers a failed resources/read, which has no error
// results: a JSON-RPC error with the same safe message, its data
// {"error":{"code","message",…},"trace"}; invalid params (as a resource
// not found is) for every kind the caller can mend, internal error else.
func (c *call) resourceError(ctx context.Context, err error) error {
	kind, body, trace := c.translate(ctx, err)
	data, _ := json.Marshal(map[string]any{"error": body, "trace": trace})
	code := int64(jsonrpc.CodeInvalidParams)
	if kind == hub.KindInternal {
		code = jsonrpc.CodeInternalError
	}
	return &jsonrpc.Error{Code: code, Message: body["message"].(string), Data: data}
}

// translate is the MCP face's one translation of hub errors (CONVENTIONS
// "Errors"), for tools and resources alike: the error's kind and its wire
// body {"code","message",…details} under a fresh trace id, logged once
// under that id. Internal errors show only "internal error (trace …)";
// their cause goes to the log.
func (c *call) translate(ctx context.Context, err error) (hub.Kind, map[string]any, string) {
	trace := httpx.NewTrace()
	e := hub.AsError(err)
	msg := e.Text(c.words(), dashboardWay)
	level := slog.LevelInfo
	switch {
	case e.Kind == hub.KindInternal && ctx.Err() != nil:
		// The client hung up (or its deadline passed); nobody reads this.
		e = &hub.Error{Kind: hub.KindInternal, Code: "canceled", Msg: "the request ended before it was answered"}
		msg = e.Msg
	case e.Kind == hub.KindInternal:
		msg = "internal error (trace " + trace + "); retry later, and quote the trace when reporting it"
		level = slog.LevelError
	}
	attrs := []slog.Attr{slog.String("code", e.WireCode()), slog.String("message", e.Text(nil, nil))}
	if e.Err != nil {
		attrs = append(attrs, slog.String("cause", e.Err.Error()))
	}
	c.logLine(ctx, level, "tool error", trace, attrs...)
	body := map[string]any{"code": e.WireCode(), "message": msg}
	for k, v := range e.Details {
		body[k] = v
	}
	return e.Kind, body, trace
}

// words are the call's profile's names for the hub's placeholders (nil:
// the hub's own, the default profile's).
func (c *call) words() hub.Words {
	if c.prof == nil {
		return nil
	}
	return c.prof.words
}

// dashboardWay is where an agent's owner, or a person on the rooms
// profile's user side, mends what a hint names (hub.Hint): a page of the
// dashboard.
func dashboardWay(a hub.Action) string {
	switch a.Name {
	case hub.ActionApproveContact:
		return "on the dashboard's Contacts page"
	case hub.ActionListApprovals:
		return "on the dashboard's Approvals page"
	case hub.ActionListTokens:
		return "on each agent's page of the dashboard"
	case hub.ActionMintPersonToken:
		return "under Settings on the dashboard"
	case hub.ActionMintAgentToken:
		return "on the agent's page of the dashboard"
	case hub.ActionCreatePerson:
		return "by inviting them from the dashboard's Settings"
	}
	return "on the dashboard"
}

// logLine writes the one structured line of a refusal or error: trace id,
// tool, agent, conversation. Never a token or a message body (§15).
func (c *call) logLine(ctx context.Context, level slog.Level, msg, trace string, attrs ...slog.Attr) {
	base := []slog.Attr{slog.String("trace", trace), slog.String("tool", c.tool)}
	if c.caller != nil {
		base = append(base, slog.String("agent", c.caller.Agent.Handle()), slog.String("token", c.caller.TokenID))
	}
	if c.person != nil {
		base = append(base, slog.String("user", c.person.Handle))
	}
	if c.conversation != "" {
		base = append(base, slog.String("conversation", c.conversation))
	}
	c.srv.log.LogAttrs(ctx, level, msg, append(base, attrs...)...)
}
