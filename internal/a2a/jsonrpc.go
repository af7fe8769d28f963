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
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
)

// JSON-RPC error codes: JSON-RPC's own, A2A's (§8 of its specification),
// and Palaver's, in the range left to implementations.
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
	s      *Server
	r      *http.Request
	owner  string
	slug   string
	caller hub.A2ACaller
	method string
}

// endpoint serves an agent's JSON-RPC endpoint: a card that does not exist
// is 404 before anything else, then the caller is authenticated (401
// otherwise), then the request is decoded and answered.
func (s *Server) endpoint(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	owner, slug := r.PathValue("owner"), r.PathValue("slug")
	if _, err := s.hub.ExposedAgent(ctx, owner, slug); err != nil {
		s.httpError(w, r, err)
		return
	}
	caller, err := s.caller(ctx, r)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	c := &call{s: s, r: r, owner: owner, slug: slug, caller: caller}
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
		c.reply(w, nil, nil, &rpcError{Code: codeParse, Message: "the body is not one JSON-RPC request: send a JSON object like {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"message/send\",\"params\":{…}}"})
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
	switch req.Method {
	case "message/stream":
		var p a2a.MessageSendParams
		if rerr := decodeParams(req.Params, req.Method, &p); rerr != nil {
			c.reply(w, req.ID, nil, rerr)
			return
		}
		in, rerr := sendInput(&p)
		if rerr != nil {
			c.reply(w, req.ID, nil, rerr)
			return
		}
		t, err := s.hub.SendA2A(ctx, caller, owner, slug, in)
		if err != nil {
			c.reply(w, req.ID, nil, c.translate(ctx, err))
			return
		}
		c.stream(w, req.ID, t.ID)
	case "tasks/resubscribe":
		var p a2a.TaskIDParams
		if rerr := decodeTaskParams(req.Params, req.Method, &p, &p.ID); rerr != nil {
			c.reply(w, req.ID, nil, rerr)
			return
		}
		if _, err := s.hub.A2ATask(ctx, caller, owner, slug, string(p.ID)); err != nil {
			c.reply(w, req.ID, nil, c.translate(ctx, err))
			return
		}
		c.stream(w, req.ID, string(p.ID))
	default:
		result, rerr := c.handle(ctx, req.Method, req.Params)
		c.reply(w, req.ID, result, rerr)
	}
}

// handle answers the methods that return one result.
func (c *call) handle(ctx context.Context, method string, params json.RawMessage) (any, *rpcError) {
	h := c.s.hub
	switch method {
	case "message/send":
		var p a2a.MessageSendParams
		if rerr := decodeParams(params, method, &p); rerr != nil {
			return nil, rerr
		}
		in, rerr := sendInput(&p)
		if rerr != nil {
			return nil, rerr
		}
		t, err := h.SendA2A(ctx, c.caller, c.owner, c.slug, in)
		if err != nil {
			return nil, c.translate(ctx, err)
		}
		// blocking: true waits, as long as a wait_for_messages may, for
		// the task to end or ask something; the task as it then stands
		// is the answer either way.
		if p.Config != nil && p.Config.Blocking != nil && *p.Config.Blocking {
			if t, err = h.AwaitA2ATask(ctx, c.caller, c.owner, c.slug, t, hub.MaxWait); err != nil {
				return nil, c.translate(ctx, err)
			}
		}
		return taskOf(t, historyLength(p.Config)), nil
	case "tasks/get":
		var p a2a.TaskQueryParams
		if rerr := decodeTaskParams(params, method, &p, &p.ID); rerr != nil {
			return nil, rerr
		}
		t, err := h.A2ATask(ctx, c.caller, c.owner, c.slug, string(p.ID))
		if err != nil {
			return nil, c.translate(ctx, err)
		}
		return taskOf(t, p.HistoryLength), nil
	case "tasks/cancel":
		var p a2a.TaskIDParams
		if rerr := decodeTaskParams(params, method, &p, &p.ID); rerr != nil {
			return nil, rerr
		}
		t, err := h.CancelA2ATask(ctx, c.caller, c.owner, c.slug, string(p.ID))
		if err != nil {
			return nil, c.translate(ctx, err)
		}
		return taskOf(t, nil), nil
	case "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
		"tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete":
		return nil, &rpcError{Code: codePushNotSupport, Message: "push notifications are not offered: follow a task with message/stream or tasks/resubscribe, or ask tasks/get"}
	case "agent/getAuthenticatedExtendedCard":
		return nil, &rpcError{Code: codeNoExtendedCard, Message: "there is no extended card: the public card at " + CardPath + " says everything"}
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: fmt.Sprintf("no method %q: use message/send, message/stream, tasks/get, tasks/cancel or tasks/resubscribe", preview(method))}
}

