package store

import (
	"context"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// Search (§18): the hub's parsed query matched against the full-text index
// of sent messages (migration 0012: FTS5 on SQLite, a tsvector column with
// a GIN index on PostgreSQL), within the conversations the reader takes
// part in, ranked. The query reaches the database as one parameter, in the
// dialect's own match syntax, every word quoted: never a user's syntax.

// searchDialect is what a dialect's search says in its own SQL.
type searchDialect struct {
	// from names messages m, joined to the index, with the match's one
	// parameter in it or in where.
	from, where string
	// rank orders the matches best first.
	rank string
	// match writes a parsed query in the dialect's match syntax.
	match func(q *hub.Query) string
}

var sqliteSearch = searchDialect{
	from:  `message_search s JOIN messages m ON m.id = s.message_id`,
	where: `message_search MATCH ?`,
	// bm25 is smaller for better matches; the id column counts for
	// nothing, a summary's words twice a body's.
	rank:  `bm25(message_search, 0.0, 2.0, 1.0)`,
	match: fts5Match,
}

var postgresSearch = searchDialect{
	from:  `to_tsquery('simple', ?) q JOIN messages m ON m.search @@ q`,
	where: `TRUE`,
	rank:  `ts_rank(m.search, q) DESC`,
	match: tsqueryMatch,
}

// fts5Match writes q as an FTS5 query: each phrase a string in double
// quotes (a quote inside doubled), the groups ANDed, each group's phrases
// ORed, the excluded phrases after NOT.
func fts5Match(q *hub.Query) string {
	phrase := func(p hub.Phrase) string {
		return `"` + strings.ReplaceAll(strings.Join(p, " "), `"`, `""`) + `"`
	}
	return matchExpr(q, phrase, " AND ", " OR ", func(not string) string { return " NOT (" + not + ")" })
}

// tsqueryMatch writes q in to_tsquery's syntax: each phrase a quoted
// string (a quote inside doubled, a backslash escaped), which to_tsquery
// reads as its words in a row; & between groups, | within one, & ! before
// the excluded phrases.
func tsqueryMatch(q *hub.Query) string {
	phrase := func(p hub.Phrase) string {
		s := strings.ReplaceAll(strings.Join(p, " "), `\`, `\\`)
		return `'` + strings.ReplaceAll(s, `'`, `''`) + `'`
	}
	return matchExpr(q, phrase, " & ", " | ", func(not string) string { return " & !(" + not + ")" })
}

// matchExpr writes q with the dialect's quoting of a phrase and its words
// for and, or and and-not.
func matchExpr(q *hub.Query, phrase func(hub.Phrase) string, and, or string, andNot func(string) string) string {
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

func (d queries) SearchMessages(ctx context.Context, f hub.SearchFilter, limit int) ([]*hub.Message, error) {
	s := d.dialect.search
	var b strings.Builder
	args := []any{s.match(f.Query)}
	b.WriteString(`SELECT ` + msgCols("m") + ` FROM ` + s.from + ` JOIN conversations c ON c.id = m.conversation_id
		WHERE ` + s.where + ` AND m.status = 'sent' AND c.status <> 'closed'`)
	// Whose conversations: as ConversationsOf and OwnersConversations
	// list them. The hub checks each hit's again.
	if f.OwnerID != "" {
		b.WriteString(` AND m.conversation_id IN (SELECT conversation_id FROM participants WHERE owner_id = ? AND left_at IS NULL)`)
		args = append(args, f.OwnerID)
	} else {
		b.WriteString(` AND m.conversation_id IN (SELECT conversation_id FROM participants WHERE principal_id = ? AND left_at IS NULL)`)
		args = append(args, f.ParticipantID)
	}
	for _, n := range []struct {
		cond string
		arg  any
		set  bool
	}{
		{` AND m.conversation_id = ?`, f.ConversationID, f.ConversationID != ""},
		{` AND c.project_id = ?`, f.ProjectID, f.ProjectID != ""},
		{` AND m.sender_handle = ?`, f.SenderHandle, f.SenderHandle != ""},
		{` AND m.created_at >= ?`, since(f.Since), !f.Since.IsZero()},
	} {
		if n.set {
			b.WriteString(n.cond)
			args = append(args, n.arg)
		}
	}
	b.WriteString(` ORDER BY ` + s.rank + `, m.created_at DESC, m.id DESC LIMIT ?`)
	args = append(args, limit)
	return queryAll(ctx, d.q, "search messages", scanMessage, b.String(), args...)
}
