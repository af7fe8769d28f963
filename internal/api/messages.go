package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// Messages as a person (§4, §11.3): read a page at a time, and written.

// senderView is who sent a message, and from which of its sessions.
type senderView struct {
	Handle   string `json:"handle"`
	Kind     string `json:"kind"`
	Instance string `json:"instance"`
}

func senderOf(m *hub.Message) senderView {
	return senderView{Handle: m.SenderHandle, Kind: m.SenderKind, Instance: m.SenderInstance}
}

// messageView is a message with its provenance (§4).
type messageView struct {
	MessageID  string         `json:"message_id"`
	Seq        int64          `json:"seq"`
	Sender     senderView     `json:"sender"`
	Body       string         `json:"body"`
	Summary    string         `json:"summary"`
	Format     string         `json:"format"`
	Kind       string         `json:"kind"`
	CreatedAt  string         `json:"created_at"`
	Provenance hub.Provenance `json:"provenance"`
	Untrusted  bool           `json:"untrusted"`
	// OriginalBody is the agent's words before its owner's edit (§7),
	// which only that owner is given.
	OriginalBody string `json:"original_body,omitempty"`
}

func newMessageView(m *hub.Message) messageView {
	return messageView{MessageID: m.ID, Seq: m.Seq, Sender: senderOf(m), Body: m.Body, Summary: m.Summary, Format: m.Format, Kind: m.Kind,
		CreatedAt: timeText(m.CreatedAt), Provenance: m.Provenance(), Untrusted: true, OriginalBody: m.OriginalBody}
}

// messagesView is a page of a conversation, and where the pages beside it
// start.
type messagesView struct {
	ConversationID string        `json:"conversation_id"`
	Messages       []messageView `json:"messages"`
	NextAfterSeq   int64         `json:"next_after_seq"`
	HasMore        bool          `json:"has_more"`
	PrevBeforeSeq  int64         `json:"prev_before_seq"`
	HasOlder       bool          `json:"has_older"`
}

// postedView is the person's message as sent, and how many it reached.
type postedView struct {
	messageView
	Recipients int `json:"recipients"`
	Listening  int `json:"listening"` // recipients listening now (§19)
}

// messages is a page of a conversation: the one after after_seq, or the
// one before before_seq, each saying where the pages beside it start.
func (a *API) messages(ctx context.Context, r *request) (any, error) {
	q := r.URL.Query()
	if q.Has("after_seq") && q.Has("before_seq") {
		return nil, hub.Errorf(hub.KindInvalid, "give after_seq (a page of newer messages) or before_seq (a page of older ones), not both")
	}
	limit, err := intQuery(r, "limit", hub.MessagesPage.Range(), 0)
	if err != nil {
		return nil, err
	}
	var v *hub.ConversationView
	var res *hub.ReadResult
	if q.Has("before_seq") {
		before, err := intQuery(r, "before_seq", hub.SeqRange, 0)
		if err != nil {
			return nil, err
		}
		v, res, err = a.hub.PersonMessagesBefore(ctx, r.user, r.PathValue("id"), before, int(limit))
		if err != nil {
			return nil, err
		}
	} else {
		after, err := intQuery(r, "after_seq", hub.AfterSeqRange, 0)
		if err != nil {
			return nil, err
		}
		v, res, err = a.hub.PersonMessages(ctx, r.user, r.PathValue("id"), after, int(limit))
		if err != nil {
			return nil, err
		}
	}
	return messagesView{ConversationID: v.Conversation.ID, Messages: viewsOf(res.Messages, newMessageView), NextAfterSeq: res.NextAfterSeq, HasMore: res.HasMore,
		PrevBeforeSeq: res.BeforeSeq, HasOlder: res.HasOlder}, nil
}

func (a *API) post(ctx context.Context, r *request) (any, error) {
	var in struct {
		Body   string `json:"body"`
		Format string `json:"format"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	res, err := a.hub.PostAsPerson(ctx, r.user, r.PathValue("id"), in.Body, in.Format)
	if err != nil {
		return nil, err
	}
	return postedView{messageView: newMessageView(res.Message), Recipients: res.Recipients, Listening: res.Listening}, nil
}
