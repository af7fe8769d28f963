// Package store is Palaver's one concrete hub.Store (DESIGN.md §13), for
// both dialects. SQLite (modernc.org/sqlite, pure Go) is the embedded
// default: one writer goroutine owns the write connection and commits in
// groups, reads use a separate pool. PostgreSQL (pgx) serves several
// replicas: each Update is its own transaction on a shared pool.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Options configure Open.
type Options struct {
	// Database is a SQLite file path (created on first open, readable by
	// its owner only) or a postgres:// or postgresql:// URL.
	Database string
	// MustExist refuses to create a missing SQLite file (ErrNoDatabase):
	// only serve and migrate make a new database.
	MustExist bool
	// Synchronous is SQLite's synchronous setting: "FULL" (default: an
	// acknowledged write survives power loss) or "NORMAL" (faster; a power
	// loss may roll back the last commits, never corrupts).
	Synchronous string
	// Exclusive is a server's open (§13): it takes an advisory lock on a
	// SQLite file, so a second server on the same database refuses to
	// start. Replicas on PostgreSQL share their database: each holds a
	// shared advisory lock on it while it serves, which Alone waits for.
	// Admin commands open without it.
	Exclusive bool
	// Alone refuses to open a database any server is serving: on SQLite
	// it is Exclusive; on PostgreSQL it takes the replicas' advisory lock
	// exclusively (palaver restore --mark, which must run before any
	// replica starts).
	Alone bool
	// Index runs the search indexer beside the writer (SQLite; a server's
	// open, and tests'): it fills the search index after the commits.
	// Admin commands open without it, so that they never hold the file's
	// write lock for the index while a server sends: what they write is
	// indexed by the server within a second, or when it next starts.
	Index bool
	// ReadConns is the size of the read pool (default 8).
	ReadConns int
	Logger    *slog.Logger
}

// ErrLocked is returned by Open when another process holds the exclusive
// lock.
var ErrLocked = errors.New("locked by another process")

// ErrNoDatabase is returned by Open with MustExist when the SQLite file
// does not exist.
var ErrNoDatabase = errors.New("no database")

// ErrClosed is returned by Update after Close.
var ErrClosed = errors.New("store is closed")

// DB is an open database. It implements hub.Store.
type DB struct {
	queries // reads, on the read pool

	dialect *dialect
	write   *sql.DB // SQLite: one connection, used only by the writer goroutine
	read    *sql.DB // PostgreSQL: the same pool as write
	wstmts  *stmtCache
	rstmts  *stmtCache
	views   *viewCache // SQLite: what the writer keeps of conversations (views.go)
	indexer *indexer   // SQLite: fills the search index after commits (indexer.go)
	unlock  func()
	release func() // PostgreSQL: ends the serving lock, before the pool closes
	log     *slog.Logger
	path    string // the SQLite file

	// commits and pages count the writer's commits and, on SQLite, the
	// pages they wrote to the WAL (Writes); indexCommits and indexPages
	// those of the search indexer's batches that committed alone
	// (IndexWrites). walPages is the write connection's count of pages at
	// the last commit (the writer's goroutine only).
	commits, pages           atomic.Int64
	indexCommits, indexPages atomic.Int64
	walPages                 int64

	mu     sync.RWMutex // guards closed and sending on ops
	closed bool
	ops    chan *op
	done   chan struct{} // closed when the writer goroutine has returned
}

// op is one Update waiting for the writer.
type op struct {
	ctx   context.Context
	fn    func(hub.Tx) error
	err   chan error
	index bool // the search indexer's: a batch of these alone is counted apart
}

// maxBatch caps how many Updates share one commit.
const maxBatch = 256

// Open opens (creating if needed) the database, applies pending migrations
// and starts the writer goroutine.
func Open(ctx context.Context, o Options) (*DB, error) { return open(ctx, o, 0) }

