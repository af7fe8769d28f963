package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/input"
)

// The methods of A2A 1.0's JSON-RPC binding (§9 of its specification), and
// the 0.3 names a client of the wrong revision may send.
var (
	methods10 = []string{"SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
		"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
		"DeleteTaskPushNotificationConfig", "GetExtendedAgentCard"}
	methods03 = []string{"message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
		"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list",
		"tasks/pushNotificationConfig/delete", "agent/getAuthenticatedExtendedCard"}
)

// The params of each 1.0 method, as the specification's a2a.proto names
// them, read strictly (input.Spec, as the MCP and REST faces read theirs):
// a member a method does not take — params.sender, say — is refused by
// name, never dropped (§4 input hygiene). Nested objects are read the same
// way, each on its own.
type (
	sendParams10 struct {
		Tenant        string          `json:"tenant"`
		Message       json.RawMessage `json:"message"`
		Configuration json.RawMessage `json:"configuration"`
		Metadata      map[string]any  `json:"metadata"`
	}
	message10In struct {
		MessageID        string            `json:"messageId"`
		ContextID        string            `json:"contextId"`
		TaskID           string            `json:"taskId"`
		Role             string            `json:"role"`
		Parts            []json.RawMessage `json:"parts"`
		Metadata         map[string]any    `json:"metadata"`
		Extensions       []string          `json:"extensions"`
		ReferenceTaskIDs []string          `json:"referenceTaskIds"`
	}
	part10In struct {
		Text      *string         `json:"text"`
		Raw       json.RawMessage `json:"raw"`
		URL       json.RawMessage `json:"url"`
		Data      json.RawMessage `json:"data"`
		Metadata  map[string]any  `json:"metadata"`
		Filename  string          `json:"filename"`
		MediaType string          `json:"mediaType"`
	}
	config10In struct {
		AcceptedOutputModes        []string        `json:"acceptedOutputModes"`
		TaskPushNotificationConfig json.RawMessage `json:"taskPushNotificationConfig"`
		HistoryLength              *int            `json:"historyLength"`
		ReturnImmediately          bool            `json:"returnImmediately"`
	}
	getTask10In struct {
		Tenant        string `json:"tenant"`
		ID            string `json:"id"`
		HistoryLength *int   `json:"historyLength"`
	}
	cancelTask10In struct {
		Tenant   string         `json:"tenant"`
		ID       string         `json:"id"`
		Metadata map[string]any `json:"metadata"`
	}
	subscribe10In struct {
		Tenant string `json:"tenant"`
		ID     string `json:"id"`
	}
	listTasks10In struct {
		Tenant               string `json:"tenant"`
		ContextID            string `json:"contextId"`
		Status               string `json:"status"`
		PageSize             *int   `json:"pageSize"`
		PageToken            string `json:"pageToken"`
		HistoryLength        *int   `json:"historyLength"`
		StatusTimestampAfter string `json:"statusTimestampAfter"`
		IncludeArtifacts     bool   `json:"includeArtifacts"`
	}
)

// The integers params take: a history length is an int32 of at least 0,
// a page of tasks 1–tasks.MaxPage.
var (
	historyRange = hub.Range{Min: 0, Max: math.MaxInt32}
	pageRange    = hub.Range{Min: 1, Max: tasks.MaxPage}
)

