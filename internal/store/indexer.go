package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// The search index filled after the commit (DESIGN.md §17, §18; SQLite,
// migration 0028): a send writes no part of the index. The indexer wakes
// shortly after a commit that made messages sent (the writer tells it), and
// once a second whatever happened (a message another process sent), and
// indexes what is not yet indexed in batches, each batch one of the
// writer's transactions that also moves the mark it starts from
// (search_indexed_through, the last rowid it has looked at), so a crash
// neither loses nor doubles an entry and the next start catches up. A
// message is searchable within a second of its commit.
//
// Catching up on many messages (a start after an import, or history
// another process wrote), the indexer shares the writer: each batch is
// sized to hold it about indexSlice, and after a full batch it rests as
// long as the batch took, so sends queued behind it wait one short batch
// at most and another process's writer, polling for the file's lock, finds
// it free half the time (back to back, the batches of a catch-up had held
// the lock past another process's busy timeout). A batch of a thousand
// takes about 4 ms at a million messages.
//
// On PostgreSQL the send's statement writes the search column (its GIN
// index takes it into its pending list, merged in bulk later): moving it
// after the commit would write the row a second time, and every index of
// messages with it, and replicas commit out of id order, so no mark of
// ids could say what is done. There is no indexer there.

const (
	// metaSearchThrough is the meta key of the indexer's mark.
	metaSearchThrough = "search_indexed_through"
	// indexGather is how long the indexer lets commits gather after it
	// was woken: their messages go into the index in one statement, one
	// FTS5 segment and one commit for them all.
	indexGather = 250 * time.Millisecond
	// indexBatch is how many messages one transaction of the indexer looks
	// at, at most, and indexBatchMin at least; a pass starts at
	// indexBatchStart.
	indexBatch      = 1000
	indexBatchMin   = 16
	indexBatchStart = 64
	// indexSlice is how long one of the indexer's transactions should hold
	// the writer.
	indexSlice = 10 * time.Millisecond
	// closingBatches is how many batches Close waits for, at most.
	closingBatches = 10
)

// indexEvery is how often the indexer looks without being woken.
// A variable so that a test can make it wait for the writer alone.
var indexEvery = time.Second

// indexer is a DB's search indexer goroutine and what waits on it.
type indexer struct {
	wake   chan struct{} // a commit made messages sent
	now    chan struct{} // index without waiting (SearchIndexed)
	stop   chan struct{}
	every  time.Duration // indexEvery when it was made
	halted sync.Once
	done   chan struct{}

	mu        sync.Mutex
	started   uint64        // passes begun
	completed uint64        // passes ended
	err       error         // the last pass's
	ended     chan struct{} // closed (and replaced) when a pass ends
}

func newIndexer() *indexer {
	return &indexer{wake: make(chan struct{}, 1), now: make(chan struct{}, 1), stop: make(chan struct{}), every: indexEvery,
		done: make(chan struct{}), ended: make(chan struct{})}
}

// notify tells the indexer that a commit made messages sent.
func (ix *indexer) notify() {
	if ix == nil { // an open without Index: the server's indexer looks within a second
		return
	}
	select {
	case ix.wake <- struct{}{}:
	default:
	}
}

// halt stops the indexer between two batches, lets it index the last
// moments' messages and waits for it.
func (ix *indexer) halt() {
	ix.halted.Do(func() { close(ix.stop) })
	<-ix.done
}

// run is the indexer's goroutine: a pass when woken (after indexGather),
// when asked (at once) and every indexEvery, until stop.
func (ix *indexer) run(db *DB) {
	defer close(ix.done)
	every := time.NewTimer(0) // catch up at once after a start
	defer every.Stop()
	p := newPace()
	// Closing, it indexes what the last moments sent, unless that is more
	// than a few batches (a start catching up): the next start does it.
	last := func() {
		if err := db.indexPass(nil, closingBatches, p); err != nil {
			db.log.Error("search index", "err", err)
		}
	}
	for {
		select {
		case <-ix.stop:
			last()
			return
		case <-ix.now:
		case <-every.C:
		case <-ix.wake:
			gather := time.NewTimer(indexGather)
			select {
			case <-ix.stop:
				gather.Stop()
				last()
				return
			case <-ix.now:
			case <-gather.C:
			}
			gather.Stop()
		}
		ix.mu.Lock()
		ix.started++
		ix.mu.Unlock()
		err := db.indexPass(ix.stop, -1, p)
		if err != nil {
			db.log.Error("search index", "err", err)
		}
		ix.mu.Lock()
		ix.completed, ix.err = ix.completed+1, err
		close(ix.ended)
		ix.ended = make(chan struct{})
		ix.mu.Unlock()
		every.Reset(ix.every)
	}
}

// waitPass waits for a pass that begins after the call to end, asking for
// one at once when hurry is set.
func (ix *indexer) waitPass(ctx context.Context, hurry bool) error {
	ix.mu.Lock()
	target := ix.started + 1
	ix.mu.Unlock()
	if hurry {
		select {
		case ix.now <- struct{}{}:
		default:
		}
	}
	return ix.waitPasses(ctx, target)
}

