package bench

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultPostgres is the database W7 uses unless told otherwise: a local
// PostgreSQL as in CONTRIBUTING.md.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test"

// replicaWorkloads is W7: two `palaver serve` replicas on one PostgreSQL
// database, in a fresh schema of o.Postgres dropped at the end. Waiters
// parked on one replica hear senders on the other (§13); then 32 senders
// spread over both. W7 is recorded as skipped when PostgreSQL cannot be
// reached.
func (r *Report) replicaWorkloads(ctx context.Context, o Options, d time.Duration) {
	// The "pgx" driver is registered by package store.
	admin, err := sql.Open("pgx", o.Postgres)
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err = admin.PingContext(pctx)
		cancel()
	}
	if err != nil {
		r.skip(o, fmt.Sprintf("W7 PostgreSQL replicas: skipped, no PostgreSQL at %s (--postgres URL): %v", redact(o.Postgres), strings.Join(strings.Fields(err.Error()), " ")))
		if admin != nil {
			admin.Close()
		}
		return
	}
	defer admin.Close()
	schema := fmt.Sprintf("bench_%s_%d", time.Now().UTC().Format("20060102_150405"), os.Getpid())
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		r.fail(o, "W7", err)
		return
	}
	defer admin.ExecContext(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE")
	fmt.Fprintf(o.Progress, "W7: two replicas on %s, schema %s\n", redact(o.Postgres), schema)
	s, err := spawn(ctx, o, withSearchPath(o.Postgres, schema), 2)
	if err != nil {
		r.fail(o, "W7", err)
		return
	}
	defer s.stop()
	r.step(ctx, o, s, "W7 wake", func() ([]WorkloadStats, error) {
		waiters, err := s.agents(ctx, "w7-wake", "waiter", 16)
		if err != nil {
			return nil, err
		}
		senders, err := s.agents(ctx, "w7-wake", "sender", 16)
		if err != nil {
			return nil, err
		}
		for i := range waiters {
			waiters[i].url, senders[i].url = s.urls[1], s.urls[0]
		}
		st := wakePairs(ctx, s, o, "W7 cross-replica send→wake, 16 pairs", waiters, senders, d)
		st.Detail = "PostgreSQL, waiters on one replica, senders on the other; send start → waiter response"
		return []WorkloadStats{st}, nil
	})
	r.step(ctx, o, s, "W7 send", func() ([]WorkloadStats, error) {
		senders, err := s.senders(ctx, "w7-send", 32)
		if err != nil {
			return nil, err
		}
		st := closedLoop(ctx, s, o, "W7 send, 32 senders over 2 replicas", senders, d)
		st.Detail = "PostgreSQL, " + st.Detail + "; server CPU and RSS of both replicas"
		return []WorkloadStats{st}, nil
	})
}

// withSearchPath is a PostgreSQL URL whose connections use schema.
func withSearchPath(database, schema string) string {
	sep := "?"
	if strings.Contains(database, "?") {
		sep = "&"
	}
	return database + sep + "search_path=" + schema
}

// redact hides a URL's password.
func redact(database string) string {
	u, err := url.Parse(database)
	if err != nil {
		return "(an unreadable URL)"
	}
	return u.Redacted()
}