// serve10 answers a request in A2A 1.0.
func (c *call) serve10(w http.ResponseWriter, req *request) {
	ctx := c.r.Context()
	switch req.Method {
	case "SendStreamingMessage":
		in, _, rerr := c.sendInput10(req.Params)
		if rerr != nil {
			c.reply(w, req.ID, nil, rerr)
			return
		}
		t, err := c.s.tasks.Send(ctx, c.caller, c.owner, c.slug, in)
		if err != nil {
			c.reply(w, req.ID, nil, c.translate(ctx, err))
			return
		}
		c.stream(w, req.ID, t.ID, wire10{})
	case "SubscribeToTask":
		var p subscribe10In
		if rerr := c.decode10(req.Params, &p, nil); rerr != nil {
			c.reply(w, req.ID, nil, rerr)
			return
		}
		if rerr := c.taskParams10(p.Tenant, p.ID); rerr != nil {
			c.reply(w, req.ID, nil, rerr)
			return
		}
		t, err := c.s.tasks.Task(ctx, c.caller, c.owner, c.slug, p.ID)
		if err != nil {
			c.reply(w, req.ID, nil, c.translate(ctx, err))
			return
		}
		// A2A 1.0 refuses a subscription to a task in a terminal state:
		// nothing more would come (input-required is not one).
		if t.Final() && t.State != tasks.InputRequired {
			c.reply(w, req.ID, nil, &rpcError{Code: codeUnsupported, Message: fmt.Sprintf("task %s is %s, a final state: there are no updates to stream; read it with GetTask", t.ID, taskStates10[t.State])})
			return
		}
		c.stream(w, req.ID, t.ID, wire10{})
	default:
		result, rerr := c.handle10(ctx, req.Method, req.Params)
		c.reply(w, req.ID, result, rerr)
	}
}

// handle10 answers the 1.0 methods that return one result.
func (c *call) handle10(ctx context.Context, method string, params json.RawMessage) (any, *rpcError) {
	x := c.s.tasks
	switch method {
	case "SendMessage":
		in, cfg, rerr := c.sendInput10(params)
		if rerr != nil {
			return nil, rerr
		}
		t, err := x.Send(ctx, c.caller, c.owner, c.slug, in)
		if err != nil {
			return nil, c.translate(ctx, err)
		}
		// A2A 1.0 blocks unless told to return at once: the answer waits,
		// as long as a wait_for_messages may, for the task to end or ask
		// something, and is the task as it then stands either way.
		if !cfg.ReturnImmediately {
			if t, err = x.Await(ctx, c.caller, c.owner, c.slug, t, hub.MaxWait); err != nil {
				return nil, c.translate(ctx, err)
			}
		}
		return &SendMessageResponse{Task: task10Of(t, cfg.HistoryLength, true)}, nil
	case "GetTask":
		var p getTask10In
		if rerr := c.decode10(params, &p, map[string]hub.Range{"historyLength": historyRange}); rerr != nil {
			return nil, rerr
		}
		if rerr := c.taskParams10(p.Tenant, p.ID); rerr != nil {
			return nil, rerr
		}
		t, err := x.Task(ctx, c.caller, c.owner, c.slug, p.ID)
		if err != nil {
			return nil, c.translate(ctx, err)
		}
		return task10Of(t, p.HistoryLength, true), nil
	case "ListTasks":
		return c.listTasks10(ctx, params)
	case "CancelTask":
		var p cancelTask10In
		if rerr := c.decode10(params, &p, nil); rerr != nil {
			return nil, rerr
		}
		if rerr := c.taskParams10(p.Tenant, p.ID); rerr != nil {
			return nil, rerr
		}
		t, err := x.Cancel(ctx, c.caller, c.owner, c.slug, p.ID)
		if err != nil {
			return nil, c.translate(ctx, err)
		}
		return task10Of(t, nil, true), nil
	case "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig":
		return nil, errNoPush10
	case "GetExtendedAgentCard":
		return nil, &rpcError{Code: codeUnsupported, Message: "there is no extended card (capabilities.extendedAgentCard is false): the public card at " + CardPath + " says everything"}
	}
	msg := fmt.Sprintf("no method %q in A2A 1.0: use SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask or SubscribeToTask", preview(method))
	if slices.Contains(methods03, method) {
		msg += fmt.Sprintf(" (%s is A2A 0.3's name: send it with no A2A-Version header for 0.3)", method)
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: msg}
}

var errNoPush10 = &rpcError{Code: codePushNotSupport, Message: "push notifications are not offered (capabilities.pushNotifications is false): follow a task with SendStreamingMessage or SubscribeToTask, or ask GetTask"}

