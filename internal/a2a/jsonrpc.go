package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
)

// JSON-RPC error codes: JSON-RPC's own, A2A's (§5.4 of its 1.0
// specification, the same in 0.3), and Palaver's, in the range left to
// implementations.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeTaskNotFound   = -32001
	codeNotCancelable  = -32002
	codePushNotSupport = -32003
	codeUnsupported    = -32004
	codeContentType    = -32005
	codeNoExtendedCard = -32007
	codeVersion        = -32009
	codeDenied         = -32010 // a brake or a reach rule refused: the refusal's status, reason and trace
	codeRefused        = -32011 // the hub refused for another reason: a conflict, a scope, a rate
)

// request is a JSON-RPC 2.0 request.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// response is a JSON-RPC 2.0 response: a result or an error.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error. Data repeats the message under "error"
// (where the Go SDK's client reads it) beside Palaver's fields.
type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// call is one JSON-RPC request to an agent's endpoint.
type call struct {
	s       *Server
	r       *http.Request
	owner   string
	slug    string
	caller  tasks.Caller
	method  string
	version string // Version10 or Version03: how the request is read and answered
}

// endpoint serves an agent's JSON-RPC endpoint: a card that does not exist
// is 404 before anything else, then the caller is authenticated (401
// otherwise), then the request is decoded and answered in the revision of
// A2A its A2A-Version names (none: 0.3); another revision is refused with
// A2A's version-not-supported error.
func (s *Server) endpoint(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	owner, slug := r.PathValue("owner"), r.PathValue("slug")
	if _, err := s.tasks.ExposedAgent(ctx, owner, slug); err != nil {
		s.httpError(w, r, err)
		return
	}
	caller, err := s.caller(ctx, r)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	version, named := requestedVersion(r)
	c := &call{s: s, r: r, owner: owner, slug: slug, caller: caller, version: version}
	if version == "" {
		c.version = Version10 // refused in 1.0's shape, the nearest to a later revision's
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return // the client went away mid-request
	}
	if len(body) > maxBody {
		c.reply(w, nil, nil, &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("the request is over %d bytes; send a shorter message", maxBody)})
		return
	}
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		c.reply(w, nil, nil, &rpcError{Code: codeInvalidRequest, Message: "batches are not taken: send one JSON-RPC request per HTTP request"})
		return
	}
	var req request
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil || dec.More() {
		c.reply(w, nil, nil, &rpcError{Code: codeParse, Message: "the body is not one JSON-RPC request: send a JSON object like {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + c.sendMethod() + "\",\"params\":{…}}"})
		return
	}
	c.method = req.Method
	switch {
	case req.JSONRPC != "2.0":
		c.reply(w, req.ID, nil, &rpcError{Code: codeInvalidRequest, Message: "jsonrpc must be \"2.0\""})
		return
	case len(req.ID) == 0 || string(req.ID) == "null":
		c.reply(w, nil, nil, &rpcError{Code: codeInvalidRequest, Message: "id is required: A2A methods answer, so give each request an id"})
		return
	}
	if version == "" {
		c.reply(w, req.ID, nil, &rpcError{Code: codeVersion, Message: fmt.Sprintf("A2A-Version %q is not served here: send A2A-Version: %s (or %s, or none, for A2A 0.3)", preview(named), Version10, Version03)})
		return
	}
	if c.version == Version10 {
		c.serve10(w, &req)
		return
	}
	c.serve03(w, &req)
}

// sendMethod is the name of the send method in the request's revision.
func (c *call) sendMethod() string {
	if c.version == Version10 {
		return "SendMessage"
	}
	return "message/send"
}

// reply writes one JSON-RPC response, in the request's revision.
func (c *call) reply(w http.ResponseWriter, id json.RawMessage, result any, rerr *rpcError) {
	writeJSON(w, c.envelope(id, result, rerr))
}