// open is Open with the migrations applied only through version through
// (every one when 0): a test makes a database as an older palaver left it.
func open(ctx context.Context, o Options, through int) (*DB, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ReadConns <= 0 {
		o.ReadConns = 8
	}
	db := &DB{log: o.Logger, ops: make(chan *op, maxBatch), done: make(chan struct{}), unlock: func() {}, release: func() {}}
	var err error
	fail := func(err error) (*DB, error) {
		db.closeConns()
		return nil, err
	}
	if IsPostgresURL(o.Database) {
		db.dialect = postgresDialect
		if db.write, err = openPostgres(ctx, o.Database); err != nil {
			return fail(err)
		}
		db.read = db.write
	} else {
		db.dialect, db.path, db.views = sqliteDialect, o.Database, &viewCache{}
		if err := prepareSQLiteFile(o.Database, o.MustExist); err != nil {
			return nil, err
		}
		if o.Exclusive || o.Alone {
			if db.unlock, err = lockFile(o.Database); err != nil {
				return nil, err
			}
		}
		if db.write, db.read, err = openSQLite(o.Database, o.Synchronous, o.ReadConns, o.MustExist); err != nil {
			return fail(err)
		}
	}
	if err := migrate(ctx, db.write, db.dialect, through); err != nil {
		return fail(err)
	}
	if db.dialect == postgresDialect && (o.Exclusive || o.Alone) {
		release, err := lockServing(ctx, db.write, o.Alone)
		if err != nil {
			return fail(err)
		}
		db.release = release
	}
	db.wstmts = newStmtCache(db.write, db.dialect, db.dialect.groupCommit)
	db.rstmts = db.wstmts
	if db.read != db.write {
		db.rstmts = newStmtCache(db.read, db.dialect, false)
	}
	db.queries = queries{q: prepared{cache: db.rstmts}, dialect: db.dialect}
	if db.dialect.groupCommit {
		go db.writer()
		if o.Index {
			db.indexer = newIndexer()
			go db.indexer.run(db)
		}
	} else {
		close(db.done)
	}
	return db, nil
}

// IsPostgresURL tells a PostgreSQL URL from a SQLite path.
func IsPostgresURL(database string) bool {
	return strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://")
}

func (db *DB) closeConns() {
	db.release()
	if db.wstmts != nil {
		db.wstmts.close()
	}
	if db.rstmts != nil && db.rstmts != db.wstmts {
		db.rstmts.close()
	}
	if db.write != nil {
		db.write.Close()
	}
	if db.read != nil && db.read != db.write {
		db.read.Close()
	}
	db.unlock()
}

// Close stops the search indexer (what it has not indexed yet, beyond a
// few batches, waits for the next start), waits for queued Updates to
// commit, then closes the database.
func (db *DB) Close() error {
	if db.indexer != nil {
		db.indexer.halt()
	}
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	if db.dialect == nil || db.dialect.groupCommit {
		close(db.ops)
	}
	db.mu.Unlock()
	<-db.done
	db.closeConns()
	return nil
}

// Update implements hub.Store: fn runs on the writer goroutine inside a
// BEGIN IMMEDIATE transaction shared with other queued Updates (each under
// its own savepoint, so one failing rolls back only its own writes), and
// Update returns after the commit. Once queued, an Update is carried out
// even if ctx ends meanwhile, unless it had not started yet.
//
// On PostgreSQL each Update is its own transaction on the pool; rows it
// changes are locked until it commits (a conversation's seq), and one that
// fails on a serialization conflict or deadlock is run again.
func (db *DB) Update(ctx context.Context, fn func(hub.Tx) error) error {
	if !db.dialect.groupCommit {
		db.mu.RLock()
		closed := db.closed
		db.mu.RUnlock()
		if closed {
			return ErrClosed
		}
		return db.updateDirect(ctx, fn)
	}
	return db.queue(ctx, fn, false)
}

// queue hands fn to the writer, as the search indexer's (index) or not,
// and waits for its commit.
func (db *DB) queue(ctx context.Context, fn func(hub.Tx) error, index bool) error {
	o := &op{ctx: ctx, fn: fn, err: make(chan error, 1), index: index}
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return ErrClosed
	}
	db.ops <- o
	db.mu.RUnlock()
	return <-o.err
}

// writer owns the write connection: it takes every queued op (up to
// maxBatch) and commits them together, so many concurrent sends share one
// fsync.
func (db *DB) writer() {
	defer close(db.done)
	for first := range db.ops {
		batch := []*op{first}
	drain:
		for len(batch) < maxBatch {
			select {
			case o, ok := <-db.ops:
				if !ok {
					break drain
				}
				batch = append(batch, o)
			default:
				break drain
			}
		}
		db.commit(batch)
		db.wstmts.prepareMissed(context.Background())
	}
}

