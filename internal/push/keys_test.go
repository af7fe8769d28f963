package push_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// raced is a store whose transactions call read after reading the VAPID
// key pair and write before writing it, so a test can lay two replicas'
// EnsureKeys over each other.
type raced struct {
	push.Store
	read, write func()
}

func (r raced) Update(ctx context.Context, fn func(tx hub.Tx) error) error {
	return r.Store.Update(ctx, func(tx hub.Tx) error { return fn(racedTx{tx, r}) })
}

type racedTx struct {
	hub.Tx
	r raced
}

func (x racedTx) Meta(ctx context.Context, key string) (string, error) {
	v, err := x.Tx.Meta(ctx, key)
	if key == push.MetaVAPID {
		x.r.read()
	}
	return v, err
}

func (x racedTx) SetMeta(ctx context.Context, key, value string) error {
	x.r.write()
	return x.Tx.SetMeta(ctx, key, value)
}

func (x racedTx) InitMeta(ctx context.Context, key, value string) error {
	x.r.write()
	return x.Tx.InitMeta(ctx, key, value)
}

// TestEnsureKeysRace: two replicas starting together on a new database,
// each on its own store handle, end up with one VAPID key pair — the one
// the first to finish already reads — however their EnsureKeys
// interleave. On PostgreSQL both read that there is none before either
// writes, and the second writes only after the first has finished and
// read its key; on SQLite a transaction that writes waits for the other's
// to end, and they simply run at once.
func TestEnsureKeysRace(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			database := filepath.Join(t.TempDir(), "palaver.db")
			if dialect == "postgres" {
				database = storetest.Schema(t)
			}
			bothRead, firstDone := sync.WaitGroup{}, make(chan struct{})
			bothRead.Add(2)
			wait := func(what string, done func()) {
				c := make(chan struct{})
				go func() { done(); close(c) }()
				select {
				case <-c:
				case <-time.After(30 * time.Second):
					t.Errorf("waited too long for %s", what)
				}
			}
			var ks [2]*push.Notices
			for i := range ks {
				db, err := store.Open(ctx, store.Options{Database: database})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				h, err := hub.New(ctx, hub.Options{Store: db, Waker: notify.NewLocal(), Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				s := raced{Store: db, read: func() {}, write: func() {}}
				if dialect == "postgres" {
					s.read = func() { bothRead.Done(); wait("the other replica to read", bothRead.Wait) }
					if i == 1 {
						s.write = func() { wait("the first replica to finish", func() { <-firstDone }) }
					}
				}
				ks[i] = push.NewNotices(push.NoticesOptions{Hub: h, Store: s, Logger: slog.New(slog.DiscardHandler)})
			}
			var seen [2]string
			var wg sync.WaitGroup
			for i, k := range ks {
				wg.Go(func() {
					err := k.EnsureKeys(ctx)
					if err == nil {
						seen[i], err = k.VAPIDPublicKey(ctx)
					}
					if err != nil {
						t.Error(err)
					}
					if i == 0 {
						close(firstDone)
					}
				})
			}
			wg.Wait()
			for i, k := range ks {
				now, err := k.VAPIDPublicKey(ctx)
				if err != nil || now == "" || now != seen[0] || seen[i] != seen[0] {
					t.Errorf("replica %d read %q once its keys were made and %q now; the first read %q", i, seen[i], now, seen[0])
				}
			}
		})
	}
}