// decodeParams reads the params of method into p; anything but a JSON
// object, or one with a member the method does not take, is invalid.
func decodeParams(raw json.RawMessage, method string, p any) *rpcError {
	if len(bytes.TrimSpace(raw)) == 0 || raw[0] != '{' {
		return &rpcError{Code: codeInvalidParams, Message: `params must be a JSON object: message/send and message/stream take {"message":{"role":"user","parts":[{"kind":"text","text":"…"}],"messageId":"…"}}, tasks/get and tasks/cancel {"id":"…"}`}
	}
	if rerr := checkMembers(raw, method, p); rerr != nil {
		return rerr
	}
	if err := json.Unmarshal(raw, p); err != nil {
		msg := err.Error()
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			msg = fmt.Sprintf("params.%s is %s where %s belongs", te.Field, jsonKind(te.Value), jsonKind(te.Type.Kind().String()))
		}
		return &rpcError{Code: codeInvalidParams, Message: "params are not what this method takes: " + msg + `; a text part is {"kind":"text","text":"…"}`}
	}
	return nil
}

// jsonKind names a JSON value by what decoding calls it, or a Go kind by
// the JSON value it takes.
func jsonKind(kind string) string {
	switch kind {
	case "slice", "array":
		return "an array"
	case "struct", "map", "object":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	default:
		return "a " + kind
	}
}

// decodeTaskParams is decodeParams for a task method, whose params name
// the task at id: one without it is invalid.
func decodeTaskParams(raw json.RawMessage, method string, p any, id *a2a.TaskID) *rpcError {
	if rerr := decodeParams(raw, method, p); rerr != nil {
		return rerr
	}
	if *id == "" {
		return &rpcError{Code: codeInvalidParams, Message: `params.id is required: the task's id, as message/send answered it ({"id":"msg_…"})`}
	}
	return nil
}

// sendInput is what a message/send asks of the hub: the text of the
// message's text parts (joined by a blank line), its ids, and the summary
// its metadata may carry. Only text is taken.
func sendInput(p *a2a.MessageSendParams) (hub.A2ASend, *rpcError) {
	m := p.Message
	if m == nil {
		return hub.A2ASend{}, &rpcError{Code: codeInvalidParams, Message: "params.message is required: {\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"…\"}],\"messageId\":\"…\"}"}
	}
	if m.ID == "" {
		return hub.A2ASend{}, &rpcError{Code: codeInvalidParams, Message: "message.messageId is required: a new id for each message (a UUID, say); a retry with the same id gets the same task back"}
	}
	if m.Role != a2a.MessageRoleUser {
		return hub.A2ASend{}, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("message.role must be \"user\" (got %q)", preview(string(m.Role)))}
	}
	var texts []string
	for _, part := range m.Parts {
		switch v := part.(type) {
		case a2a.TextPart:
			texts = append(texts, v.Text)
		case *a2a.TextPart:
			texts = append(texts, v.Text)
		default:
			return hub.A2ASend{}, &rpcError{Code: codeContentType, Message: "only text parts are taken: put a file's or data's link or words in a text part"}
		}
	}
	if strings.TrimSpace(strings.Join(texts, "")) == "" {
		return hub.A2ASend{}, &rpcError{Code: codeInvalidParams, Message: `message.parts needs a text part with words in it: [{"kind":"text","text":"…"}]`}
	}
	in := hub.A2ASend{ContextID: m.ContextID, TaskID: string(m.TaskID), Body: strings.Join(texts, "\n\n"), ClientMsgID: m.ID}
	if s, ok := m.Metadata["summary"].(string); ok {
		in.Summary = s
	}
	return in, nil
}

func historyLength(cfg *a2a.MessageSendConfig) *int {
	if cfg == nil {
		return nil
	}
	return cfg.HistoryLength
}

// reply writes one JSON-RPC response.
func (c *call) reply(w http.ResponseWriter, id json.RawMessage, result any, rerr *rpcError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := response{JSONRPC: "2.0", ID: id, Result: result, Error: rerr}
	if rerr != nil {
		resp.Result = nil
	}
	writeJSON(w, resp)
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
		msg := ref.Reason + " (trace " + trace + ")"
		c.log(ctx, slog.LevelInfo, "a2a refused", trace, slog.String("status", ref.Status), slog.String("reason", ref.Reason))
		data := map[string]any{"error": msg, "status": ref.Status, "reason": ref.Reason, "brake": ref.Word(), "trace": trace}
		for k, v := range ref.Details {
			data[k] = v
		}
		return &rpcError{Code: codeDenied, Message: msg, Data: data}
	}
	e := hub.AsError(err)
	code, msg, level := codeRefused, e.Msg, slog.LevelInfo
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
	attrs := []slog.Attr{slog.String("code", e.WireCode()), slog.String("message", e.Msg)}
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
