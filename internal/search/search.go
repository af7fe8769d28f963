// Package search is search_messages (DESIGN.md §18) over the hub: the
// query, in the language of internal/fulltext, read as the hub reads it
// (hub.ParseQuery); ranked full-text matches from the store; each re-checked against the caller's access to its
// conversation as it stands, by the hub's own rule (hub.Room,
// hub.PersonRoom), with a snippet of its body (fulltext.Cut). A search is
// a listing: it marks nothing read and hands over no body. The MCP face
// calls it for agents, the REST face and the dashboard for people.
package search

import (
	"context"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/hub"
)

// Input is a search_messages call (§18), as every face hands it over.
type Input struct {
	Query          string
	ConversationID string // only this conversation ("": every one the caller reads)
	ProjectID      string // only this project's conversations ("": any)
	From           string // only this sender's messages: a handle ("": anyone's)
	Since          string // only messages sent at or after this ISO 8601 time ("": any)
	Limit          int    // 0: hub.SearchPage.Default
}

// Hit is one message a search found: the message (whose body the faces
// do not hand over), its conversation, and the snippet to show.
type Hit struct {
	Message      *hub.Message
	Conversation *hub.ConversationView
	Snippet      fulltext.Snippet
}

// Result is a search's hits, best match first (ties newest first); More
// says more matched than the limit.
type Result struct {
	Hits []Hit
	More bool
}

// Store is what a Finder reads of the hub's store.
type Store interface {
	SearchMessages(ctx context.Context, f hub.SearchFilter, limit int) ([]*hub.Message, error)
}

// A Finder searches messages over the hub and its store.
type Finder struct {
	hub   *hub.Hub // who sees which conversation, and the observer
	store Store
}

// New returns the finder over h and its store.
func New(h *hub.Hub, s Store) *Finder { return &Finder{hub: h, store: s} }

// check reads a search's arguments into a filter and a limit.
func check(in Input) (hub.SearchFilter, int, error) {
	q, err := hub.ParseQuery(in.Query)
	if err != nil {
		return hub.SearchFilter{}, 0, err
	}
	limit, err := hub.SearchPage.Check(in.Limit)
	if err != nil {
		return hub.SearchFilter{}, 0, err
	}
	since, err := hub.ParseTime("since", in.Since)
	if err != nil {
		return hub.SearchFilter{}, 0, err
	}
	f := hub.SearchFilter{Query: q, ConversationID: in.ConversationID, ProjectID: in.ProjectID, Since: since}
	if from := strings.TrimPrefix(strings.TrimSpace(in.From), "@"); from != "" {
		owner, slug, err := hub.ParseHandle(from)
		if err != nil {
			return hub.SearchFilter{}, 0, hub.Invalid("", "from must be a sender's {handle}, like alice or alice/planner (got %q)", hub.Echo(in.From))
		}
		f.SenderHandle = owner
		if slug != "" {
			f.SenderHandle += "/" + slug
		}
	}
	return f, limit, nil
}

// Search is search_messages (§18): the sent messages matching the query in
// the conversations the agent takes part in now (not left, not closed),
// best match first among the newest fulltext.Window matches, at most limit
// (hub.SearchPage). conversation_id and project_id narrow it to one the
// agent may read (not_found otherwise, as everywhere); from to a sender's
// handle; since to messages sent at or after a time. Nothing is marked
// read. Errors: invalid_query and too_long (the query), invalid
// arguments, not_found.
func (x *Finder) Search(ctx context.Context, c *hub.Caller, in Input) (*Result, error) {
	f, limit, err := check(in)
	if err != nil {
		return nil, err
	}
	f.ParticipantID = c.Agent.ID
	sees := func(conversationID string) (*hub.ConversationView, error) {
		return x.hub.Room(ctx, c, conversationID)
	}
	if f.ConversationID != "" {
		if _, err := sees(f.ConversationID); err != nil {
			return nil, err
		}
	}
	if f.ProjectID != "" {
		if _, err := x.hub.AgentProject(ctx, c, f.ProjectID); err != nil {
			return nil, err
		}
	}
	return x.search(ctx, f, limit, sees)
}

// PersonSearch is Search for a person (the REST API and the dashboard):
// the conversations they take part in or one of their agents does, with
// the same query, narrowing and limit.
func (x *Finder) PersonSearch(ctx context.Context, u *hub.User, in Input) (*Result, error) {
	f, limit, err := check(in)
	if err != nil {
		return nil, err
	}
	f.OwnerID = u.ID
	sees := func(conversationID string) (*hub.ConversationView, error) {
		return x.hub.PersonRoom(ctx, u, conversationID)
	}
	if f.ConversationID != "" {
		if _, err := sees(f.ConversationID); err != nil {
			return nil, err
		}
	}
	if f.ProjectID != "" {
		if _, err := x.hub.MemberProject(ctx, u, f.ProjectID); err != nil {
			return nil, hub.AsError(err)
		}
	}
	return x.search(ctx, f, limit, sees)
}

// search runs f in the store and keeps each hit whose conversation sees
// still opens to the caller — the hub's own access rule, asked once per
// conversation — and that was sent, with its snippet.
func (x *Finder) search(ctx context.Context, f hub.SearchFilter, limit int, sees func(conversationID string) (*hub.ConversationView, error)) (*Result, error) {
	start := time.Now() // how long it takes, not the hub's clock
	defer func() { x.hub.Observer().Searched(time.Since(start)) }()
	msgs, err := x.store.SearchMessages(ctx, f, limit+1)
	if err != nil {
		return nil, hub.AsError(err)
	}
	res := &Result{Hits: []Hit{}}
	if len(msgs) > limit {
		msgs, res.More = msgs[:limit], true
	}
	views := map[string]*hub.ConversationView{}
	for _, m := range msgs {
		v, asked := views[m.ConversationID]
		if !asked {
			if v, err = sees(m.ConversationID); err != nil && hub.AsError(err).Kind != hub.KindNotFound {
				return nil, hub.AsError(err)
			}
			views[m.ConversationID] = v // nil: not open to the caller
		}
		if v == nil || m.Status != hub.MessageSent {
			continue
		}
		res.Hits = append(res.Hits, Hit{Message: m, Conversation: v, Snippet: fulltext.Cut(m.Body, f.Query)})
	}
	return res, nil
}
