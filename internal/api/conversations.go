package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// Conversations as a person (§11.3): listed, one with its latest messages
// and reads, resumed and closed.

// conversationView is a conversation and who takes part (archived agents
// left out, §1).
type conversationView struct {
	ConversationID string `json:"conversation_id"`
	Kind           string `json:"kind"`
	Title          string `json:"title"`
	Goal           string `json:"goal"`
	Status         string `json:"status"`
	// PausedReason is why it is paused, given only while it is.
	PausedReason *string           `json:"paused_reason,omitempty"`
	LastSeq      int64             `json:"last_seq"`
	CreatedAt    string            `json:"created_at"`
	UpdatedAt    string            `json:"updated_at"`
	Participants []participantView `json:"participants"`
	ProjectID    string            `json:"project_id,omitempty"`
	Untrusted    bool              `json:"untrusted"`
}

type participantView struct {
	Handle string `json:"handle"`
	Kind   string `json:"kind"`
	Role   string `json:"role"`
}

func newConversationView(v *hub.ConversationView) conversationView {
	c := v.Conversation
	out := conversationView{ConversationID: c.ID, Kind: c.Kind, Title: c.Title, Goal: c.Goal, Status: c.State(),
		LastSeq: c.LastSeq, CreatedAt: timeText(c.CreatedAt), UpdatedAt: timeText(c.UpdatedAt),
		Participants: viewsOf(v.Listed(), func(p hub.Participant) participantView {
			return participantView{Handle: p.Handle, Kind: p.Kind, Role: p.Role}
		}),
		ProjectID: c.ProjectID, Untrusted: true}
	if c.State() == hub.StatusPaused {
		out.PausedReason = &c.PausedReason
	}
	return out
}

// listedView is a conversation in the person's list: how many messages
// they have not read, and the last one.
type listedView struct {
	conversationView
	Unread int       `json:"unread"`
	Last   *lastView `json:"last,omitempty"`
}

type lastView struct {
	Seq     int64  `json:"seq"`
	Sender  string `json:"sender"`
	Summary string `json:"summary"`
	At      string `json:"at"`
}

type conversationsView struct {
	Conversations []listedView `json:"conversations"`
	Next          string       `json:"next"`
}

// conversationDetailView is a conversation with its latest messages and
// how far each participant and named session has read.
type conversationDetailView struct {
	conversationView
	Messages      []messageView `json:"messages"`
	HasOlder      bool          `json:"has_older"`
	PrevBeforeSeq int64         `json:"prev_before_seq"`
	Reads         []readView    `json:"reads"`
}

type readView struct {
	Handle      string `json:"handle"`
	Instance    string `json:"instance"`
	LastReadSeq int64  `json:"last_read_seq"`
	At          string `json:"at"`
}

// statusView is a conversation's status after the person changed it.
type statusView struct {
	ConversationID string `json:"conversation_id"`
	Status         string `json:"status"`
}

// conversations lists the conversations of the person and their agents,
// most recent activity first; after is the previous page's next.
func (a *API) conversations(ctx context.Context, r *request) (any, error) {
	limit, err := intQuery(r, "limit", hub.PersonPage.Range(), 0)
	if err != nil {
		return nil, err
	}
	p, err := a.hub.PersonConversations(ctx, r.user, r.URL.Query().Get("after"), int(limit))
	if err != nil {
		return nil, err
	}
	return conversationsView{Conversations: viewsOf(p.Conversations, func(l hub.ConversationListing) listedView {
		v := listedView{conversationView: newConversationView(&l.ConversationView), Unread: l.Unread}
		if l.Last != nil {
			v.Last = &lastView{Seq: l.Last.Seq, Sender: l.Last.SenderHandle, Summary: l.Last.SummaryLine(), At: timeText(l.Last.CreatedAt)}
		}
		return v
	}), Next: p.Next}, nil
}

// conversation is one conversation with its latest messages and how far
// each participant and named session has read.
func (a *API) conversation(ctx context.Context, r *request) (any, error) {
	limit, err := intQuery(r, "limit", hub.MessagesPage.Range(), 0)
	if err != nil {
		return nil, err
	}
	v, res, err := a.hub.PersonRecent(ctx, r.user, r.PathValue("id"), int(limit))
	if err != nil {
		return nil, err
	}
	reads := viewsOf(res.Reads, func(rd hub.Read) readView {
		return readView{Handle: rd.Handle, Instance: rd.Instance, LastReadSeq: rd.LastReadSeq, At: timeText(rd.UpdatedAt)}
	})
	return conversationDetailView{conversationView: newConversationView(v), Messages: viewsOf(res.Messages, newMessageView),
		HasOlder: res.HasOlder, PrevBeforeSeq: res.BeforeSeq, Reads: reads}, nil
}

func (a *API) closeConversation(ctx context.Context, r *request) (any, error) {
	c, err := a.hub.ConfirmClose(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return statusView{ConversationID: c.ID, Status: c.Status}, nil
}

func (a *API) resume(ctx context.Context, r *request) (any, error) {
	c, err := a.hub.Resume(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return statusView{ConversationID: c.ID, Status: c.Status}, nil
}