// listTasks10 is ListTasks: the caller's own tasks with the agent, newest
// first, a page at a time; pageToken is where the last page left off. The
// tasks carry no artifacts unless includeArtifacts says so.
func (c *call) listTasks10(ctx context.Context, params json.RawMessage) (any, *rpcError) {
	var p listTasks10In
	if rerr := c.decode10(params, &p, map[string]hub.Range{"pageSize": pageRange, "historyLength": historyRange}); rerr != nil {
		return nil, rerr
	}
	if rerr := checkTenant(p.Tenant); rerr != nil {
		return nil, rerr
	}
	if p.Status != "" && p.Status != "TASK_STATE_UNSPECIFIED" {
		return nil, &rpcError{Code: codeUnsupported, Message: "ListTasks does not filter by status here: leave status out and read each task's status.state"}
	}
	if p.StatusTimestampAfter != "" {
		return nil, &rpcError{Code: codeUnsupported, Message: "ListTasks does not filter by time here: leave statusTimestampAfter out; tasks come newest first, so stop paging where they get older than you need"}
	}
	size := tasks.DefaultPage
	if p.PageSize != nil {
		size = *p.PageSize
	}
	page, err := c.s.tasks.List(ctx, c.caller, c.owner, c.slug, p.ContextID, p.PageToken, size)
	if err != nil {
		return nil, c.translate(ctx, err)
	}
	out := &ListTasksResponse{Tasks: []*Task{}, NextPageToken: page.Next, PageSize: size, TotalSize: page.Total}
	for _, t := range page.Tasks {
		out.Tasks = append(out.Tasks, task10Of(t, p.HistoryLength, p.IncludeArtifacts))
	}
	return out, nil
}

// decode10 reads a 1.0 method's params, one JSON object (none reads as
// {}), into the struct p points to, strictly: names exactly as the
// specification writes them, each once, integers within ints.
func (c *call) decode10(raw json.RawMessage, p any, ints map[string]hub.Range) *rpcError {
	in := &input.Spec{Whole: "params", Part: "params member", Taker: c.method, Ints: ints}
	return invalidParams(in.Decode(raw, p))
}

// invalidParams is input's refusal as JSON-RPC's invalid params, or nil.
func invalidParams(err error) *rpcError {
	if err == nil {
		return nil
	}
	return &rpcError{Code: codeInvalidParams, Message: hub.AsError(err).Text(nil, nil)}
}

// checkTenant refuses a tenant: the card's interfaces name none, and A2A
// has a client send only the one its interface names.
func checkTenant(tenant string) *rpcError {
	if tenant == "" {
		return nil
	}
	return &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("params.tenant %q names a tenant, and this agent's interfaces name none: leave tenant out", preview(tenant))}
}

// taskParams10 checks the params of a method on one task: no tenant, and
// the task's id.
func (c *call) taskParams10(tenant, id string) *rpcError {
	if rerr := checkTenant(tenant); rerr != nil {
		return rerr
	}
	if id == "" {
		return &rpcError{Code: codeInvalidParams, Message: `params.id is required: the task's id, as SendMessage answered it ({"id":"msg_…"})`}
	}
	return nil
}

