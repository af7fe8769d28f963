package store

import (
	"context"
	"time"
)

// The brakes' counts from memory (DESIGN.md §17): beside the conversation
// views, the SQLite writer keeps, per agent and conversation, the times
// and body hashes of the messages CountSent counts (sent or held, not
// rejected) since the earliest moment a count asked about, and answers
// CountSent from them. The windows are the caller's: CountSent is given
// its bounds from the hub's clock and compares them with the kept times
// exactly as the query compares the stored ones, so a message leaves the
// budget's window in memory when it would leave it in the database.
//
// What is kept changes with the writer's own InsertMessage (appended) and
// DecideMessage (that pair forgotten: a held message rejected or edited);
// nothing else writes a message's sender, conversation, status, body or
// time. Like the views, a transaction that rolls anything back forgets it
// all, and so does a commit by any other connection to the file (the
// admin command line), which the writer learns from PRAGMA data_version
// once in each batch, before anything kept is used. A count whose words
// match a kept hash is read from the database: memory says when there is
// no duplicate, the query how many there are.

// maxSentLogs bounds how many agent-and-conversation pairs are kept, and
// maxSentRows how many messages one of them holds: a pair past it is read
// from the database every time until everything is forgotten.
const (
	maxSentLogs = 4096
	maxSentRows = 512
)

// sentKey is one agent in one conversation.
type sentKey struct{ conversation, sender string }

// sentLog is what is kept of one sentKey: every counted message created
// after from (Unix milliseconds, as stored), oldest first.
type sentLog struct {
	from    int64
	rows    []sentRow
	tooMany bool // more than maxSentRows since from: not kept
}

// sentRow is one counted message.
type sentRow struct {
	at   int64
	hash string
}

// countSent is CountSent from memory: the pair's log is read once, when
// it is not kept or starts after what is asked.
func (c *viewCache) countSent(ctx context.Context, d queries, conversationID, senderID, body string, sameSince, recentSince time.Time, max int) (same, recent int, err error) {
	if err := c.seeOthers(ctx, d); err != nil {
		return 0, 0, err
	}
	k := sentKey{conversationID, senderID}
	sameFrom, recentFrom := since(sameSince), since(recentSince)
	from := min(sameFrom, recentFrom)
	l, ok := c.sent[k]
	if !ok || (from < l.from && !l.tooMany) {
		if l, err = loadSent(ctx, d, k, from); err != nil {
			return 0, 0, err
		}
		if c.sent == nil || len(c.sent) >= maxSentLogs {
			c.sent = map[sentKey]*sentLog{}
		}
		c.sent[k] = l
	}
	if l.tooMany {
		return d.countSent(ctx, conversationID, senderID, body, sameSince, recentSince, max)
	}
	hash := bodyHash(body)
	for _, r := range l.rows {
		if r.at > sameFrom && r.hash == hash {
			return d.countSent(ctx, conversationID, senderID, body, sameSince, recentSince, max)
		}
		if r.at > recentFrom {
			recent++
		}
	}
	// Counts are asked with bounds that only move forward (the clock, a
	// person taking part): what is before this one's is let go.
	if from > l.from {
		i := 0
		for i < len(l.rows) && l.rows[i].at <= from {
			i++
		}
		l.rows, l.from = l.rows[i:], from
	}
	if max >= 0 && recent > max {
		recent = max
	}
	return 0, recent, nil
}

// sentLogSQL reads a sender's counted messages in a conversation, from
// messages_sender alone.
const sentLogSQL = `SELECT created_at, body_hash FROM messages WHERE sender_id = ? AND conversation_id = ? AND created_at > ?
	AND status <> 'rejected' ORDER BY created_at LIMIT ?`

// loadSent reads the pair's counted messages created after from.
func loadSent(ctx context.Context, d queries, k sentKey, from int64) (*sentLog, error) {
	l := &sentLog{from: from}
	rows, err := d.q.QueryContext(ctx, sentLogSQL, k.sender, k.conversation, from, maxSentRows+1)
	if err != nil {
		return nil, dbErr("sent log", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r sentRow
		if err := rows.Scan(&r.at, &r.hash); err != nil {
			return nil, dbErr("sent log", err)
		}
		l.rows = append(l.rows, r)
	}
	if len(l.rows) > maxSentRows {
		l.rows, l.tooMany = nil, true
	}
	return l, dbErr("sent log", rows.Err())
}

// inserted keeps a message the writer inserted, when its pair is kept.
func (c *viewCache) inserted(conversationID, senderID, status string, at time.Time, hash string) {
	l, ok := c.sent[sentKey{conversationID, senderID}]
	if !ok || l.tooMany || status == "rejected" || at.IsZero() || at.UnixMilli() <= l.from {
		return
	}
	r := sentRow{at.UnixMilli(), hash}
	i := len(l.rows)
	for i > 0 && l.rows[i-1].at > r.at {
		i--
	}
	l.rows = append(l.rows, sentRow{})
	copy(l.rows[i+1:], l.rows[i:])
	l.rows[i] = r
	if len(l.rows) > maxSentRows {
		l.rows, l.tooMany = nil, true
	}
}

// decided forgets a pair whose held message was decided.
func (c *viewCache) decided(conversationID, senderID string) {
	delete(c.sent, sentKey{conversationID, senderID})
}

// A batch's transaction begins with BEGIN IMMEDIATE: no other connection
// commits while it runs, so the data version read anywhere in it tells
// whether one committed since the last batch. A send reads it with its
// conversation's row (view); a count made before any such read in the
// batch reads it on its own (seeOthers).

// begin marks a new batch: the data version is not read in it yet.
func (c *viewCache) begin() { c.checked = false }

// saw takes the data version read in this batch, and forgets everything
// when another connection committed since the last one read.
func (c *viewCache) saw(version int64) {
	c.checked = true
	if version != c.dataVersion {
		c.dataVersion = version
		c.forget()
	}
}

// seeOthers reads the data version unless this batch did.
func (c *viewCache) seeOthers(ctx context.Context, d queries) error {
	if c.checked {
		return nil
	}
	var v int64
	if err := d.q.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		return dbErr("data version", err)
	}
	c.saw(v)
	return nil
}
