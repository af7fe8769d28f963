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
}

// conversation shows the latest messages, or with ?after=SEQ the page
// after that seq.
func (w *Web) conversation(ctx context.Context, r *request) (*reply, error) {
	id := r.PathValue("id")
	var v *hub.ConversationView
	var res *hub.ReadResult
	var err error
	after, paged := r.URL.Query()["after"]
	if paged {
		seq, perr := strconv.ParseInt(after[0], 10, 64)
		if perr != nil {
			return nil, hub.Errorf(hub.KindInvalid, "after is a message's seq, a whole number (got %q)", after[0])
		}
		v, res, err = w.hub.PersonMessages(ctx, r.user, id, seq, hub.MessagesPage.Default)
	} else {
		v, res, err = w.hub.PersonRecent(ctx, r.user, id, hub.MessagesPage.Default)
	}
	if err != nil {
		return nil, err
	}
	p := &conversationPage{ConversationView: v, ReadResult: res, Me: r.user}
	self := "/conversations/" + url.PathEscape(id)
	if len(res.Messages) > 0 && res.Messages[0].Seq > 1 {
		p.Older = self + "?after=" + strconv.FormatInt(max(res.Messages[0].Seq-1-int64(hub.MessagesPage.Default), 0), 10)
	}
	if paged && (res.HasMore || res.NextAfterSeq < v.Conversation.LastSeq) {
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
	return &reply{redirect: "/conversations/" + url.PathEscape(id), notice: notice}, nil
}

func (w *Web) resume(ctx context.Context, r *request) (*reply, error) {
	id := r.PathValue("id")
	if _, err := w.hub.Resume(ctx, r.user, id); err != nil {
		return nil, err
	}
	return &reply{redirect: "/conversations/" + url.PathEscape(id), notice: "Resumed: the agents may send again."}, nil
}

func (w *Web) closeConversation(ctx context.Context, r *request) (*reply, error) {
	if _, err := w.hub.ConfirmClose(ctx, r.user, r.PathValue("id")); err != nil {
		return nil, err
	}
	return &reply{redirect: "/conversations", notice: "Closed: it has left every inbox."}, nil
}