// waitPasses waits for the indexer to have ended target passes.
func (ix *indexer) waitPasses(ctx context.Context, target uint64) error {
	for {
		ix.mu.Lock()
		completed, err, ended := ix.completed, ix.err, ix.ended
		ix.mu.Unlock()
		if completed >= target {
			return err
		}
		select {
		case <-ended:
		case <-ix.done:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// SearchIndexed returns once every message committed before the call is
// in the search index (at once on PostgreSQL, where the send indexes it):
// it has the indexer look now, not after its usual wait, or without one
// (an open without Index) indexes them itself.
func (db *DB) SearchIndexed(ctx context.Context) error {
	switch {
	case !db.dialect.groupCommit:
		return nil
	case db.indexer == nil:
		return db.indexPass(ctx.Done(), -1, newPace())
	}
	return db.indexer.waitPass(ctx, true)
}

// SearchBacklog is how many messages wait for the search index: the
// rowids past the indexer's mark and the approved messages it passed while
// they were held (none on PostgreSQL, where the send indexes).
func (db *DB) SearchBacklog(ctx context.Context) (int64, error) {
	if !db.dialect.groupCommit {
		return 0, nil
	}
	var n int64
	err := db.queries.q.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM messages WHERE rowid > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?))
		+ (SELECT COUNT(*) FROM message_search_pending)`, metaSearchThrough).Scan(&n)
	return n, dbErr("search backlog", err)
}

// indexPass indexes everything not yet indexed, a batch a transaction,
// looking first on the read pool whether there is anything to do, until
// stop or after batches (-1: however many it takes). Between full batches
// it rests as long as the last one took; p carries the batches' size from
// one pass to the next.
func (db *DB) indexPass(stop <-chan struct{}, batches int, p *pace) error {
	ctx := context.Background()
	for ; batches != 0; batches-- {
		select {
		case <-stop:
			return nil
		default:
		}
		behind, err := db.queries.searchBehind(ctx)
		if err != nil || !behind {
			return err
		}
		var n int
		start := time.Now()
		if err := db.queue(ctx, func(tx hub.Tx) error {
			var err error
			n, err = tx.(queries).indexSearch(ctx, p.size)
			return err
		}, true); err != nil {
			return err
		}
		rest, more := p.after(n, time.Since(start))
		if !more {
			return nil
		}
		wait := time.NewTimer(rest)
		select {
		case <-stop:
			wait.Stop()
			return nil
		case <-wait.C:
		}
	}
	return nil
}

// pace sizes the indexer's batches while it catches up: size is how many
// messages the next batch looks at.
type pace struct{ size int }

func newPace() *pace { return &pace{size: indexBatchStart} }

// after takes a batch that looked at n messages in took, and says how long
// to rest before the next and whether there is more (the batch was full).
// A batch that held the writer past twice indexSlice halves the next, one
// done within half of it doubles it, within indexBatchMin..indexBatch.
func (p *pace) after(n int, took time.Duration) (rest time.Duration, more bool) {
	if n < p.size {
		return 0, false
	}
	switch {
	case took > 2*indexSlice:
		p.size = max(p.size/2, indexBatchMin)
	case took < indexSlice/2:
		p.size = min(p.size*2, indexBatch)
	}
	return took, true
}

// searchBehind reports a sent message past the indexer's mark or one
// approved since it passed it.
func (d queries) searchBehind(ctx context.Context) (bool, error) {
	var behind bool
	err := d.q.QueryRowContext(ctx, `SELECT COALESCE((SELECT MAX(rowid) FROM messages), 0) > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?)
		OR EXISTS (SELECT 1 FROM message_search_pending)`, metaSearchThrough).Scan(&behind)
	return behind, dbErr("search behind", err)
}

// indexSearchSQL indexes two disjoint sets: the batch past the mark, and
// what was noted at or before it (a message noted past it is in the
// first). The second reads the pending table first (CROSS JOIN keeps that
// order): the planner, left to itself, walked every message below the mark
// and looked each up in the pending table, 30 ms a batch at a million
// messages, whatever the batch's size.
const indexSearchSQL = `INSERT INTO message_search (rowid, conversation, summary, body)
	SELECT m.rowid, replace(m.conversation_id, '_', ''), palaver_search_text(m.summary), palaver_search_text(m.body)
		FROM messages m WHERE m.rowid > ? AND m.rowid <= ? AND m.status = 'sent'
	UNION ALL
	SELECT m.rowid, replace(m.conversation_id, '_', ''), palaver_search_text(m.summary), palaver_search_text(m.body)
		FROM message_search_pending p CROSS JOIN messages m ON m.rowid = p.message_rowid WHERE p.message_rowid <= ? AND m.status = 'sent'`

// indexSearch, in the writer's transaction, indexes the sent messages of
// the next size rowids past the mark and the approved ones it passed while
// they were held, moves the mark past the batch and forgets what was noted
// up to it; n is how many rowids it looked at past the mark.
func (d queries) indexSearch(ctx context.Context, size int) (n int, err error) {
	var mark string
	if err := d.q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaSearchThrough).Scan(&mark); err != nil {
		return 0, dbErr("search mark", err)
	}
	from, err := strconv.ParseInt(mark, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("search mark %q: %w", mark, err)
	}
	var last sql.NullInt64
	if err := d.q.QueryRowContext(ctx, `SELECT MAX(rowid), COUNT(*) FROM (SELECT rowid FROM messages WHERE rowid > ? ORDER BY rowid LIMIT ?)`,
		from, size).Scan(&last, &n); err != nil {
		return 0, dbErr("search batch", err)
	}
	through := from
	if last.Valid {
		through = last.Int64
	}
	if err := d.exec(ctx, "index search", indexSearchSQL, from, through, from); err != nil {
		return 0, err
	}
	if err := d.exec(ctx, "index search", `DELETE FROM message_search_pending WHERE message_rowid <= ?`, through); err != nil {
		return 0, err
	}
	if through > from {
		if err := d.exec(ctx, "index search", `UPDATE meta SET value = ? WHERE key = ?`, strconv.FormatInt(through, 10), metaSearchThrough); err != nil {
			return 0, err
		}
	}
	return n, nil
}
