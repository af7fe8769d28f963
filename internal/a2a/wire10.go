package a2a

import (
	"encoding/json"
	"time"
)

// A2A 1.0's wire types: the messages of its a2a.proto (package lf.a2a.v1)
// as its JSON bindings carry them, in ProtoJSON (the specification's §5.5,
// ADR-001): names in camelCase, enums by their names (TASK_STATE_WORKING),
// a oneof as the one member that is set, a field at its default left out.
// Only what the face sends is here; what it reads is read strictly, member
// by member, in jsonrpc10.go. No Go module of A2A 1.0 is at hand, and the
// 0.3 SDK's types (a2a-go) cannot carry 1.0's shapes.

// TaskState is a task's state.
type TaskState string

// The task states of A2A 1.0.
const (
	TaskStateSubmitted     TaskState = "TASK_STATE_SUBMITTED"
	TaskStateWorking       TaskState = "TASK_STATE_WORKING"
	TaskStateCompleted     TaskState = "TASK_STATE_COMPLETED"
	TaskStateFailed        TaskState = "TASK_STATE_FAILED"
	TaskStateCanceled      TaskState = "TASK_STATE_CANCELED"
	TaskStateInputRequired TaskState = "TASK_STATE_INPUT_REQUIRED"
	TaskStateRejected      TaskState = "TASK_STATE_REJECTED"
	TaskStateAuthRequired  TaskState = "TASK_STATE_AUTH_REQUIRED"
)

// Role is who sent a message: the client (user) or the agent.
type Role string

// The roles of A2A 1.0.
const (
	RoleUser  Role = "ROLE_USER"
	RoleAgent Role = "ROLE_AGENT"
)

// Part is a piece of a message or an artifact: one of text, raw bytes, a
// url or data. Palaver sends only text.
type Part struct {
	Text      *string         `json:"text,omitempty"`
	Raw       []byte          `json:"raw,omitempty"`
	URL       *string         `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

// TextPart is a part of text of the media type (text/plain, text/markdown).
func TextPart(text, mediaType string) Part {
	return Part{Text: &text, MediaType: mediaType}
}

// Message is one turn of the client or the agent.
type Message struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             Role           `json:"role"`
	Parts            []Part         `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

// Artifact is an output of a task.
type Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

// TaskStatus is where a task stands. Timestamp is ProtoJSON's
// (Timestamp).
type TaskStatus struct {
	State     TaskState `json:"state"`
	Message   *Message  `json:"message,omitempty"`
	Timestamp string    `json:"timestamp,omitempty"`
}

// Task is a unit of work: its status, outputs and history.
type Task struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId,omitempty"`
	Status    TaskStatus     `json:"status"`
	Artifacts []*Artifact    `json:"artifacts,omitempty"`
	History   []*Message     `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskStatusUpdateEvent is a change of a task's status, streamed. Unlike
// 0.3's it has no "final": the stream ends after the last one.
type TaskStatusUpdateEvent struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskArtifactUpdateEvent is an artifact of a task, streamed.
type TaskArtifactUpdateEvent struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  *Artifact      `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// StreamResponse is one event of SendStreamingMessage or SubscribeToTask:
// exactly one member is set.
type StreamResponse struct {
	Task           *Task                    `json:"task,omitempty"`
	Message        *Message                 `json:"message,omitempty"`
	StatusUpdate   *TaskStatusUpdateEvent   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *TaskArtifactUpdateEvent `json:"artifactUpdate,omitempty"`
}

// SendMessageResponse is SendMessage's result: a task or a message.
type SendMessageResponse struct {
	Task    *Task    `json:"task,omitempty"`
	Message *Message `json:"message,omitempty"`
}

// ListTasksResponse is ListTasks' result; every member is always there
// (nextPageToken "" on the last page).
type ListTasksResponse struct {
	Tasks         []*Task `json:"tasks"`
	NextPageToken string  `json:"nextPageToken"`
	PageSize      int     `json:"pageSize"`
	TotalSize     int     `json:"totalSize"`
}

// AgentCard describes an agent: who it is, where and how it is called.
type AgentCard struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	SupportedInterfaces  []AgentInterface          `json:"supportedInterfaces"`
	Provider             *AgentProvider            `json:"provider,omitempty"`
	Version              string                    `json:"version"`
	DocumentationURL     string                    `json:"documentationUrl,omitempty"`
	Capabilities         AgentCapabilities         `json:"capabilities"`
	SecuritySchemes      map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	SecurityRequirements []SecurityRequirement     `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []AgentSkill              `json:"skills"`
	IconURL              string                    `json:"iconUrl,omitempty"`
}

// AgentInterface is one way to call the agent: a URL, a protocol binding
// (JSONRPC, GRPC, HTTP+JSON) and the A2A revision it speaks ("1.0", "0.3").
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	Tenant          string `json:"tenant,omitempty"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentProvider is who runs the agent.
type AgentProvider struct {
	URL          string `json:"url"`
	Organization string `json:"organization"`
}

// AgentCapabilities says which optional parts of A2A the agent serves.
// Each is a proto3 optional: Palaver says each, true or false.
type AgentCapabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
	ExtendedAgentCard bool `json:"extendedAgentCard"`
}

// AgentSkill is something the agent does.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
	InputModes  []string `json:"inputModes,omitempty"`
	OutputModes []string `json:"outputModes,omitempty"`
}

// SecurityScheme is one way to authenticate: exactly one member is set.
type SecurityScheme struct {
	HTTPAuthSecurityScheme *HTTPAuthSecurityScheme `json:"httpAuthSecurityScheme,omitempty"`
	OAuth2SecurityScheme   *OAuth2SecurityScheme   `json:"oauth2SecurityScheme,omitempty"`
}

// HTTPAuthSecurityScheme is HTTP authentication (Bearer, …).
type HTTPAuthSecurityScheme struct {
	Description  string `json:"description,omitempty"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat,omitempty"`
}

// OAuth2SecurityScheme is OAuth 2.0.
type OAuth2SecurityScheme struct {
	Description       string     `json:"description,omitempty"`
	Flows             OAuthFlows `json:"flows"`
	OAuth2MetadataURL string     `json:"oauth2MetadataUrl,omitempty"`
}

// OAuthFlows is the OAuth flow offered (a oneof; Palaver's is the
// authorization code flow).
type OAuthFlows struct {
	AuthorizationCode *AuthorizationCodeOAuthFlow `json:"authorizationCode,omitempty"`
}

// AuthorizationCodeOAuthFlow is the authorization code flow's endpoints
// and scopes.
type AuthorizationCodeOAuthFlow struct {
	AuthorizationURL string            `json:"authorizationUrl"`
	TokenURL         string            `json:"tokenUrl"`
	RefreshURL       string            `json:"refreshUrl,omitempty"`
	Scopes           map[string]string `json:"scopes"`
	PKCERequired     bool              `json:"pkceRequired,omitempty"`
}

// SecurityRequirement is one way of the card's security schemes that
// suffices, with the scopes each needs.
type SecurityRequirement struct {
	Schemes map[string]StringList `json:"schemes"`
}

// StringList is a list of strings (proto's way to put one in a map).
type StringList struct {
	List []string `json:"list,omitempty"`
}

// ErrorInfo is google.rpc.ErrorInfo, the detail A2A 1.0's errors carry in
// data (its §9.5): why, in UPPER_SNAKE_CASE within a domain, and what
// else is known, as strings.
type ErrorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// errorInfoType is ErrorInfo's type URL, as ProtoJSON writes an Any.
const errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// timestamp is t as ProtoJSON writes a Timestamp: UTC, in milliseconds.
func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
