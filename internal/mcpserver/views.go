package mcpserver

import (
	"encoding/json"

	"github.com/palaverhq/palaver/internal/hub"
)

// The JSON shapes tools return (§10.3). Every shape that carries words chosen
// by someone else (bodies, titles, notes, names) says untrusted:true (§4).

// timeText is hub.FormatTime, short for the views below.
var timeText = hub.FormatTime

type senderView struct {
	Handle   string `json:"handle"`
	Kind     string `json:"kind"`
	Instance string `json:"instance,omitempty"`
}

type messageView struct {
	MessageID      string          `json:"message_id"`
	ConversationID string          `json:"conversation_id"`
	Seq            int64           `json:"seq"`
	Sender         senderView      `json:"sender"`
	Body           string          `json:"body"`
	Summary        string          `json:"summary,omitempty"`
	Format         string          `json:"format"`
	Kind           string          `json:"kind"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	Mentions       []string        `json:"mentions,omitempty"`
	ReplyToSeq     int64           `json:"reply_to_seq,omitempty"`
	NoReply        bool            `json:"no_reply,omitempty"`
	ToInstance     string          `json:"to_instance,omitempty"`
	ClientMsgID    string          `json:"client_msg_id,omitempty"`
	Provenance     hub.Provenance  `json:"provenance"`
	CreatedAt      string          `json:"created_at"`
	Untrusted      bool            `json:"untrusted"`
}

func viewMessage(m *hub.Message) messageView {
	return messageView{
		MessageID: m.ID, ConversationID: m.ConversationID, Seq: m.Seq,
		Sender: senderView{Handle: m.SenderHandle, Kind: m.SenderKind, Instance: m.SenderInstance},
		Body:   m.Body, Summary: m.Summary, Format: m.Format, Kind: m.Kind, Metadata: m.Metadata,
		Mentions: m.Mentions, ReplyToSeq: m.ReplyToSeq, NoReply: m.NoReply, ToInstance: m.ToInstance,
		ClientMsgID: m.ClientMsgID, Provenance: m.Provenance(), CreatedAt: timeText(m.CreatedAt), Untrusted: true,
	}
}

// messageLine is a message as one line: no body (§5 listing).
type messageLine struct {
	MessageID      string     `json:"message_id"`
	ConversationID string     `json:"conversation_id"`
	Seq            int64      `json:"seq"`
	Sender         senderView `json:"sender"`
	Summary        string     `json:"summary"`
	At             string     `json:"at"`
}

func lineOf(m *hub.Message) messageLine {
	return messageLine{
		MessageID: m.ID, ConversationID: m.ConversationID, Seq: m.Seq,
		Sender:  senderView{Handle: m.SenderHandle, Kind: m.SenderKind, Instance: m.SenderInstance},
		Summary: m.SummaryLine(), At: timeText(m.CreatedAt),
	}
}

type participantView struct {
	Handle string `json:"handle"`
	Kind   string `json:"kind"`
	Role   string `json:"role"`
}

type conversationView struct {
	ConversationID string            `json:"conversation_id"`
	Kind           string            `json:"kind"`
	Title          string            `json:"title,omitempty"`
	Goal           string            `json:"goal,omitempty"`
	Status         string            `json:"status"`
	PausedReason   string            `json:"paused_reason,omitempty"`
	LastSeq        int64             `json:"last_seq"`
	Participants   []participantView `json:"participants"`
	CreatedAt      string            `json:"created_at"`
}

func viewConversation(v *hub.ConversationView) conversationView {
	out := conversationView{
		ConversationID: v.Conversation.ID, Kind: v.Conversation.Kind, Title: v.Conversation.Title,
		Goal: v.Conversation.Goal, Status: v.Conversation.State(), LastSeq: v.Conversation.LastSeq,
		CreatedAt: timeText(v.Conversation.CreatedAt), Participants: []participantView{},
	}
	if out.Status == hub.StatusPaused {
		out.PausedReason = v.Conversation.PausedReason
	}
	for _, p := range v.Listed() {
		out.Participants = append(out.Participants, participantView{Handle: p.Handle, Kind: p.Kind, Role: p.Role})
	}
	return out
}

type agentView struct {
	Handle      string `json:"handle"`
	Description string `json:"description"`
	Goal        string `json:"goal,omitempty"`
	Mode        string `json:"mode,omitempty"`
}

func viewAgents(as []*hub.Agent) []agentView {
	out := []agentView{}
	for _, a := range as {
		out = append(out, agentView{Handle: a.Handle(), Description: a.Description, Goal: a.Goal})
	}
	return out
}

type userView struct {
	Handle string `json:"handle"`
	Name   string `json:"name,omitempty"`
}

type readView struct {
	Handle      string `json:"handle"`
	Instance    string `json:"instance,omitempty"`
	LastReadSeq int64  `json:"last_read_seq"`
	At          string `json:"at"`
}

func viewReads(rs []hub.Read) []readView {
	out := []readView{}
	for _, r := range rs {
		out = append(out, readView{Handle: r.Handle, Instance: r.Instance, LastReadSeq: r.LastReadSeq, At: timeText(r.UpdatedAt)})
	}
	return out
}
