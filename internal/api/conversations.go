package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// Conversations as a person (§11.3): list, read a page at a time, write,
// resume, close, and search them.

func messageView(m *hub.Message) map[string]any {
	v := map[string]any{"message_id": m.ID, "seq": m.Seq, "sender": map[string]any{"handle": m.SenderHandle, "kind": m.SenderKind, "instance": m.SenderInstance},
		"body": m.Body, "summary": m.Summary, "format": m.Format, "kind": m.Kind, "created_at": timeText(m.CreatedAt),
		"provenance": m.Provenance(),
		"untrusted":  true}
	if m.OriginalBody != "" {
		v["original_body"] = m.OriginalBody // the agent's words before its owner's edit (§7)
	}
	return v
}

func conversationView(v *hub.ConversationView) map[string]any {
	c := v.Conversation
	out := map[string]any{"conversation_id": c.ID, "kind": c.Kind, "title": c.Title, "goal": c.Goal, "status": c.State(),
		"last_seq": c.LastSeq, "created_at": timeText(c.CreatedAt), "updated_at": timeText(c.UpdatedAt), "untrusted": true}
	if c.State() == hub.StatusPaused {
		out["paused_reason"] = c.PausedReason
	}
	ps := []map[string]any{}
	for _, p := range v.Listed() {
		ps = append(ps, map[string]any{"handle": p.Handle, "kind": p.Kind, "role": p.Role})
	}
	out["participants"] = ps
	if c.ProjectID != "" {
		out["project_id"] = c.ProjectID
	}
	return out
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
	out := []map[string]any{}
	for _, l := range p.Conversations {
		v := conversationView(&l.ConversationView)
		v["unread"] = l.Unread
		if l.Last != nil {
			v["last"] = map[string]any{"seq": l.Last.Seq, "sender": l.Last.SenderHandle, "summary": l.Last.SummaryLine(), "at": timeText(l.Last.CreatedAt)}
		}
		out = append(out, v)
	}
	return map[string]any{"conversations": out, "next": p.Next}, nil
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
	out := conversationView(v)
	msgs, reads := []map[string]any{}, []map[string]any{}
	for _, m := range res.Messages {
		msgs = append(msgs, messageView(m))
	}
	for _, rd := range res.Reads {
		reads = append(reads, map[string]any{"handle": rd.Handle, "instance": rd.Instance, "last_read_seq": rd.LastReadSeq, "at": timeText(rd.UpdatedAt)})
	}
	out["messages"], out["has_older"], out["prev_before_seq"], out["reads"] = msgs, res.HasOlder, res.BeforeSeq, reads
	return out, nil
}

func (a *API) closeConversation(ctx context.Context, r *request) (any, error) {
	c, err := a.hub.ConfirmClose(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return map[string]any{"conversation_id": c.ID, "status": c.Status}, nil
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
	msgs := []map[string]any{}
	for _, m := range res.Messages {
		msgs = append(msgs, messageView(m))
	}
	return map[string]any{"conversation_id": v.Conversation.ID, "messages": msgs, "next_after_seq": res.NextAfterSeq, "has_more": res.HasMore,
		"prev_before_seq": res.BeforeSeq, "has_older": res.HasOlder}, nil
}

// search finds messages in the conversations of the person and their
// agents (§18): q, with conversation_id, project_id, from, since and limit
// to narrow it; one line per hit, best match first, with a marked snippet
// and no body.
func (a *API) search(ctx context.Context, r *request) (any, error) {
	limit, err := intQuery(r, "limit", hub.SearchPage.Range(), 0)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	res, err := a.hub.PersonSearch(ctx, r.user, hub.SearchInput{Query: q.Get("q"), ConversationID: q.Get("conversation_id"),
		ProjectID: q.Get("project_id"), From: q.Get("from"), Since: q.Get("since"), Limit: int(limit)})
	if err != nil {
		return nil, err
	}
	hits := []map[string]any{}
	for _, h := range res.Hits {
		m := h.Message
		hits = append(hits, map[string]any{"message_id": m.ID, "conversation_id": m.ConversationID, "seq": m.Seq,
			"sender":  map[string]any{"handle": m.SenderHandle, "kind": m.SenderKind, "instance": m.SenderInstance},
			"summary": m.SummaryLine(), "snippet": h.Snippet.Marked(), "created_at": timeText(m.CreatedAt)})
	}
	return map[string]any{"messages": hits, "has_more": res.More, "untrusted": true}, nil
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
	v := messageView(res.Message)
	v["recipients"], v["listening"] = res.Recipients, res.Listening
	return v, nil
}

func (a *API) resume(ctx context.Context, r *request) (any, error) {
	c, err := a.hub.Resume(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return map[string]any{"conversation_id": c.ID, "status": c.Status}, nil
}
