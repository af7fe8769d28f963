package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/search"
)

// hitView is one message found: a line, its marked snippet, no body.
type hitView struct {
	MessageID      string     `json:"message_id"`
	ConversationID string     `json:"conversation_id"`
	Seq            int64      `json:"seq"`
	Sender         senderView `json:"sender"`
	Summary        string     `json:"summary"`
	Snippet        string     `json:"snippet"`
	CreatedAt      string     `json:"created_at"`
}

type searchView struct {
	Messages  []hitView `json:"messages"`
	HasMore   bool      `json:"has_more"`
	Untrusted bool      `json:"untrusted"`
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
	res, err := a.finder.PersonSearch(ctx, r.user, search.Input{Query: q.Get("q"), ConversationID: q.Get("conversation_id"),
		ProjectID: q.Get("project_id"), From: q.Get("from"), Since: q.Get("since"), Limit: int(limit)})
	if err != nil {
		return nil, err
	}
	hits := viewsOf(res.Hits, func(h search.Hit) hitView {
		m := h.Message
		return hitView{MessageID: m.ID, ConversationID: m.ConversationID, Seq: m.Seq, Sender: senderOf(m),
			Summary: m.SummaryLine(), Snippet: h.Snippet.Marked(), CreatedAt: timeText(m.CreatedAt)}
	})
	return searchView{Messages: hits, HasMore: res.More, Untrusted: true}, nil
}
