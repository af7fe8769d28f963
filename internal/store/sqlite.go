package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/hub"
)

var sqliteDialect = &dialect{
	name:           "sqlite",
	groupCommit:    true,
	prepare:        true,
	consecutiveIDs: true,
	rowidEvents:    true,
	// The largest id is the highest ever given: pruning keeps the newest
	// event's row (rowidEvents). One writer commits in order, so ids are
	// commit-ordered without a lock.
	latestEvent: `SELECT 0, 0, (SELECT MAX(id) FROM events)`,
	eventHeld:   `0`,
	retryable:   func(error) bool { return false },
	search:      sqliteSearch,
}

// palaver_search_text(text) is hub.SearchText in SQL, for the search index
// (migration 0018 and the indexer, indexer.go): the hub's words of a text, so that
// SQLite indexes what the hub's queries look for. The driver's functions
// are registered for every connection it opens, once per process.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("palaver_search_text", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return fulltext.Text(v), nil
		case []byte:
			return fulltext.Text(string(v)), nil
		}
		return "", nil
	})
}

var sqliteSearch = searchDialect{
	inner:  `s.rowid AS r, bm25(message_search, 0.0, 2.0, 1.0) AS score FROM message_search s JOIN messages m ON m.rowid = s.rowid`,
	where:  `message_search MATCH ?`,
	newest: `s.rowid DESC`,
	outer:  `JOIN messages m ON m.rowid = h.r`,
	// bm25 is smaller for better matches; the conversation column counts
	// for nothing, a summary's words twice a body's.
	rank:  `h.score`,
	match: fts5Match,
	// FTS5 finds a word among a few conversations' messages by merging
	// their terms' lists, far faster than looking at each match's row.
	fewConversations: 50,
}

// prepareSQLiteFile creates a missing database file empty and readable by
// its owner only, before SQLite opens it: SQLite would make it 0644, and it
// gives the -wal and -shm files beside it the database file's permissions.
// With mustExist a missing file is ErrNoDatabase instead.
func prepareSQLiteFile(path string, mustExist bool) error {
	if path == "" || strings.ContainsAny(path, "?#") {
		return fmt.Errorf("database path %q: give a file path without ? or #", path)
	}
	if mustExist {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			return fmt.Errorf("%w at %s", ErrNoDatabase, path)
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil { // err names the path
		return fmt.Errorf("cannot make the database: %w; check that its folder exists and that this user may write there", err)
	}
	return f.Close()
}

// openSQLite opens the write connection and the read pool on one file, in
// WAL mode. Every writing connection begins with BEGIN IMMEDIATE: a deferred
// transaction that reads then writes fails at once with SQLITE_BUSY when
// another writer holds the lock, whatever the busy timeout.
func openSQLite(path, synchronous string, readConns int, mustExist bool) (write, read *sql.DB, err error) {
	switch strings.ToUpper(synchronous) {
	case "":
		synchronous = "FULL"
	case "FULL", "NORMAL":
		synchronous = strings.ToUpper(synchronous)
	default:
		return nil, nil, fmt.Errorf("synchronous must be FULL or NORMAL, not %q", synchronous)
	}
	common := url.Values{}
	if mustExist {
		// SQLite's own: open read-write, never create.
		common.Set("mode", "rw")
	}
	common.Add("_pragma", "busy_timeout(10000)")
	common.Add("_pragma", "foreign_keys(1)")
	common.Add("_pragma", "temp_store(MEMORY)")

	w := url.Values{"_txlock": {"immediate"}}
	for k, v := range common {
		w[k] = append(w[k], v...)
	}
	// Page caches are per connection and outside the Go heap: the writer's
	// 32 MiB and 8 MiB for each reader bound them (readers also have the
	// operating system's cache beneath them) to 32 + 8 × ReadConns MiB.
	w.Add("_pragma", "cache_size(-32768)")
	w.Add("_pragma", "journal_mode(WAL)")
	w.Add("_pragma", "synchronous("+synchronous+")")
	write, err = sql.Open("sqlite", "file:"+path+"?"+w.Encode())
	if err != nil {
		return nil, nil, err
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	// Touch the write connection first so the file exists and is in WAL mode
	// before readers open it.
	if err := write.Ping(); err != nil {
		write.Close()
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}

	r := url.Values{}
	for k, v := range common {
		r[k] = append(r[k], v...)
	}
	r.Add("_pragma", "query_only(1)")
	r.Add("_pragma", "cache_size(-8192)")
	read, err = sql.Open("sqlite", "file:"+path+"?"+r.Encode())
	if err != nil {
		write.Close()
		return nil, nil, err
	}
	read.SetMaxOpenConns(readConns)
	read.SetMaxIdleConns(readConns)
	read.SetConnMaxIdleTime(0)
	return write, read, nil
}

// countCommit counts a commit of the writer, the search indexer's alone
// or not, with the pages it wrote: how far the pages its connection has
// written (SQLite's SQLITE_DBSTATUS_CACHE_WRITE: in WAL mode, the pages
// written to the WAL) moved since the last commit.
func (db *DB) countCommit(index bool) {
	commits, pages := &db.commits, &db.pages
	if index {
		commits, pages = &db.indexCommits, &db.indexPages
	}
	commits.Add(1)
	conn, err := db.write.Conn(context.Background())
	if err != nil {
		return
	}
	defer conn.Close()
	conn.Raw(func(dc any) error {
		if st, ok := dc.(sqlite.DBStatus); ok {
			if n, _, err := st.Status(sqlite.DBStatusCacheWrite, false); err == nil {
				if moved := int64(n) - db.walPages; moved > 0 { // a new connection starts again from 0
					pages.Add(moved)
				}
				db.walPages = int64(n)
			}
		}
		return nil
	})
}

// sqliteDuplicate reports SQLite's unique-constraint refusal.
func sqliteDuplicate(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return true
		}
	}
	return false
}

// dbErr turns "no rows" and either dialect's unique violations into hub's
// sentinel errors; everything else is wrapped with the operation's name.
func dbErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return hub.ErrNoRows
	case sqliteDuplicate(err) || postgresDuplicate(err):
		return fmt.Errorf("%s: %w", op, hub.ErrDuplicate)
	}
	return fmt.Errorf("%s: %w", op, err)
}
