package a2a

import (
	"strconv"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
)

// taskOf renders a hub task (§18): its id is the request message's id, its
// contextId the conversation's; each reply of the agent is an artifact
// (the reply's id is the artifact's), and the last one is the status
// message once the task is completed or asks something. History is the
// request and the replies, the last historyLength of them when given.
// metadata.palaver says, in Palaver's words, why the task stands where it
// does.
func taskOf(t *tasks.Task, historyLength *int) *a2a.Task {
	at := t.Request.CreatedAt
	history := []*a2a.Message{messageOf(t, t.Request, a2a.MessageRoleUser)}
	var artifacts []*a2a.Artifact
	for _, m := range t.Replies {
		history = append(history, messageOf(t, m, a2a.MessageRoleAgent))
		artifacts = append(artifacts, artifactOf(m))
		at = m.CreatedAt
	}
	if historyLength != nil {
		if n := *historyLength; n <= 0 {
			history = []*a2a.Message{}
		} else if n < len(history) {
			history = history[len(history)-n:]
		}
	}
	status := a2a.TaskStatus{State: a2a.TaskState(t.State), Timestamp: &at}
	if n := len(t.Replies); n > 0 && (t.State == tasks.Completed || t.State == tasks.InputRequired) {
		status.Message = messageOf(t, t.Replies[n-1], a2a.MessageRoleAgent)
	}
	return &a2a.Task{
		ID: a2a.TaskID(t.ID), ContextID: t.ConversationID, Status: status, Artifacts: artifacts, History: history,
		Metadata: map[string]any{"palaver": map[string]any{"note": t.Note, "attempts": t.Attempts, "agent": t.Agent.Handle()}},
	}
}

// messageOf is a conversation's message as an A2A message of task t. Its
// words are someone else's: metadata.palaver marks them untrusted and
// carries the server-attested provenance (§4).
func messageOf(t *tasks.Task, m *hub.Message, role a2a.MessageRole) *a2a.Message {
	return &a2a.Message{
		ID: m.ID, ContextID: t.ConversationID, TaskID: a2a.TaskID(t.ID), Role: role,
		Parts:    a2a.ContentParts{a2a.TextPart{Text: m.Body}},
		Metadata: map[string]any{"palaver": messageMeta(m)},
	}
}

func artifactOf(m *hub.Message) *a2a.Artifact {
	return &a2a.Artifact{
		ID: a2a.ArtifactID(m.ID), Name: "reply " + strconv.FormatInt(m.Seq, 10),
		Parts:    a2a.ContentParts{a2a.TextPart{Text: m.Body}},
		Metadata: map[string]any{"palaver": messageMeta(m)},
	}
}

func messageMeta(m *hub.Message) map[string]any {
	return map[string]any{"seq": m.Seq, "sender": m.SenderHandle, "format": m.Format, "untrusted": true, "provenance": m.Provenance()}
}

// wire03 renders a stream's events in A2A 0.3: the task, then a2a-go's
// artifact-update and status-update events, the last status final.
type wire03 struct{}

func (wire03) task(t *tasks.Task) any { return taskOf(t, nil) }

func (wire03) artifact(t *tasks.Task, m *hub.Message) any {
	return &a2a.TaskArtifactUpdateEvent{TaskID: a2a.TaskID(t.ID), ContextID: t.ConversationID, Artifact: artifactOf(m), LastChunk: true}
}

func (wire03) status(t *tasks.Task) any {
	full := taskOf(t, nil)
	return &a2a.TaskStatusUpdateEvent{TaskID: a2a.TaskID(t.ID), ContextID: t.ConversationID, Status: full.Status, Final: t.Final(), Metadata: full.Metadata}
}
