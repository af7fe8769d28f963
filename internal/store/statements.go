package store

// The shared statement machinery of every aggregate file: prepared
// statements cached per handle, times as Unix milliseconds, and the
// helpers that run a statement and scan its rows.

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queries implements hub.Tx over a querier: on the read pool it serves
// hub.Reader; inside the writer's transaction, all of hub.Tx.
type queries struct {
	q       querier
	dialect *dialect
	views   *viewCache // the SQLite writer's; nil elsewhere
	// sent is set by a write that makes a message sent, in the SQLite
	// writer's transaction (the indexer's cue); nil elsewhere.
	sent *bool
}

// stmtCache prepares each distinct query once per database handle, so the
// hot paths skip SQLite's parser (a third of a send's CPU without it).
// database/sql keeps one prepared statement per connection underneath. On
// the write handle a statement cannot be prepared while the writer's
// transaction holds the one connection, so a miss there runs unprepared
// once and is prepared after the commit (prepareMissed).
type stmtCache struct {
	db       *sql.DB
	dialect  *dialect
	deferred bool // the write handle: prepare misses later
	mu       sync.Mutex
	stmts    map[string]*sql.Stmt
	missed   map[string]bool
}

func newStmtCache(db *sql.DB, d *dialect, deferred bool) *stmtCache {
	return &stmtCache{db: db, dialect: d, deferred: deferred, stmts: map[string]*sql.Stmt{}, missed: map[string]bool{}}
}

// get returns the query's statement, or nil when it is not prepared yet and
// preparation is deferred.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if !c.dialect.prepare {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[query]; ok {
		return s, nil
	}
	if c.deferred {
		c.missed[query] = true
		return nil, nil
	}
	s, err := c.db.PrepareContext(ctx, c.dialect.rebind(query))
	if err != nil {
		return nil, err
	}
	c.stmts[query] = s
	return s, nil
}

// prepareMissed prepares the queries that ran unprepared; called by the
// writer while it holds no transaction.
func (c *stmtCache) prepareMissed(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q := range c.missed {
		if s, err := c.db.PrepareContext(ctx, c.dialect.rebind(q)); err == nil {
			c.stmts[q] = s
		}
		delete(c.missed, q)
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.stmts {
		s.Close()
	}
	c.stmts = nil
}

// prepared is a querier running queries as cached prepared statements, on
// the pool or, when tx is set, inside that transaction.
type prepared struct {
	cache *stmtCache
	tx    *sql.Tx
}

// plain is the querier for a query without a prepared statement.
func (p prepared) plain() querier {
	if p.tx != nil {
		return p.tx
	}
	return p.cache.db
}

func (p prepared) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s, err := p.cache.get(ctx, query)
	if s == nil || p.tx == nil {
		return s, err
	}
	return p.tx.StmtContext(ctx, s), nil
}

func (p prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := p.stmt(ctx, query)
	if s == nil || err != nil {
		return p.plain().ExecContext(ctx, p.cache.dialect.rebind(query), args...)
	}
	return s.ExecContext(ctx, args...)
}

func (p prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := p.stmt(ctx, query)
	if s == nil || err != nil {
		return p.plain().QueryContext(ctx, p.cache.dialect.rebind(query), args...)
	}
	return s.QueryContext(ctx, args...)
}

func (p prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := p.stmt(ctx, query)
	if s == nil || err != nil {
		return p.plain().QueryRowContext(ctx, p.cache.dialect.rebind(query), args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// ms turns a time into Unix milliseconds, the zero time into NULL.
func ms(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// fromMS turns stored Unix milliseconds back into a UTC time.
func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// since is a time as stored, 0 for the zero time ("from the beginning").
func since(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func (d queries) exec(ctx context.Context, op, query string, args ...any) error {
	_, err := d.q.ExecContext(ctx, query, args...)
	return dbErr(op, err)
}

// execOne runs a statement that must change exactly one row.
func (d queries) execOne(ctx context.Context, op, query string, args ...any) error {
	res, err := d.q.ExecContext(ctx, query, args...)
	if err != nil {
		return dbErr(op, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return dbErr(op, err)
	} else if n == 0 {
		return hub.ErrNoRows
	}
	return nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// queryAll runs a query and scans every row with scan.
func queryAll[T any](ctx context.Context, q querier, op string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, dbErr(op, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, dbErr(op, err)
		}
		out = append(out, v)
	}
	return out, dbErr(op, rows.Err())
}

// rowsPerInsert bounds the rows of one multi-row INSERT, and so the
// distinct statements the cache holds for it.
const rowsPerInsert = 32

// valueRows is the VALUES list of n rows of k placeholders: (?, ?), (?, ?).
func valueRows(n, k int) string {
	row := "(" + strings.Repeat("?, ", k-1) + "?)"
	return strings.Repeat(row+", ", n-1) + row
}