func (db *DB) commit(batch []*op) {
	reply := func(errs []error) {
		for i, o := range batch {
			o.err <- errs[i]
		}
	}
	errs := make([]error, len(batch))
	all := func(err error) {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		reply(errs)
	}
	tx, err := db.write.BeginTx(context.Background(), nil)
	if err != nil {
		all(fmt.Errorf("begin: %w", err))
		return
	}
	// What the writer keeps stands on what this transaction reads and
	// writes: anything rolled back forgets it all, and so does a commit by
	// another connection since the last batch (begin, seeOthers).
	kept := false
	defer func() {
		if !kept {
			db.views.forget()
		}
	}()
	sent := false // an Update made a message sent: the indexer has work
	q := queries{q: prepared{cache: db.wstmts, tx: tx}, dialect: db.dialect, views: db.views, sent: &sent}
	if db.views != nil {
		db.views.begin()
	}
	single := len(batch) == 1
	for i, o := range batch {
		if err := o.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if single {
			errs[i] = o.fn(q)
			continue
		}
		if _, err := tx.Exec("SAVEPOINT op"); err != nil {
			tx.Rollback()
			all(fmt.Errorf("savepoint: %w", err))
			return
		}
		if errs[i] = o.fn(q); errs[i] != nil {
			if _, err := tx.Exec("ROLLBACK TO op"); err != nil {
				tx.Rollback()
				all(fmt.Errorf("rollback to savepoint: %w", err))
				return
			}
		}
		if _, err := tx.Exec("RELEASE op"); err != nil {
			tx.Rollback()
			all(fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if single && errs[0] != nil {
		tx.Rollback()
		reply(errs)
		return
	}
	if err := tx.Commit(); err != nil {
		err = fmt.Errorf("commit: %w", err)
		for i := range errs {
			errs[i] = err
		}
	} else {
		kept = !slices.ContainsFunc(errs, func(err error) bool { return err != nil })
		db.countCommit(!slices.ContainsFunc(batch, func(o *op) bool { return !o.index }))
		if sent {
			db.indexer.notify()
		}
	}
	reply(errs)
}

// Writes tells how many commits the writer made and, on SQLite, how many
// pages they wrote to the WAL (0 on PostgreSQL): the pages of a one-send
// commit are a send's write set (§17), which palaver bench reports. The
// search indexer's commits of its own are not among them (IndexWrites): it
// writes after the send's commit, not in it.
func (db *DB) Writes() (commits, pages int64) { return db.commits.Load(), db.pages.Load() }

// IndexWrites is Writes for the SQLite search indexer's commits of its
// own; one it shared with other writes is counted in Writes.
func (db *DB) IndexWrites() (commits, pages int64) {
	return db.indexCommits.Load(), db.indexPages.Load()
}

// updateDirect runs fn in its own transaction (PostgreSQL), again when the
// database reports a serialization failure or a deadlock.
func (db *DB) updateDirect(ctx context.Context, fn func(hub.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.updateOnce(ctx, fn)
		if err == nil || attempt == 3 || !db.dialect.retryable(err) {
			return err
		}
	}
}

func (db *DB) updateOnce(ctx context.Context, fn func(hub.Tx) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(queries{q: prepared{cache: db.wstmts, tx: tx}, dialect: db.dialect}); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	db.commits.Add(1)
	return nil
}

// migrate applies the pending numbered migrations in one transaction (under
// an advisory lock on PostgreSQL, so replicas starting together take turns)
// and creates the database's epoch on first use. A schema newer than this
// binary is refused. With through above 0 the migrations after it are
// left pending.
func migrate(ctx context.Context, write *sql.DB, d *dialect, through int) error {
	ms, err := migrations(d.name)
	if err != nil {
		return err
	}
	tx, err := write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if d.migrationLock != "" {
		if _, err := tx.ExecContext(ctx, d.migrationLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if latest := ms[len(ms)-1].version; current > latest {
		return fmt.Errorf("the database schema is version %d but this palaver knows only up to %d: upgrade palaver", current, latest)
	}
	for _, m := range ms {
		if m.version <= current || through > 0 && m.version > through {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
		}
		if step := d.migrationSteps[m.version]; step != nil {
			if err := step(ctx, tx); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), m.version, time.Now().UnixMilli()); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	if d.afterMigrate != nil {
		if err := d.afterMigrate(ctx, tx); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	var b [9]byte
	rand.Read(b[:])
	if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO meta (key, value) VALUES ('epoch', ?) ON CONFLICT (key) DO NOTHING`), hex.EncodeToString(b[:])); err != nil {
		return fmt.Errorf("migrate: epoch: %w", err)
	}
	return tx.Commit()
}