// sendInput10 is what a SendMessage or SendStreamingMessage asks of the
// hub: the text of the message's text parts (joined by a blank line), its
// ids and the summary its metadata may carry, as sendInput reads 0.3's;
// and the configuration. Only text is taken.
func (c *call) sendInput10(params json.RawMessage) (tasks.Message, *config10In, *rpcError) {
	const shape = `{"role":"ROLE_USER","parts":[{"text":"…"}],"messageId":"…"}`
	var p sendParams10
	if rerr := c.decode10(params, &p, nil); rerr != nil {
		return tasks.Message{}, nil, rerr
	}
	if rerr := checkTenant(p.Tenant); rerr != nil {
		return tasks.Message{}, nil, rerr
	}
	cfg := &config10In{}
	if given(p.Configuration) {
		in := &input.Spec{Whole: "params.configuration", Part: "params.configuration member", Taker: "a configuration", Ints: map[string]hub.Range{"historyLength": historyRange}}
		if rerr := invalidParams(in.Decode(p.Configuration, cfg)); rerr != nil {
			return tasks.Message{}, nil, rerr
		}
		if given(cfg.TaskPushNotificationConfig) {
			return tasks.Message{}, nil, errNoPush10
		}
	}
	if !given(p.Message) {
		return tasks.Message{}, nil, &rpcError{Code: codeInvalidParams, Message: "params.message is required: " + shape}
	}
	var m message10In
	if rerr := noKind(p.Message, "params.message"); rerr != nil {
		return tasks.Message{}, nil, rerr
	}
	in := &input.Spec{Whole: "params.message", Part: "params.message member", Taker: "a message"}
	if rerr := invalidParams(in.Decode(p.Message, &m)); rerr != nil {
		return tasks.Message{}, nil, rerr
	}
	if m.MessageID == "" {
		return tasks.Message{}, nil, &rpcError{Code: codeInvalidParams, Message: "params.message.messageId is required: a new id for each message (a UUID, say); a retry with the same id gets the same task back"}
	}
	if m.Role != string(RoleUser) {
		return tasks.Message{}, nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("params.message.role must be \"ROLE_USER\" (got %q)", preview(m.Role))}
	}
	var texts []string
	for i, raw := range m.Parts {
		text, rerr := partText10(raw, i)
		if rerr != nil {
			return tasks.Message{}, nil, rerr
		}
		texts = append(texts, text)
	}
	body := joinTexts(texts)
	if body == "" {
		return tasks.Message{}, nil, &rpcError{Code: codeInvalidParams, Message: `params.message.parts needs a text part with words in it: [{"text":"…"}]`}
	}
	send := tasks.Message{ContextID: m.ContextID, TaskID: m.TaskID, Body: body, ClientMsgID: m.MessageID}
	if s, ok := m.Metadata["summary"].(string); ok {
		send.Summary = s
	}
	return send, cfg, nil
}

// partText10 reads part i of a message: its text, or a refusal. A part
// holds one of text, raw, url and data; only text is taken.
func partText10(raw json.RawMessage, i int) (string, *rpcError) {
	where := fmt.Sprintf("params.message.parts[%d]", i)
	if rerr := noKind(raw, where); rerr != nil {
		return "", rerr
	}
	var p part10In
	in := &input.Spec{Whole: where, Part: where + " member", Taker: "a part"}
	if rerr := invalidParams(in.Decode(raw, &p)); rerr != nil {
		return "", rerr
	}
	n := 0
	for _, set := range []bool{p.Text != nil, given(p.Raw), given(p.URL), given(p.Data)} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return "", &rpcError{Code: codeInvalidParams, Message: where + ` holds nothing: a text part is {"text":"…"}`}
	case n > 1:
		return "", &rpcError{Code: codeInvalidParams, Message: where + " holds more than one of text, raw, url and data: give each part one"}
	case p.Text == nil:
		return "", &rpcError{Code: codeContentType, Message: `only text parts are taken: put a file's or data's link or words in a text part ({"text":"…"})`}
	}
	return *p.Text, nil
}

// noKind refuses an object of A2A 0.3's shape, which names its kind, sent
// as 1.0: the refusal says both ways to send it.
func noKind(raw json.RawMessage, where string) *rpcError {
	var k struct {
		Kind json.RawMessage `json:"kind"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) && json.Unmarshal(raw, &k) == nil && given(k.Kind) {
		return &rpcError{Code: codeInvalidParams, Message: where + ` has a "kind", as A2A 0.3 writes it: in A2A 1.0 a message has none and a text part is {"text":"…"}; or send 0.3's shapes with no A2A-Version header`}
	}
	return nil
}

// given reports whether a member was there and not null.
func given(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// joinTexts is a message's body: the text of its text parts, joined by a
// blank line; "" when they hold no words.
func joinTexts(texts []string) string {
	if strings.TrimSpace(strings.Join(texts, "")) == "" {
		return ""
	}
	return strings.Join(texts, "\n\n")
}
