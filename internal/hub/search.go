package hub

import (
	"context"
	"errors"
	"time"

	"github.com/palaverhq/palaver/internal/fulltext"
)

// Search (§18): the query is parsed by internal/fulltext (the language,
// the words of a text, the snippets) as the hub reads every text
// (ParseQuery), and carried out by internal/search over the store's full-text
// matches, each re-checked against the caller's access to its
// conversation as the hub rules it (Room, PersonRoom).

// SearchFilter is a search as the store carries it out: the parsed query,
// whose conversations it reads — those ParticipantID takes part in (an
// agent), or those OwnerID or one of their agents takes part in (a
// person); never closed ones — and what narrows it.
type SearchFilter struct {
	Query          *fulltext.Query
	ParticipantID  string
	OwnerID        string
	ConversationID string
	ProjectID      string
	SenderHandle   string
	Since          time.Time
}

// ParseQuery reads a query (fulltext.Parse) as every text the hub is given
// is read (invalid bytes become U+FFFD; invisible characters alone are no
// words), its refusals hub Errors: invalid_query and too_long.
func ParseQuery(s string) (*fulltext.Query, error) {
	if s = cleanText(s); blank(s) {
		s = ""
	}
	q, err := fulltext.Parse(s)
	var se *fulltext.Error
	if errors.As(err, &se) {
		return nil, invalid(se.Code, "%s", escapeBraces(se.Msg))
	}
	return q, err
}

// SearchReads are the queries of search (Reader embeds them).
type SearchReads interface {
	// SearchMessages ranks the newest fulltext.Window sent messages
	// matching f.Query in the conversations f reads, narrowed as f says:
	// best match first, ties newest first, at most limit (§18). Every
	// message is indexed in the transaction that makes it sent, with its
	// final words.
	SearchMessages(ctx context.Context, f SearchFilter, limit int) ([]*Message, error)
}
