// Package fulltext is Palaver's search language and what it makes of text
// (DESIGN.md §18): the query language, parsed here and only here, so that
// neither store ever sees what a user typed as syntax; the words a text is
// indexed and queried by (text.go); and the snippet of a hit (snippets.go).
// Who may see a hit is the hub's rule, asked by search_messages itself
// (internal/search); this package knows no message.
//
// The language: words, all of which must match; "a phrase", its words in
// a row; a OR b, either of two terms; -word or -"a phrase", none of it.
// A word is a run of letters, digits and combining marks, normalised as
// the index's are (text.go: NFKC, case-folded, a CJK run as its pairs of
// characters), so store.go is the phrase "store go", case and width do not
// matter, and 東京 is found inside 我明天去東京开会.
package fulltext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The search's limits, declared once.
const (
	MaxQuery      = 500 // characters of a query (code points)
	MaxQueryTerms = 16  // words and phrases of one query, excluded ones included
	SnippetLength = 160 // characters a snippet shows of a body, besides its "…"
	// Window is how many matches a search ranks: the newest ones
	// the caller can read. A query matching more (a word in nearly every
	// message) ranks the most recent of them, so its cost stays that of
	// the window however long the history.
	Window = 1000
)

// Syntax is the query language in one line; every refusal of a query ends
// with it.
const Syntax = `search syntax: every word must match; "a phrase" matches its words in a row; a OR b matches either; -word leaves out messages with it`

// Phrase is words that must appear one after the other; a single word is a
// phrase of one. Words are as Words makes them.
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

// An Error refuses a query: Code is invalid_query or too_long, Msg says
// what is wrong and what to write instead.
type Error struct {
	Code, Msg string
}

func (e *Error) Error() string { return e.Code + ": " + e.Msg }

// badQuery is the refusal of a query that cannot be read: what is wrong,
// what to write instead, and the syntax.
func badQuery(format string, args ...any) *Error {
	return &Error{Code: "invalid_query", Msg: fmt.Sprintf(format, args...) + "; " + Syntax}
}

// Parse reads a query (§18), given as valid UTF-8 (the hub cleans it
// first). Refusals (*Error: invalid_query, too_long) say what is wrong and
// how to write it: an empty query, an unclosed quote, OR that does not
// stand between two terms, an excluded term inside OR, a query of
// exclusions only, one with nothing to look for, or one over MaxQuery
// characters or MaxQueryTerms terms.
func Parse(s string) (*Query, error) {
	if strings.TrimSpace(s) == "" {
		return nil, badQuery(`query is required: give the words to look for, like retry logic or "retry logic"`)
	}
	if n := utf8.RuneCountInString(s); n > MaxQuery {
		return nil, &Error{Code: "too_long", Msg: fmt.Sprintf("query is %d characters; the limit is %d characters (Unicode code points): look for fewer words", n, MaxQuery)}
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
		if t.words = Words(text); len(t.words) > 0 {
			terms = append(terms, t)
		}
	}
	return terms, nil
}

// marks is what a snippet marks of the query (not what it leaves out):
// its words, and the single CJK characters it looks for as the start of
// a word (Phrase.Prefix).
func (q *Query) marks() marks {
	m := marks{words: map[string]bool{}, prefixes: map[string]bool{}}
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
