package store

import (
	"context"
	"slices"

	"github.com/palaverhq/palaver/internal/hub"
)

// Cached checks (DESIGN.md §17): the SQLite writer keeps the participants
// of the conversations its transactions read — with their handles,
// archive and public flags, a join over four tables that was the largest
// read of a send — and reads only the conversation's own row again. What
// it keeps stands while the 'participants' generation does, which the
// database's triggers move with every change to participants, agents and
// users, from this process or another (the admin command line), in the
// transaction that makes it. A transaction that rolls anything back
// forgets it all, since it may have kept what it then undid. PostgreSQL,
// whose replicas write side by side, reads every time.

// maxViews bounds how many conversations are kept: past it, all are read
// again.
const maxViews = 4096

// viewCache is what the writer keeps; only the writer's goroutine uses it.
type viewCache struct {
	gen   int64
	parts map[string][]hub.Participant // by conversation id

	sent        map[sentKey]*sentLog // the brakes' counts (sentcounts.go)
	dataVersion int64                // the write connection's PRAGMA data_version
	checked     bool                 // dataVersion was read in this batch
}

// view is ConversationView through the cache: the conversation's row and
// the generation in one read (with the data version, the batch's first),
// and its participants from memory while the generation stands.
func (c *viewCache) view(ctx context.Context, d queries, id string) (*hub.ConversationView, error) {
	var conv conversationDest
	var gen, version int64
	query, dest := `SELECT `+convCols+`, (SELECT n FROM generations WHERE name = 'participants') FROM conversations WHERE id = ?`, append(conv.dest(), &gen)
	if !c.checked {
		query = `SELECT ` + convCols + `, (SELECT n FROM generations WHERE name = 'participants'),
			(SELECT data_version FROM pragma_data_version) FROM conversations WHERE id = ?`
		dest = append(dest, &version)
	}
	if err := d.q.QueryRowContext(ctx, query, id).Scan(dest...); err != nil {
		return nil, dbErr("conversation view", err)
	}
	if !c.checked {
		c.saw(version)
	}
	if gen != c.gen || c.parts == nil {
		c.gen, c.parts = gen, map[string][]hub.Participant{}
	}
	if ps, ok := c.parts[id]; ok {
		return &hub.ConversationView{Conversation: conv.done(), Participants: slices.Clone(ps)}, nil
	}
	v, err := d.conversationView(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(c.parts) >= maxViews {
		clear(c.parts)
	}
	c.parts[id] = slices.Clone(v.Participants)
	return v, nil
}

// forget drops everything kept.
func (c *viewCache) forget() {
	if c != nil {
		c.parts, c.sent = nil, nil
	}
}
