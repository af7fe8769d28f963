package a2a

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
)

// taskStates10 are the hub's task states (§18) in A2A 1.0's words.
var taskStates10 = map[string]TaskState{
	tasks.Submitted:     TaskStateSubmitted,
	tasks.Working:       TaskStateWorking,
	tasks.InputRequired: TaskStateInputRequired,
	tasks.Completed:     TaskStateCompleted,
	tasks.Failed:        TaskStateFailed,
	tasks.Canceled:      TaskStateCanceled,
	tasks.Rejected:      TaskStateRejected,
}

// task10Of renders a hub task in A2A 1.0, as taskOf does in 0.3: its id is
// the request message's, its contextId the conversation's; each reply of
// the agent is an artifact, and the last one is the status message once
// the task is completed or asks something. History is the request and the
// replies, the last historyLength of them when given (none at 0: the
// member is left out). Artifacts are left out unless withArtifacts
// (ListTasks without includeArtifacts).
func task10Of(t *tasks.Task, historyLength *int, withArtifacts bool) *Task {
	history := []*Message{message10Of(t, t.Request, RoleUser)}
	var artifacts []*Artifact
	for _, m := range t.Replies {
		history = append(history, message10Of(t, m, RoleAgent))
		artifacts = append(artifacts, artifact10Of(m))
	}
	if historyLength != nil {
		if n := *historyLength; n <= 0 {
			history = nil
		} else if n < len(history) {
			history = history[len(history)-n:]
		}
	}
	if !withArtifacts {
		artifacts = nil
	}
	return &Task{
		ID: t.ID, ContextID: t.ConversationID, Status: status10Of(t), Artifacts: artifacts, History: history,
		Metadata: map[string]any{"palaver": taskMeta(t)},
	}
}

// status10Of is where t stands: its state, as of its last reply (or the
// request), with that reply as its message once it is completed or asks.
func status10Of(t *tasks.Task) TaskStatus {
	s := TaskStatus{State: taskStates10[t.State], Timestamp: timestamp(t.Request.CreatedAt)}
	if n := len(t.Replies); n > 0 {
		s.Timestamp = timestamp(t.Replies[n-1].CreatedAt)
		if t.State == tasks.Completed || t.State == tasks.InputRequired {
			s.Message = message10Of(t, t.Replies[n-1], RoleAgent)
		}
	}
	return s
}

// taskMeta says, in Palaver's words, why a task stands where it does.
func taskMeta(t *tasks.Task) map[string]any {
	return map[string]any{"note": t.Note, "attempts": t.Attempts, "agent": t.Agent.Handle()}
}

// message10Of is a conversation's message as an A2A 1.0 message of task
// t. Its words are someone else's: metadata.palaver marks them untrusted
// and carries the server-attested provenance (§4).
func message10Of(t *tasks.Task, m *hub.Message, role Role) *Message {
	return &Message{
		MessageID: m.ID, ContextID: t.ConversationID, TaskID: t.ID, Role: role,
		Parts:    []Part{TextPart(m.Body, mediaTypeOf(m.Format))},
		Metadata: map[string]any{"palaver": messageMeta(m)},
	}
}

func artifact10Of(m *hub.Message) *Artifact {
	return &Artifact{
		ArtifactID: m.ID, Name: "reply " + strconv.FormatInt(m.Seq, 10),
		Parts:    []Part{TextPart(m.Body, mediaTypeOf(m.Format))},
		Metadata: map[string]any{"palaver": messageMeta(m)},
	}
}

// mediaTypeOf is the media type of a message's format (§4).
func mediaTypeOf(format string) string {
	if format == hub.FormatMarkdown {
		return "text/markdown"
	}
	return "text/plain"
}

// wire10 renders a stream's events in A2A 1.0: each a StreamResponse, the
// task first, then artifact and status updates; the stream's end says
// the last was final.
type wire10 struct{}

func (wire10) task(t *tasks.Task) any { return &StreamResponse{Task: task10Of(t, nil, true)} }

func (wire10) artifact(t *tasks.Task, m *hub.Message) any {
	return &StreamResponse{ArtifactUpdate: &TaskArtifactUpdateEvent{TaskID: t.ID, ContextID: t.ConversationID, Artifact: artifact10Of(m), LastChunk: true}}
}

func (wire10) status(t *tasks.Task) any {
	return &StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ConversationID,
		Status: status10Of(t), Metadata: map[string]any{"palaver": taskMeta(t)}}}
}

// response10 is a JSON-RPC response in A2A 1.0.
type response10 struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError10     `json:"error,omitempty"`
}

// rpcError10 is a JSON-RPC error in A2A 1.0: its data is a list of
// details, each naming its type (§9.5 of the specification).
type rpcError10 struct {
	Code    int         `json:"code"`
	Message string      `json:"message"`
	Data    []ErrorInfo `json:"data,omitempty"`
}

// The domains of the reasons errors give: A2A's own, and Palaver's.
const (
	domainA2A     = "a2a-protocol.org"
	domainPalaver = "palaver"
)

// reasons10 are the reasons of A2A's own error codes, as the specification
// and its SDKs name them.
var reasons10 = map[int]string{
	codeTaskNotFound:   "TASK_NOT_FOUND",
	codeNotCancelable:  "TASK_NOT_CANCELABLE",
	codePushNotSupport: "PUSH_NOTIFICATION_NOT_SUPPORTED",
	codeUnsupported:    "UNSUPPORTED_OPERATION",
	codeContentType:    "CONTENT_TYPE_NOT_SUPPORTED",
	codeNoExtendedCard: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
	codeVersion:        "VERSION_NOT_SUPPORTED",
	codeInvalidParams:  "INVALID_PARAMS",
}

// errorOf10 is an error of the face (translate's, or one it makes) in A2A
// 1.0's shape: the same code and message, and what 0.3 puts in data — the
// refusal's status, reason and brake, the hub's code, the trace — as one
// google.rpc.ErrorInfo. Its reason is A2A's for A2A's codes; for
// Palaver's, the refusal's status (DENIED, PENDING_APPROVAL) or the hub's
// code (MISSING_SCOPE, RATE_LIMITED, …), in Palaver's domain.
func errorOf10(e *rpcError) *rpcError10 {
	out := &rpcError10{Code: e.Code, Message: e.Message}
	reason, domain := reasons10[e.Code], domainA2A
	if reason == "" && e.Data != nil {
		domain = domainPalaver
		switch e.Code {
		case codeDenied:
			reason = upperSnake(e.Data["status"])
		case codeRefused:
			reason = upperSnake(e.Data["code"])
		default:
			reason = "INTERNAL"
		}
	}
	if reason == "" {
		return out
	}
	info := ErrorInfo{Type: errorInfoType, Reason: reason, Domain: domain}
	for k, v := range e.Data {
		if k == "error" {
			continue // the message itself, which 0.3's Go SDK reads from data
		}
		if info.Metadata == nil {
			info.Metadata = map[string]string{}
		}
		if s, ok := v.(string); ok {
			info.Metadata[k] = s
		} else {
			info.Metadata[k] = jsonText(v)
		}
	}
	out.Data = []ErrorInfo{info}
	return out
}

func upperSnake(v any) string {
	s, _ := v.(string)
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}
