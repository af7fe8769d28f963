package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
)

// serve03 answers a request in A2A 0.3: message/send, message/stream,
// tasks/get, tasks/cancel and tasks/resubscribe, as a2a-go's types read and
// write them.
func (c *call) serve03(w http.ResponseWriter, req *request) {
	ctx, s, caller, owner, slug := c.r.Context(), c.s, c.caller, c.owner, c.slug
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
		t, err := s.tasks.Send(ctx, caller, owner, slug, in)
		if err != nil {
			c.reply(w, req.ID, nil, c.translate(ctx, err))
			return
		}
		c.stream(w, req.ID, t.ID, wire03{})
	case "tasks/resubscribe":
		var p a2a.TaskIDParams
		if rerr := decodeTaskParams(req.Params, req.Method, &p, &p.ID); rerr != nil {
			c.reply(w, req.ID, nil, rerr)
			return
		}
		if _, err := s.tasks.Task(ctx, caller, owner, slug, string(p.ID)); err != nil {
			c.reply(w, req.ID, nil, c.translate(ctx, err))
			return
		}
		c.stream(w, req.ID, string(p.ID), wire03{})
	default:
		result, rerr := c.handle(ctx, req.Method, req.Params)
		c.reply(w, req.ID, result, rerr)
	}
}

// handle answers the 0.3 methods that return one result.
func (c *call) handle(ctx context.Context, method string, params json.RawMessage) (any, *rpcError) {
	x := c.s.tasks
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
		t, err := x.Send(ctx, c.caller, c.owner, c.slug, in)
		if err != nil {
			return nil, c.translate(ctx, err)
		}
		// blocking: true waits, as long as a wait_for_messages may, for
		// the task to end or ask something; the task as it then stands
		// is the answer either way.
		if p.Config != nil && p.Config.Blocking != nil && *p.Config.Blocking {
			if t, err = x.Await(ctx, c.caller, c.owner, c.slug, t, hub.MaxWait); err != nil {
				return nil, c.translate(ctx, err)
			}
		}
		return taskOf(t, historyLength(p.Config)), nil
	case "tasks/get":
		var p a2a.TaskQueryParams
		if rerr := decodeTaskParams(params, method, &p, &p.ID); rerr != nil {
			return nil, rerr
		}
		t, err := x.Task(ctx, c.caller, c.owner, c.slug, string(p.ID))
		if err != nil {
			return nil, c.translate(ctx, err)
		}
		return taskOf(t, p.HistoryLength), nil
	case "tasks/cancel":
		var p a2a.TaskIDParams
		if rerr := decodeTaskParams(params, method, &p, &p.ID); rerr != nil {
			return nil, rerr
		}
		t, err := x.Cancel(ctx, c.caller, c.owner, c.slug, string(p.ID))
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
	msg := fmt.Sprintf("no method %q: use message/send, message/stream, tasks/get, tasks/cancel or tasks/resubscribe", preview(method))
	if slices.Contains(methods10, method) {
		msg += fmt.Sprintf(" (%s is A2A 1.0's name: send it with the header A2A-Version: 1.0)", method)
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: msg}
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
func sendInput(p *a2a.MessageSendParams) (tasks.Message, *rpcError) {
	m := p.Message
	if m == nil {
		return tasks.Message{}, &rpcError{Code: codeInvalidParams, Message: "params.message is required: {\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"…\"}],\"messageId\":\"…\"}"}
	}
	if m.ID == "" {
		return tasks.Message{}, &rpcError{Code: codeInvalidParams, Message: "message.messageId is required: a new id for each message (a UUID, say); a retry with the same id gets the same task back"}
	}
	if m.Role != a2a.MessageRoleUser {
		return tasks.Message{}, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("message.role must be \"user\" (got %q)", preview(string(m.Role)))}
	}
	var texts []string
	for _, part := range m.Parts {
		switch v := part.(type) {
		case a2a.TextPart:
			texts = append(texts, v.Text)
		case *a2a.TextPart:
			texts = append(texts, v.Text)
		default:
			return tasks.Message{}, &rpcError{Code: codeContentType, Message: "only text parts are taken: put a file's or data's link or words in a text part"}
		}
	}
	body := joinTexts(texts)
	if body == "" {
		return tasks.Message{}, &rpcError{Code: codeInvalidParams, Message: `message.parts needs a text part with words in it: [{"kind":"text","text":"…"}]`}
	}
	in := tasks.Message{ContextID: m.ContextID, TaskID: string(m.TaskID), Body: body, ClientMsgID: m.ID}
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
