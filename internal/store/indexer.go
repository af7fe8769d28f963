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
	// at, at most.
	indexBatch = 1000
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
	// Closing, it indexes what the last moments sent, unless that is more
	// than a few batches (a start catching up): the next start does it.
	last := func() {
		if err := db.indexPass(nil, closingBatches); err != nil {
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
		err := db.indexPass(ix.stop, -1)
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
		return db.indexPass(ctx.Done(), -1)
	}
	return db.indexer.waitPass(ctx, true)
}

// indexPass indexes everything not yet indexed, a batch a transaction,
// looking first on the read pool whether there is anything to do, until
// stop or after batches (-1: however many it takes).
func (db *DB) indexPass(stop <-chan struct{}, batches int) error {
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
		var more bool
		if err := db.Update(ctx, func(tx hub.Tx) error {
			var err error
			more, err = tx.(queries).indexSearch(ctx)
			return err
		}); err != nil || !more {
			return err
		}
	}
	return nil
}

// searchBehind reports a sent message past the indexer's mark or one
// approved since it passed it.
func (d queries) searchBehind(ctx context.Context) (bool, error) {
	var behind bool
	err := d.q.QueryRowContext(ctx, `SELECT COALESCE((SELECT MAX(rowid) FROM messages), 0) > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?)
		OR EXISTS (SELECT 1 FROM message_search_pending)`, metaSearchThrough).Scan(&behind)
	return behind, dbErr("search behind", err)
}

// indexSearch, in the writer's transaction, indexes the sent messages of
// the next indexBatch rowids past the mark and the approved ones it passed
// while they were held, moves the mark past the batch and forgets what was
// noted up to it; more: the batch was full.
func (d queries) indexSearch(ctx context.Context) (more bool, err error) {
	var mark string
	if err := d.q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaSearchThrough).Scan(&mark); err != nil {
		return false, dbErr("search mark", err)
	}
	from, err := strconv.ParseInt(mark, 10, 64)
	if err != nil {
		return false, fmt.Errorf("search mark %q: %w", mark, err)
	}
	var last sql.NullInt64
	var n int
	if err := d.q.QueryRowContext(ctx, `SELECT MAX(rowid), COUNT(*) FROM (SELECT rowid FROM messages WHERE rowid > ? ORDER BY rowid LIMIT ?)`,
		from, indexBatch).Scan(&last, &n); err != nil {
		return false, dbErr("search batch", err)
	}
	through := from
	if last.Valid {
		through = last.Int64
	}
	// Two disjoint sets: past the mark, and noted at or before it (a
	// message noted past it is in the first).
	if err := d.exec(ctx, "index search", `INSERT INTO message_search (rowid, conversation, summary, body)
		SELECT m.rowid, replace(m.conversation_id, '_', ''), palaver_search_text(m.summary), palaver_search_text(m.body)
			FROM messages m WHERE m.rowid > ? AND m.rowid <= ? AND m.status = 'sent'
		UNION ALL
		SELECT m.rowid, replace(m.conversation_id, '_', ''), palaver_search_text(m.summary), palaver_search_text(m.body)
			FROM message_search_pending p JOIN messages m ON m.rowid = p.message_rowid WHERE p.message_rowid <= ? AND m.status = 'sent'`,
		from, through, from); err != nil {
		return false, err
	}
	if err := d.exec(ctx, "index search", `DELETE FROM message_search_pending WHERE message_rowid <= ?`, through); err != nil {
		return false, err
	}
	if through > from {
		if err := d.exec(ctx, "index search", `UPDATE meta SET value = ? WHERE key = ?`, strconv.FormatInt(through, 10), metaSearchThrough); err != nil {
			return false, err
		}
	}
	return n == indexBatch, nil
}
