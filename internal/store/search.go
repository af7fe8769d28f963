package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/hub"
)

// Search (§18): the hub's parsed query matched against the full-text index
// of sent messages (migrations 0015 and 0018: FTS5 on SQLite, filled after
// the commit since 0028 and so up to a second behind; a tsvector column
// with a GIN index on PostgreSQL, written by the send) within the
// conversations the reader takes part in, ranked. Both index a message's search words as the
// hub makes them (fulltext.Text), and a query's phrases are made of the
// same words. The query reaches the database as one parameter in the
// dialect's own match syntax, every word quoted: never a user's syntax.
//
// One statement, in two steps: the newest fulltext.Window matches the
// reader can read — which the index hands over newest first without
// scoring them — and those ranked, best first. So a search of a word in
// nearly every message costs the window, not the history.

// searchDialect is how a dialect says a search.
type searchDialect struct {
	inner  string // the window's select list and FROM: messages m, joined to the index
	where  string // the match in the window's WHERE, with the match's parameter
	newest string // the window's order, newest first
	outer  string // after FROM (window) h: messages m again
	rank   string // the order of the ranked hits, best first
	// rankMatch: rank takes the match again, as its next parameter.
	rankMatch bool
	// match writes a parsed query in the dialect's match syntax;
	// conversations, when not nil, are the only ones it may match in.
	match func(q *fulltext.Query, conversations []string) string
	// fewConversations: the match is cheaper told the reader's
	// conversations when there are at most this many (0: never).
	fewConversations int
	// first goes before a search's arguments (nil: nothing).
	first any
	// vector, when set, is the SQL of a sent message's search column,
	// written by the statement that makes it sent, from two parameters:
	// its summary's and its body's hub.SearchText (PostgreSQL). Where it
	// is "" the index is filled after the commit instead (SQLite: the
	// indexer, indexer.go).
	vector string
}

// indexed returns the search column and its SQL and arguments for a
// message m that statement makes sent ("", "", nil where the dialect
// indexes otherwise, or m is not sent).
func (s searchDialect) indexed(m *hub.Message) (column, value string, args []any) {
	if s.vector == "" || m.Status != hub.MessageSent {
		return "", "", nil
	}
	return "search", s.vector, []any{fulltext.Text(m.Summary), fulltext.Text(m.Body)}
}

// fts5Match writes q as an FTS5 query over the summary and body columns:
// each phrase a string in double quotes (a quote inside doubled; * after
// it for a prefix, fulltext.Phrase.Prefix), the groups ANDed, each group's
// phrases ORed, the excluded phrases after NOT; with conversations, only
// in theirs (each id one term, without its underscore, as the index keeps
// it).
func fts5Match(q *fulltext.Query, conversations []string) string {
	phrase := func(p fulltext.Phrase) string {
		s := `"` + strings.ReplaceAll(strings.Join(p, " "), `"`, `""`) + `"`
		if p.Prefix() {
			s += "*"
		}
		return s
	}
	expr := "{summary body} : (" + matchExpr(q, phrase, " AND ", " OR ", func(not string) string { return " NOT (" + not + ")" }) + ")"
	if conversations == nil {
		return expr
	}
	ids := make([]string, len(conversations))
	for i, id := range conversations {
		ids[i] = phrase(fulltext.Phrase{strings.ReplaceAll(id, "_", "")})
	}
	return "conversation : (" + strings.Join(ids, " OR ") + ") AND " + expr
}