// envelope is a JSON-RPC response in the request's revision: the errors of
// A2A 1.0 carry their detail as a list (errorOf10), 0.3's as an object.
func (c *call) envelope(id json.RawMessage, result any, rerr *rpcError) any {
	if id == nil {
		id = json.RawMessage("null")
	}
	if c.version == Version10 {
		resp := response10{JSONRPC: "2.0", ID: id, Result: result}
		if rerr != nil {
			resp.Result, resp.Error = nil, errorOf10(rerr)
		}
		return resp
	}
	resp := response{JSONRPC: "2.0", ID: id, Result: result, Error: rerr}
	if rerr != nil {
		resp.Result = nil
	}
	return resp
}

// translate is the A2A face's one translation of hub errors (CONVENTIONS
// "Errors"): a JSON-RPC error whose message is the hub's, under a fresh
// trace id logged once. A refusal (a brake, or a reach rule with the step
// to take, §3, §7) is codeDenied with its status, reason, brake word and
// trace; a task that is not the caller's is A2A's task-not-found; one that
// cannot be canceled, A2A's not-cancelable; bad arguments, invalid params;
// internal errors show only their trace.
func (c *call) translate(ctx context.Context, err error) *rpcError {
	trace := httpx.NewTrace()
	var ref *hub.Refusal
	if errors.As(err, &ref) {
		reason := ref.Text(nil)
		msg := reason + " (trace " + trace + ")"
		c.log(ctx, slog.LevelInfo, "a2a refused", trace, slog.String("status", ref.Status), slog.String("reason", ref.Text(nil)))
		data := map[string]any{"error": msg, "status": ref.Status, "reason": reason, "brake": ref.Word(), "trace": trace}
		for k, v := range ref.Details {
			data[k] = v
		}
		return &rpcError{Code: codeDenied, Message: msg, Data: data}
	}
	e := hub.AsError(err)
	code, msg, level := codeRefused, e.Text(nil, nil), slog.LevelInfo
	switch {
	case e.Kind == hub.KindInternal && ctx.Err() != nil:
		code, msg = codeInternal, "the request ended before it was answered"
	case e.Kind == hub.KindInternal:
		code, msg, level = codeInternal, "internal error (trace "+trace+"); retry later, and quote the trace when reporting it", slog.LevelError
	case e.Kind == hub.KindNotFound:
		code = codeTaskNotFound
	case e.Kind == hub.KindInvalid:
		code = codeInvalidParams
	case e.Code == "not_cancelable":
		code = codeNotCancelable
	}
	attrs := []slog.Attr{slog.String("code", e.WireCode()), slog.String("message", e.Text(nil, nil))}
	if e.Err != nil {
		attrs = append(attrs, slog.String("cause", e.Err.Error()))
	}
	c.log(ctx, level, "a2a error", trace, attrs...)
	data := map[string]any{"error": msg, "code": e.WireCode(), "trace": trace}
	for k, v := range e.Details {
		data[k] = v
	}
	return &rpcError{Code: code, Message: msg, Data: data}
}

// log writes the one line of a refusal or error: trace, method, agent
// called and caller; never a token or a message body (§15).
func (c *call) log(ctx context.Context, level slog.Level, msg, trace string, attrs ...slog.Attr) {
	base := []slog.Attr{slog.String("trace", trace), slog.String("method", c.method), slog.String("to", c.owner+"/"+c.slug)}
	switch {
	case c.caller.Agent != nil:
		base = append(base, slog.String("agent", c.caller.Agent.Agent.Handle()), slog.String("token", c.caller.Agent.TokenID))
	case c.caller.Person != nil:
		base = append(base, slog.String("user", c.caller.Person.Handle))
	}
	c.s.log.LogAttrs(ctx, level, msg, append(base, attrs...)...)
}

// preview is a value someone gave, cut to a line for an error message.
func preview(s string) string { return hub.Preview(s, 60) }
