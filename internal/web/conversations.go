package web

import (
	"context"
	"net/url"
	"strconv"

	"github.com/palaverhq/palaver/internal/hub"
)

// Conversations (§4, §7, §11): every conversation of the person and their
// agents, and one conversation read as a person, with Resume, confirm
// close and a box to write in.

func (w *Web) conversations(ctx context.Context, r *request) (*reply, error) {
	p, err := w.hub.PersonConversations(ctx, r.user, r.URL.Query().Get("after"), 0)
	if err != nil {
		return nil, err
	}
	return &reply{page: "conversations", data: p}, nil
}

// conversationPage is one conversation as the page shows it.
type conversationPage struct {
	*hub.ConversationView
	*hub.ReadResult
	Me    *hub.User
	Older string // the link to the page before this one ("" at the start)
	Newer string // the link to the page after this one ("" at the end)
	// Latest: the page ends with the newest message, just above the box
	// to write in, which the page opens at (#write).
	Latest bool
}

// conversation shows the latest messages, or with ?before=SEQ the page
// that ends before that seq (Older), or with ?after=SEQ the page after it
// (Newer). Each page's links start where the page stops, so walking either
// way shows every message once.
func (w *Web) conversation(ctx context.Context, r *request) (*reply, error) {
	id := r.PathValue("id")
	q := r.URL.Query()
	var v *hub.ConversationView
	var res *hub.ReadResult
	var err error
	switch {
	case q.Has("after"):
		var seq int64
		if seq, err = hub.AfterSeqRange.Parse("after", q.Get("after")); err == nil {
			v, res, err = w.hub.PersonMessages(ctx, r.user, id, seq, hub.MessagesPage.Default)
		}
	case q.Has("before"):
		var seq int64
		if seq, err = hub.SeqRange.Parse("before", q.Get("before")); err == nil {
			v, res, err = w.hub.PersonMessagesBefore(ctx, r.user, id, seq, hub.MessagesPage.Default)
		}
	default:
		v, res, err = w.hub.PersonRecent(ctx, r.user, id, hub.MessagesPage.Default)
	}
	if err != nil {
		return nil, err
	}
	p := &conversationPage{ConversationView: v, ReadResult: res, Me: r.user, Latest: !res.HasMore}
	self := "/conversations/" + url.PathEscape(id)
	if res.HasOlder {
		p.Older = self + "?before=" + strconv.FormatInt(res.BeforeSeq, 10)
	}
	if res.HasMore {
		p.Newer = self + "?after=" + strconv.FormatInt(res.NextAfterSeq, 10)
	}
	return &reply{page: "conversation", data: p}, nil
}

// post writes as a person: human, or human_interject where they do not
// take part (the hub decides which).
func (w *Web) post(ctx context.Context, r *request) (*reply, error) {
	id := r.PathValue("id")
	res, err := w.hub.PostAsPerson(ctx, r.user, id, form(r, "body"), form(r, "format"))
	if err != nil {
		return nil, err
	}
	notice := "Sent."
	if res.Message.Authority == hub.AuthorityInterject {
		notice = "Sent, marked human_interject: you wrote into your agent's conversation without joining it."
	}
	return &reply{redirect: "/conversations/" + url.PathEscape(id) + "#write", notice: notice}, nil
}

func (w *Web) resume(ctx context.Context, r *request) (*reply, error) {
	id := r.PathValue("id")
	if _, err := w.hub.Resume(ctx, r.user, id); err != nil {
		return nil, err
	}
	return &reply{redirect: "/conversations/" + url.PathEscape(id) + "#write", notice: "Resumed: the agents may send again."}, nil
}

func (w *Web) closeConversation(ctx context.Context, r *request) (*reply, error) {
	if _, err := w.hub.ConfirmClose(ctx, r.user, r.PathValue("id")); err != nil {
		return nil, err
	}
	return &reply{redirect: "/conversations", notice: "Closed: it has left every inbox."}, nil
}
