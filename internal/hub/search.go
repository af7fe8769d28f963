package hub

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/search"
)

// Search (§18): the query, parsed by internal/search (the language, the
// words of a text, the snippets); ranked full-text matches from the store,
// each re-checked here against the caller's access to its conversation as
// it stands, with a snippet of its body. A search is a listing: it marks
// nothing read and hands over no body.

// SearchInput is a search_messages call (§18), as every face hands it over.
type SearchInput struct {
	Query          string
	ConversationID string // only this conversation ("": every one the caller reads)
	ProjectID      string // only this project's conversations ("": any)
	From           string // only this sender's messages: a handle ("": anyone's)
	Since          string // only messages sent at or after this ISO 8601 time ("": any)
	Limit          int    // 0: SearchPage.Default
}

// SearchFilter is a search as the store carries it out: the parsed query,
// whose conversations it reads — those ParticipantID takes part in (an
// agent), or those OwnerID or one of their agents takes part in (a
// person); never closed ones — and what narrows it.
type SearchFilter struct {
	Query          *search.Query
	ParticipantID  string
	OwnerID        string
	ConversationID string
	ProjectID      string
	SenderHandle   string
	Since          time.Time
}

// SearchHit is one message a search found: the message (whose body the
// faces do not hand over), its conversation, and the snippet to show.
type SearchHit struct {
	Message      *Message
	Conversation *ConversationView
	Snippet      search.Snippet
}

// SearchResult is a search's hits, best match first (ties newest first);
// More says more matched than the limit.
type SearchResult struct {
	Hits []SearchHit
	More bool
}

// parseQuery reads a query (search.Parse) as every text the hub is given
// is read (cleanText: invalid bytes become U+FFFD; invisible characters
// alone are no words), its refusals hub Errors.
func parseQuery(s string) (*search.Query, error) {
	if s = cleanText(s); blank(s) {
		s = ""
	}
	q, err := search.Parse(s)
	var se *search.Error
	if errors.As(err, &se) {
		return nil, invalid(se.Code, "%s", escapeBraces(se.Msg))
	}
	return q, err
}

// checkSearch reads a search's arguments into a filter and a limit.
func checkSearch(in SearchInput) (SearchFilter, int, error) {
	q, err := parseQuery(in.Query)
	if err != nil {
		return SearchFilter{}, 0, err
	}
	limit, err := SearchPage.check(in.Limit)
	if err != nil {
		return SearchFilter{}, 0, err
	}
	since, err := ParseTime("since", in.Since)
	if err != nil {
		return SearchFilter{}, 0, err
	}
	f := SearchFilter{Query: q, ConversationID: in.ConversationID, ProjectID: in.ProjectID, Since: since}
	if from := strings.TrimPrefix(strings.TrimSpace(in.From), "@"); from != "" {
		owner, slug, err := ParseHandle(from)
		if err != nil {
			return SearchFilter{}, 0, invalid("", "from must be a sender's {handle}, like alice or alice/planner (got %q)", echo(in.From))
		}
		f.SenderHandle = owner
		if slug != "" {
			f.SenderHandle += "/" + slug
		}
	}
	return f, limit, nil
}

// SearchMessages is search_messages (§18): the sent messages matching the
// query in the conversations the agent takes part in now (not left, not
// closed), best match first among the newest search.Window matches, at
// most limit (SearchPage). conversation_id
// and project_id narrow it to one the agent may read (not_found otherwise,
// as everywhere); from to a sender's handle; since to messages sent at or
// after a time. Nothing is marked read. Errors: invalid_query and too_long
// (the query), invalid arguments, not_found.
func (h *Hub) SearchMessages(ctx context.Context, c *Caller, in SearchInput) (*SearchResult, error) {
	f, limit, err := checkSearch(in)
	if err != nil {
		return nil, err
	}
	f.ParticipantID = c.Agent.ID
	sees := func(conversationID string) (*ConversationView, error) {
		return access(ctx, h.store, c.Agent.ID, conversationID)
	}
	if f.ConversationID != "" {
		if _, err := sees(f.ConversationID); err != nil {
			return nil, err
		}
	}
	if f.ProjectID != "" {
		if _, _, _, err := agentProject(ctx, h.store, c.Agent, f.ProjectID); err != nil {
			return nil, err
		}
	}
	return h.search(ctx, f, limit, sees)
}

// PersonSearch is SearchMessages for a person (the REST API and the
// dashboard): the conversations they take part in or one of their agents
// does, with the same query, narrowing and limit.
func (h *Hub) PersonSearch(ctx context.Context, u *User, in SearchInput) (*SearchResult, error) {
	f, limit, err := checkSearch(in)
	if err != nil {
		return nil, err
	}
	f.OwnerID = u.ID
	sees := func(conversationID string) (*ConversationView, error) {
		v, _, err := personAccess(ctx, h.store, u, conversationID)
		return v, err
	}
	if f.ConversationID != "" {
		if _, err := sees(f.ConversationID); err != nil {
			return nil, AsError(err)
		}
	}
	if f.ProjectID != "" {
		if _, err := memberProject(ctx, h.store, u, f.ProjectID); err != nil {
			return nil, AsError(err)
		}
	}
	return h.search(ctx, f, limit, sees)
}

// search runs f in the store and keeps each hit whose conversation sees
// still opens to the caller — the hub's own access rule, asked once per
// conversation — and that was sent, with its snippet.
func (h *Hub) search(ctx context.Context, f SearchFilter, limit int, sees func(conversationID string) (*ConversationView, error)) (*SearchResult, error) {
	start := time.Now() // how long it takes, not the hub's clock
	defer func() { h.observer.Searched(time.Since(start)) }()
	msgs, err := h.store.SearchMessages(ctx, f, limit+1)
	if err != nil {
		return nil, AsError(err)
	}
	res := &SearchResult{Hits: []SearchHit{}}
	if len(msgs) > limit {
		msgs, res.More = msgs[:limit], true
	}
	views := map[string]*ConversationView{}
	for _, m := range msgs {
		v, asked := views[m.ConversationID]
		if !asked {
			if v, err = sees(m.ConversationID); err != nil && AsError(err).Kind != KindNotFound {
				return nil, AsError(err)
			}
			views[m.ConversationID] = v // nil: not open to the caller
		}
		if v == nil || m.Status != MessageSent {
			continue
		}
		res.Hits = append(res.Hits, SearchHit{Message: m, Conversation: v, Snippet: search.Cut(m.Body, f.Query)})
	}
	return res, nil
}

// SearchReads are the queries of search (Reader embeds them).
type SearchReads interface {
	// SearchMessages ranks the newest search.Window sent messages
	// matching f.Query in the conversations f reads, narrowed as f says:
	// best match first, ties newest first, at most limit (§18). Every
	// message is indexed in the transaction that makes it sent, with its
	// final words.
	SearchMessages(ctx context.Context, f SearchFilter, limit int) ([]*Message, error)
}