// tsqueryMatch writes q in to_tsquery's syntax: each phrase a quoted
// string (a quote inside doubled, a backslash escaped), which to_tsquery
// reads as its words in a row — a prefix's last word quoted on its own,
// followed by <-> before it and :* after (fulltext.Phrase.Prefix); & between
// groups, | within one, & ! before the excluded phrases.
func tsqueryMatch(q *fulltext.Query) string {
	quote := func(words []string) string {
		s := strings.ReplaceAll(strings.Join(words, " "), `\`, `\\`)
		return `'` + strings.ReplaceAll(s, `'`, `''`) + `'`
	}
	phrase := func(p fulltext.Phrase) string {
		if !p.Prefix() {
			return quote(p)
		}
		last := quote(p[len(p)-1:]) + ":*"
		if len(p) == 1 {
			return last
		}
		return "(" + quote(p[:len(p)-1]) + " <-> " + last + ")"
	}
	return matchExpr(q, phrase, " & ", " | ", func(not string) string { return " & !(" + not + ")" })
}

// matchExpr writes q with the dialect's quoting of a phrase and its words
// for and, or and and-not.
func matchExpr(q *fulltext.Query, phrase func(fulltext.Phrase) string, and, or string, andNot func(string) string) string {
	groups := make([]string, len(q.All))
	for i, g := range q.All {
		ps := make([]string, len(g))
		for j, p := range g {
			ps[j] = phrase(p)
		}
		groups[i] = "(" + strings.Join(ps, or) + ")"
	}
	expr := "(" + strings.Join(groups, and) + ")"
	if len(q.Not) > 0 {
		ps := make([]string, len(q.Not))
		for i, p := range q.Not {
			ps[i] = phrase(p)
		}
		expr += andNot(strings.Join(ps, or))
	}
	return expr
}

// readable is the SQL listing the conversations f's reader takes part in,
// as ConversationsOf and OwnersConversations list them (not closed), of
// f's project when it names one; and its arguments.
func readable(f hub.SearchFilter) (string, []any) {
	q, args := `SELECT p.conversation_id FROM participants p JOIN conversations c ON c.id = p.conversation_id
		WHERE p.principal_id = ? AND p.left_at IS NULL AND c.status <> 'closed'`, []any{f.ParticipantID}
	if f.OwnerID != "" {
		q, args = strings.Replace(q, "p.principal_id", "p.owner_id", 1), []any{f.OwnerID}
	}
	if f.ProjectID != "" {
		q, args = q+` AND c.project_id = ?`, append(args, f.ProjectID)
	}
	return q, args
}

func (d queries) SearchMessages(ctx context.Context, f hub.SearchFilter, limit int) ([]*hub.Message, error) {
	s := d.dialect.search
	whose, readers := readable(f)
	var only []string // the conversations to tell the match, nil: not told
	switch {
	case s.fewConversations == 0:
	case f.ConversationID != "":
		only = []string{f.ConversationID}
	default:
		ids, err := queryAll(ctx, d.q, "search: conversations", func(row scanner) (string, error) {
			var id string
			return id, row.Scan(&id)
		}, whose+` LIMIT ?`, append(readers, s.fewConversations+1)...)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return nil, nil // nowhere to look
		}
		if len(ids) <= s.fewConversations {
			only = ids
		}
	}
	match := s.match(f.Query, only)
	args := append([]any{match}, readers...)
	var b strings.Builder
	b.WriteString(`SELECT ` + msgCols("m") + ` FROM (SELECT ` + s.inner + `
		WHERE ` + s.where + ` AND m.status = 'sent' AND m.conversation_id IN (` + whose + `)`)
	for _, n := range []struct {
		cond string
		arg  any
		set  bool
	}{
		{` AND m.conversation_id = ?`, f.ConversationID, f.ConversationID != ""},
		{` AND m.sender_handle = ?`, f.SenderHandle, f.SenderHandle != ""},
		{` AND m.created_at >= ?`, since(f.Since), !f.Since.IsZero()},
	} {
		if n.set {
			b.WriteString(n.cond)
			args = append(args, n.arg)
		}
	}
	b.WriteString(` ORDER BY ` + s.newest + ` LIMIT ` + strconv.Itoa(fulltext.Window) + `) h ` + s.outer + `
		ORDER BY ` + s.rank + `, m.created_at DESC, m.id DESC LIMIT ?`)
	if s.rankMatch {
		args = append(args, match)
	}
	args = append(args, limit)
	if s.first != nil {
		args = append([]any{s.first}, args...)
	}
	return queryAll(ctx, d.q, "search messages", scanMessage, b.String(), args...)
}
