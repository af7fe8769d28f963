package hub

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Search (§18): a small query language, parsed here and only here, so that
// neither store ever sees what a user typed as syntax; ranked full-text
// matches from the store, each re-checked against the caller's access to
// its conversation as it stands; and a snippet of each body with the
// matched words marked, cut on grapheme cluster boundaries
// (search_snippets.go). A search is a listing: it marks nothing read and
// hands over no body.
//
// The language: words, all of which must match; "a phrase", its words in
// a row; a OR b, either of two terms; -word or -"a phrase", none of it.
// A word is a run of letters, digits and combining marks, normalised as
// the index's are (search_text.go: NFKC, case-folded, a CJK run as its
// pairs of characters), so store.go is the phrase "store go", case and
// width do not matter, and 東京 is found inside 我明天去東京开会.

// The search's limits, declared once.
const (
	MaxQuery      = 500 // characters of a query (code points)
	MaxQueryTerms = 16  // words and phrases of one query, excluded ones included
	SnippetLength = 160 // characters a snippet shows of a body, besides its "…"
	// SearchWindow is how many matches a search ranks: the newest ones
	// the caller can read. A query matching more (a word in nearly every
	// message) ranks the most recent of them, so its cost stays that of
	// the window however long the history.
	SearchWindow = 1000
)

// SearchSyntax is the query language in one line; every refusal of a query
// ends with it.
const SearchSyntax = `search syntax: every word must match; "a phrase" matches its words in a row; a OR b matches either; -word leaves out messages with it`

// Phrase is words that must appear one after the other; a single word is a
// phrase of one. Words are lower-cased (searchWords).
type Phrase []string

// Query is a parsed search query. A message matches when, for every group
// of All, at least one of the group's phrases is in it (the terms joined by
// OR), and no phrase of Not is. All is never empty.
type Query struct {
	All [][]Phrase
	Not []Phrase
}

// qterm is one term of a query as written: a word, a quoted phrase, or OR.
type qterm struct {
	words []string
	not   bool // written with a leading -
	or    bool // the word OR, between two terms
}

// badQuery is the refusal of a query that cannot be read: what is wrong,
// what to write instead, and the syntax.
func badQuery(format string, args ...any) *Error {
	e := invalid("invalid_query", format, args...)
	e.Msg += "; " + SearchSyntax
	return e
}

// ParseQuery reads a query (§18). Refusals (invalid_query, too_long) say
// what is wrong and how to write it: an empty query, an unclosed quote, OR
// that does not stand between two terms, an excluded term inside OR, a
// query of exclusions only, one with nothing to look for, or one over
// MaxQuery characters or MaxQueryTerms terms.
func ParseQuery(s string) (*Query, error) {
	s = cleanText(s)
	if blank(s) {
		return nil, badQuery(`query is required: give the words to look for, like retry logic or "retry logic"`)
	}
	if n := utf8.RuneCountInString(s); n > MaxQuery {
		return nil, invalid("too_long", "query is %d characters; the limit is %d characters (Unicode code points): look for fewer words", n, MaxQuery)
	}
	terms, err := lexQuery(s)
	if err != nil {
		return nil, err
	}
	q := &Query{}
	var group []Phrase
	or, afterNot := false, false
	for _, t := range terms {
		switch {
		case t.or && afterNot:
			return nil, badQuery("an excluded term cannot be part of OR: write the excluded term on its own, like deploy OR release -staging")
		case t.or && (group == nil || or):
			return nil, badQuery("OR goes between two terms, like deploy OR release")
		case t.or:
			or = true
		case t.not && or:
			return nil, badQuery("an excluded term cannot be part of OR: write the excluded term on its own, like deploy OR release -staging")
		case t.not:
			q.Not = append(q.Not, t.words)
			afterNot = true
		case or:
			group = append(group, t.words)
			or = false
		default:
			if group != nil {
				q.All = append(q.All, group)
			}
			group = []Phrase{t.words}
			afterNot = false
		}
	}
	if or {
		return nil, badQuery("OR goes between two terms, like deploy OR release; this query ends with it")
	}
	if group != nil {
		q.All = append(q.All, group)
	}
	n := len(q.Not)
	for _, g := range q.All {
		n += len(g)
	}
	switch {
	case n > MaxQueryTerms:
		return nil, badQuery("query has %d terms; the limit is %d: look for fewer words", n, MaxQueryTerms)
	case len(q.All) == 0 && len(q.Not) > 0:
		return nil, badQuery("query only leaves out (-word); add what to look for, like deploy -staging")
	case len(q.All) == 0:
		return nil, badQuery("query has no word to look for: search matches letters and digits, not punctuation or symbols alone")
	}
	return q, nil
}

// lexQuery splits a query into its terms, leaving out those with no word
// in them (a lone "-", punctuation, an emoji). It refuses an unclosed
// quote.
func lexQuery(s string) ([]qterm, error) {
	var terms []qterm
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += w
			continue
		}
		var t qterm
		if r == '-' && i+1 < len(s) {
			if next, _ := utf8.DecodeRuneInString(s[i+1:]); !unicode.IsSpace(next) {
				t.not = true
				i++
			}
		}
		var text string
		if s[i] == '"' {
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return nil, badQuery(`query has a quote (") that is not closed: close the phrase, like "retry logic", or leave the quote out`)
			}
			text, i = s[i+1:i+1+end], i+2+end
		} else {
			start := i
			for i < len(s) {
				r, w := utf8.DecodeRuneInString(s[i:])
				if unicode.IsSpace(r) || r == '"' {
					break
				}
				i += w
			}
			text = s[start:i]
			if text == "OR" && !t.not {
				terms = append(terms, qterm{or: true})
				continue
			}
		}
		if t.words = searchWords(text); len(t.words) > 0 {
			terms = append(terms, t)
		}
	}
	return terms, nil
}

// marks is what a snippet marks of the query (not what it leaves out):
// its words, and the single CJK characters it looks for as the start of
// a word (Phrase.Prefix).
func (q *Query) marks() snippetMarks {
	m := snippetMarks{words: map[string]bool{}, prefixes: map[string]bool{}}
	for _, g := range q.All {
		for _, p := range g {
			for i, w := range p {
				if i == len(p)-1 && p.Prefix() {
					m.prefixes[w] = true
				} else {
					m.words[w] = true
				}
			}
		}
	}
	return m
}

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
	Query          *Query
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
	Snippet      Snippet
}

// SearchResult is a search's hits, best match first (ties newest first);
// More says more matched than the limit.
type SearchResult struct {
	Hits []SearchHit
	More bool
}

// checkSearch reads a search's arguments into a filter and a limit.
func checkSearch(in SearchInput) (SearchFilter, int, error) {
	q, err := ParseQuery(in.Query)
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
			return SearchFilter{}, 0, invalid("", "from must be a sender's handle, like alice or alice/planner (got %q)", echo(in.From))
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
// closed), best match first among the newest SearchWindow matches, at
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
	marks := f.Query.marks()
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
		res.Hits = append(res.Hits, SearchHit{Message: m, Conversation: v, Snippet: cutSnippet(m.Body, marks)})
	}
	return res, nil
}
