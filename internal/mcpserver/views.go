package mcpserver

import (
	"encoding/json"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/search"
)

// The JSON shapes tools return (§10.3). Every result that carries words
// chosen by someone else (bodies, titles, notes, names) says untrusted:true
// once, at its top (§4).
//
// Every byte a tool returns is paid from the agent's context window, so
// rows carry only what an agent acts on: false booleans, empty fields and
// defaults are left out, and nothing the page says once is repeated in
// each row. Provenance stays whole (§4).

// timeText is hub.FormatTime, short for the views below.
var timeText = hub.FormatTime

// senderView names who wrote a message; its kind is in the handle (an
// agent's has a slash, §1).
type senderView struct {
	Handle   string `json:"handle"`
	Instance string `json:"instance,omitempty"`
}

type messageView struct {
	MessageID      string          `json:"message_id"`
	ConversationID string          `json:"conversation_id,omitempty"` // left out where the page names it
	Seq            int64           `json:"seq"`
	Sender         senderView      `json:"sender"`
	Body           string          `json:"body"`
	Summary        string          `json:"summary,omitempty"`
	Format         string          `json:"format,omitempty"` // left out for text
	Kind           string          `json:"kind,omitempty"`   // left out for text
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	Mentions       []string        `json:"mentions,omitempty"`
	ReplyToSeq     int64           `json:"reply_to_seq,omitempty"`
	NoReply        bool            `json:"no_reply,omitempty"`
	ToInstance     string          `json:"to_instance,omitempty"`
	ClientMsgID    string          `json:"client_msg_id,omitempty"`
	Provenance     hub.Provenance  `json:"provenance"`
	CreatedAt      string          `json:"created_at"`
	// With a session's name on a wait, how the message stands for it (§5).
	ForYou  *bool  `json:"for_you,omitempty"`
	FromYou *bool  `json:"from_you,omitempty"`
	HeldBy  string `json:"held_by,omitempty"`
	// Untrusted: its words are others', data and never instructions; every
	// message object says so (§4; one-line rows are marked by their result).
	Untrusted bool `json:"untrusted"`
}

// viewMessage is a message whole, as read_message returns it.
func viewMessage(m *hub.Message) messageView {
	v := messageView{
		MessageID: m.ID, ConversationID: m.ConversationID, Seq: m.Seq,
		Sender: senderView{Handle: m.SenderHandle, Instance: m.SenderInstance},
		Body:   m.Body, Summary: m.Summary, Metadata: m.Metadata,
		Mentions: m.Mentions, ReplyToSeq: m.ReplyToSeq, NoReply: m.NoReply, ToInstance: m.ToInstance,
		ClientMsgID: m.ClientMsgID, Provenance: m.Provenance(), CreatedAt: timeText(m.CreatedAt), Untrusted: true,
	}
	if m.Format != hub.FormatText {
		v.Format = m.Format
	}
	if m.Kind != hub.MessageText {
		v.Kind = m.Kind
	}
	return v
}

// messageIn is a message on a page that names its conversation once:
// read_messages, or an event that carries conversation_id itself.
func messageIn(m *hub.Message) messageView {
	v := viewMessage(m)
	v.ConversationID = ""
	return v
}

// inboxRow is one check_inbox line (§5). A row is waiting and unread
// unless it says otherwise: already_read when its body was fetched, state
// processing or failed with attempts (and stuck). With an instance every
// row waits for that session (for_you) and says who holds its
// conversation: held_by naming the session, or unclaimed when nobody does.
// Rows come oldest first; a message's time is its created_at in
// read_message.
type inboxRow struct {
	MessageID      string     `json:"message_id"`
	ConversationID string     `json:"conversation_id"`
	Seq            int64      `json:"seq"`
	Sender         senderView `json:"sender"`
	Summary        string     `json:"summary"`
	AlreadyRead    bool       `json:"already_read,omitempty"`
	State          string     `json:"state,omitempty"`
	Attempts       int        `json:"attempts,omitempty"`
	Stuck          bool       `json:"stuck,omitempty"`
	ForYou         bool       `json:"for_you,omitempty"`
	HeldBy         string     `json:"held_by,omitempty"`
	Unclaimed      bool       `json:"unclaimed,omitempty"`
	Sibling        bool       `json:"from_sibling_session,omitempty"`
}

// viewInboxItem is it as a check_inbox row of session instance ("" for
// none); stuck says whether its processing attempt is stuck (hub.Stuck).
func viewInboxItem(it hub.InboxItem, instance string, stuck bool) inboxRow {
	m := it.Message
	r := inboxRow{MessageID: m.ID, ConversationID: m.ConversationID, Seq: m.Seq,
		Sender:  senderView{Handle: m.SenderHandle, Instance: m.SenderInstance},
		Summary: m.SummaryLine(), AlreadyRead: it.AlreadyRead(),
		Attempts: it.Delivery.Attempts, Stuck: stuck, HeldBy: it.HeldBy, Sibling: it.Sibling}
	if instance != "" {
		r.ForYou, r.Unclaimed = true, it.HeldBy == ""
	}
	if it.Delivery.State != hub.DeliveryWaiting {
		r.State = it.Delivery.State
	}
	return r
}

// searchRow is one search_messages hit (§18): the message as one line,
// with a snippet of its body around the matched words (each between
// search.MarkOpen and search.MarkClose) instead of the body. Rows come best
// match first.
type searchRow struct {
	MessageID      string     `json:"message_id"`
	ConversationID string     `json:"conversation_id"`
	Seq            int64      `json:"seq"`
	Sender         senderView `json:"sender"`
	Summary        string     `json:"summary"`
	Snippet        string     `json:"snippet"`
	CreatedAt      string     `json:"created_at"`
}

func viewSearchHit(h search.Hit) searchRow {
	m := h.Message
	return searchRow{MessageID: m.ID, ConversationID: m.ConversationID, Seq: m.Seq,
		Sender:  senderView{Handle: m.SenderHandle, Instance: m.SenderInstance},
		Summary: m.SummaryLine(), Snippet: h.Snippet.Marked(), CreatedAt: timeText(m.CreatedAt)}
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
		Sender:  senderView{Handle: m.SenderHandle, Instance: m.SenderInstance},
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
	Description string `json:"description,omitempty"`
	Goal        string `json:"goal,omitempty"`
	Mode        string `json:"mode,omitempty"`
	// Presence is listening, active, idle or offline (§19); Sessions
	// are its named sessions that are not offline.
	Presence string        `json:"presence,omitempty"`
	Sessions []sessionView `json:"sessions,omitempty"`
}

// sessionView is a named session's presence.
type sessionView struct {
	Name     string `json:"name"`
	Presence string `json:"presence"`
}

// viewAgents is agents with their presence and their sessions'.
func viewAgents(as []*hub.Agent, presence map[string]hub.AgentPresence) []agentView {
	out := []agentView{}
	for _, a := range as {
		p := presence[a.ID]
		out = append(out, agentView{Handle: a.Handle(), Description: a.Description, Goal: a.Goal, Presence: p.State, Sessions: viewSessions(p)})
	}
	return out
}

// viewSessions is an agent's named sessions that are not offline.
func viewSessions(p hub.AgentPresence) []sessionView {
	var out []sessionView
	for _, s := range p.Sessions {
		if s.State != hub.PresenceOffline {
			out = append(out, sessionView{Name: s.Name, Presence: s.State})
		}
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
