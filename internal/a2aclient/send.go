package a2aclient

import (
	"context"
	"encoding/json"
	"strings"

	a03 "github.com/a2aproject/a2a-go/a2a"

	"github.com/palaverhq/palaver/internal/a2a"
)

// Task states as the hub names them: A2A 0.3's words, which 1.0's
// TASK_STATE_… map to.
const (
	StateMessage       = "message" // the agent answered with a message: nothing more will come
	StateSubmitted     = "submitted"
	StateWorking       = "working"
	StateCompleted     = "completed"
	StateFailed        = "failed"
	StateCanceled      = "canceled"
	StateRejected      = "rejected"
	StateInputRequired = "input-required"
	StateAuthRequired  = "auth-required"
)

// Reply is what the remote agent answered: a message, or a task in some
// state, with the words it carries (its message, or its status's
// message) and a task's artifacts.
type Reply struct {
	TaskID, ContextID string
	State             string
	Text              string
	Artifacts         []Artifact
}

// Artifact is an output of a task: its text parts' words and its data
// parts, each a JSON value.
type Artifact struct {
	ID, Name string
	Text     string
	Data     []json.RawMessage
}

// Done reports whether nothing more will come of the call: a message, or
// a task that ended or waits for an answer.
func (r *Reply) Done() bool {
	switch r.State {
	case StateSubmitted, StateWorking:
		return false
	}
	return true
}

// Send sends text to the agent as message messageID (the same id on every
// retry, so the agent can tell one it already has) in contextID — and in
// taskID, a task that asked for input, unless "" — asking for the answer
// at once: a task still working is asked after (GetTask).
func (c *Client) Send(ctx context.Context, card *Card, credential string, allow Allow, messageID, contextID, taskID, text string) (*Reply, error) {
	if card.Version == a2a.Version03 {
		m := a03.NewMessage(a03.MessageRoleUser, a03.TextPart{Text: text})
		m.ID, m.ContextID, m.TaskID = messageID, contextID, a03.TaskID(taskID)
		var raw json.RawMessage
		blocking := false
		params := a03.MessageSendParams{Message: m, Config: &a03.MessageSendConfig{Blocking: &blocking}}
		if err := c.rpc(ctx, card, credential, allow, "message/send", params, &raw); err != nil {
			return nil, err
		}
		return reply03(raw)
	}
	m := a2a.Message{MessageID: messageID, ContextID: contextID, TaskID: taskID, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(text, "")}}
	var res a2a.SendMessageResponse
	// The answer comes at once, a task asked after later: a call never
	// waits on the remote's work, so a timeout never sends it twice.
	params := map[string]any{"message": m, "configuration": map[string]any{"returnImmediately": true}}
	if err := c.rpc(ctx, card, credential, allow, "SendMessage", params, &res); err != nil {
		return nil, err
	}
	if res.Message != nil {
		return &Reply{TaskID: res.Message.TaskID, ContextID: res.Message.ContextID, State: StateMessage, Text: text10(res.Message)}, nil
	}
	if res.Task == nil {
		return nil, errShape
	}
	return reply10(res.Task), nil
}

// GetTask asks after a task the agent made.
func (c *Client) GetTask(ctx context.Context, card *Card, credential string, allow Allow, taskID string) (*Reply, error) {
	if card.Version == a2a.Version03 {
		var raw json.RawMessage
		if err := c.rpc(ctx, card, credential, allow, "tasks/get", a03.TaskQueryParams{ID: a03.TaskID(taskID)}, &raw); err != nil {
			return nil, err
		}
		return reply03(raw)
	}
	var t a2a.Task
	if err := c.rpc(ctx, card, credential, allow, "GetTask", map[string]any{"id": taskID}, &t); err != nil {
		return nil, err
	}
	return reply10(&t), nil
}

type shapeError struct{}

func (shapeError) Error() string { return "the answer is neither a message nor a task" }

var errShape error = shapeError{}

// reply10 is a 1.0 task as a Reply.
func reply10(t *a2a.Task) *Reply {
	r := &Reply{TaskID: t.ID, ContextID: t.ContextID, State: state10(t.Status.State)}
	if t.Status.Message != nil {
		r.Text = text10(t.Status.Message)
	}
	for _, a := range t.Artifacts {
		if a == nil {
			continue
		}
		art := Artifact{ID: a.ArtifactID, Name: a.Name}
		var words []string
		for _, p := range a.Parts {
			switch {
			case p.Text != nil:
				words = append(words, *p.Text)
			case len(p.Data) > 0:
				art.Data = append(art.Data, p.Data)
			case p.URL != nil:
				words = append(words, *p.URL)
			}
		}
		art.Text = join(words)
		r.Artifacts = append(r.Artifacts, art)
	}
	return r
}

// state10 is a 1.0 task state by its 0.3 name.
func state10(s a2a.TaskState) string {
	name, ok := strings.CutPrefix(string(s), "TASK_STATE_")
	if !ok {
		return StateSubmitted
	}
	return strings.ReplaceAll(strings.ToLower(name), "_", "-")
}

func text10(m *a2a.Message) string { return partsText10(m.Parts) }

func partsText10(ps []a2a.Part) string {
	var words []string
	for _, p := range ps {
		switch {
		case p.Text != nil:
			words = append(words, *p.Text)
		case len(p.Data) > 0:
			words = append(words, string(p.Data))
		case p.URL != nil:
			words = append(words, *p.URL)
		}
	}
	return join(words)
}

// reply03 is a 0.3 result — a message or a task — as a Reply.
func reply03(raw json.RawMessage) (*Reply, error) {
	ev, err := a03.UnmarshalEventJSON(raw)
	if err != nil {
		return nil, errShape
	}
	switch v := ev.(type) {
	case *a03.Message:
		return &Reply{TaskID: string(v.TaskID), ContextID: v.ContextID, State: StateMessage, Text: partsText03(v.Parts)}, nil
	case *a03.Task:
		r := &Reply{TaskID: string(v.ID), ContextID: v.ContextID, State: string(v.Status.State)}
		if v.Status.Message != nil {
			r.Text = partsText03(v.Status.Message.Parts)
		}
		for _, a := range v.Artifacts {
			if a == nil {
				continue
			}
			art := Artifact{ID: string(a.ID), Name: a.Name}
			var words []string
			for _, p := range a.Parts {
				switch v := p.(type) {
				case a03.TextPart:
					words = append(words, v.Text)
				case *a03.TextPart:
					words = append(words, v.Text)
				case a03.DataPart:
					if b, err := json.Marshal(v.Data); err == nil {
						art.Data = append(art.Data, b)
					}
				case *a03.DataPart:
					if b, err := json.Marshal(v.Data); err == nil {
						art.Data = append(art.Data, b)
					}
				}
			}
			art.Text = join(words)
			r.Artifacts = append(r.Artifacts, art)
		}
		return r, nil
	}
	return nil, errShape
}

func partsText03(ps a03.ContentParts) string {
	var words []string
	for _, p := range ps {
		switch v := p.(type) {
		case a03.TextPart:
			words = append(words, v.Text)
		case *a03.TextPart:
			words = append(words, v.Text)
		case a03.DataPart:
			if b, err := json.Marshal(v.Data); err == nil {
				words = append(words, string(b))
			}
		}
	}
	return join(words)
}

// join puts the non-empty words together, a blank line apart.
func join(words []string) string {
	var kept []string
	for _, w := range words {
		if strings.TrimSpace(w) != "" {
			kept = append(kept, w)
		}
	}
	return strings.Join(kept, "\n\n")
}
