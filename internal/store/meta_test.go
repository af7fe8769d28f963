package store_test

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestInitMetaFirstWins: of writers racing to set a meta key on separate
// handles of one database, the first write is kept and every one reads
// it; a key with a value keeps it.
func TestInitMetaFirstWins(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			database := filepath.Join(t.TempDir(), "palaver.db")
			if dialect == "postgres" {
				database = storetest.Schema(t)
			}
			var dbs []*store.DB
			for range 4 {
				db, err := store.Open(ctx, store.Options{Database: database})
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				dbs = append(dbs, db)
			}
			var wg sync.WaitGroup
			for i, db := range dbs {
				wg.Go(func() {
					if err := db.Update(ctx, func(tx hub.Tx) error { return tx.InitMeta(ctx, "k", strings.Repeat("v", i+1)) }); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			first, _ := dbs[0].Meta(ctx, "k")
			for _, db := range dbs {
				if v, err := db.Meta(ctx, "k"); err != nil || v == "" || v != first {
					t.Errorf("read %q, %v; another handle read %q", v, err, first)
				}
			}
		})
	}
}
