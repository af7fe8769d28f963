package web

import (
	"context"
	"net/url"
	"strconv"

	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/search"
)

// Search (§18): the person's search of the conversations they and their
// agents take part in, each hit linking to its message on its
// conversation's page. A GET form, so a search is a link to keep.

// searchPage is what the search page shows: the search as asked, and what
// it found (nil before anything was asked).
type searchPage struct {
	Query, From, Since, ConversationID, ProjectID string
	MaxQuery                                      int
	Result                                        *search.Result
}

func (w *Web) search(ctx context.Context, r *request) (*reply, error) {
	q := r.URL.Query()
	p := &searchPage{Query: q.Get("q"), From: q.Get("from"), Since: q.Get("since"),
		ConversationID: q.Get("conversation_id"), ProjectID: q.Get("project_id"), MaxQuery: fulltext.MaxQuery}
	if !q.Has("q") {
		return &reply{page: "search", data: p}, nil
	}
	res, err := w.finder.PersonSearch(ctx, r.user, search.Input{Query: p.Query, ConversationID: p.ConversationID,
		ProjectID: p.ProjectID, From: p.From, Since: p.Since})
	if err != nil {
		// The page again, with what was typed and what is wrong with it.
		return nil, &again{page: "search", data: p, err: err}
	}
	p.Result = res
	return &reply{page: "search", data: p}, nil
}

// hitLink is where a search hit's message is on its conversation's page:
// the latest page when it is the last message, else the page that starts
// with it (how many messages the latest page holds depends on their size).
func hitLink(h search.Hit) string {
	c, seq := h.Conversation.Conversation, h.Message.Seq
	link := "/conversations/" + url.PathEscape(c.ID)
	if seq < c.LastSeq {
		link += "?after=" + strconv.FormatInt(seq-1, 10)
	}
	return link + "#seq-" + strconv.FormatInt(seq, 10)
}
