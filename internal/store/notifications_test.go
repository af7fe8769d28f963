package store_test

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestNotifyKindsMovedToTargets: migration 0029 gives each device and
// topic the kinds its person had chosen for all of them — none chosen
// stays none — or, for a person who had chosen nothing, every kind but
// every message; quiet hours stay the person's. On both stores.
func TestNotifyKindsMovedToTargets(t *testing.T) {
	for _, c := range []struct{ dialect, driver, undo string }{
		{"sqlite", "sqlite", `ALTER TABLE notify_targets DROP COLUMN kinds; ALTER TABLE notify_prefs ADD COLUMN kinds TEXT NOT NULL DEFAULT ''`},
		{"postgres", "pgx", `ALTER TABLE notify_targets DROP COLUMN kinds; ALTER TABLE notify_prefs ADD COLUMN kinds TEXT NOT NULL DEFAULT ''`},
	} {
		t.Run(c.dialect, func(t *testing.T) {
			database, dsn := filepath.Join(t.TempDir(), "palaver.db"), ""
			if c.dialect == "postgres" {
				database = storetest.Schema(t)
				dsn = database
			} else {
				dsn = "file:" + database
			}
			db, err := store.Open(ctx, store.Options{Database: database})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			// alice chose questions and messages, bob nothing at all,
			// carol never chose: two targets each.
			err = db.Update(ctx, func(tx hub.Tx) error {
				for _, who := range []string{"alice", "bob", "carol"} {
					if err := tx.InsertUser(ctx, &hub.User{ID: "usr_" + who, Handle: who, CreatedAt: now}); err != nil {
						return err
					}
					for _, n := range []string{"1", "2"} {
						if err := tx.InsertNotifyTarget(ctx, &hub.NotifyTarget{ID: "nt_" + who + n, UserID: "usr_" + who, Kind: hub.TargetNtfy,
							URL: "https://ntfy.example/" + who + n, CreatedAt: now}); err != nil {
							return err
						}
					}
				}
				return nil
			})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			raw, err := sql.Open(c.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{c.undo, `DELETE FROM schema_migrations WHERE version >= 29`,
				`INSERT INTO notify_prefs (user_id, kinds, quiet_from, quiet_to, quiet_urgent) VALUES ('usr_alice', 'question,message', 1320, 420, 1)`,
				`INSERT INTO notify_prefs (user_id, kinds, quiet_from, quiet_to, quiet_urgent) VALUES ('usr_bob', '', 0, 0, 0)`} {
				if _, err := raw.ExecContext(ctx, q); err != nil {
					raw.Close()
					t.Fatalf("%s: %v", q, err)
				}
			}
			raw.Close()

			db, err = store.Open(ctx, store.Options{Database: database})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for who, want := range map[string][]string{"alice": {hub.NotifyQuestion, hub.NotifyMessage}, "bob": {}, "carol": hub.DefaultNotifyKinds} {
				ts, err := db.NotifyTargets(ctx, "usr_"+who)
				if err != nil || len(ts) != 2 {
					t.Fatalf("%s's targets: %v, %v", who, ts, err)
				}
				for _, tg := range ts {
					if !slices.Equal(tg.Kinds, want) {
						t.Errorf("%s after the migration hears of %v; want %v", tg.ID, tg.Kinds, want)
					}
				}
			}
			if p, err := db.NotifyPrefs(ctx, "usr_alice"); err != nil || p != (hub.NotifyPrefs{QuietFrom: 22 * 60, QuietTo: 7 * 60, QuietUrgent: true}) {
				t.Errorf("alice's quiet hours after the migration: %+v, %v", p, err)
			}
			if err := db.Update(ctx, func(tx hub.Tx) error { return tx.SetNotifyTargetKinds(ctx, "nt_alice1", []string{hub.NotifyHeld}) }); err != nil {
				t.Fatal(err)
			}
			if tg, err := db.NotifyTarget(ctx, "nt_alice1"); err != nil || !slices.Equal(tg.Kinds, []string{hub.NotifyHeld}) {
				t.Errorf("set kinds: %+v, %v", tg, err)
			}
		})
	}
}
