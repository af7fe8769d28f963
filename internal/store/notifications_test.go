package store_test

import (
	"fmt"
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
	// As palaver at migration 0028 stored them: alice chose questions and
	// messages, bob nothing at all, carol never chose; two targets each.
	var rows []string
	now := time.Now().UnixMilli()
	for _, who := range []string{"alice", "bob", "carol"} {
		rows = append(rows, fmt.Sprintf(`INSERT INTO users (id, handle, created_at) VALUES ('usr_%s', '%[1]s', %d)`, who, now))
		for _, n := range []string{"1", "2"} {
			rows = append(rows, fmt.Sprintf(`INSERT INTO notify_targets (id, user_id, kind, url, created_at)
				VALUES ('nt_%s%s', 'usr_%[1]s', 'ntfy', 'https://ntfy.example/%[1]s%[2]s', %d)`, who, n, now))
		}
	}
	rows = append(rows,
		`INSERT INTO notify_prefs (user_id, kinds, quiet_from, quiet_to, quiet_urgent) VALUES ('usr_alice', 'question,message', 1320, 420, 1)`,
		`INSERT INTO notify_prefs (user_id, kinds, quiet_from, quiet_to, quiet_urgent) VALUES ('usr_bob', '', 0, 0, 0)`)
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			database := filepath.Join(t.TempDir(), "palaver.db")
			if dialect == "postgres" {
				database = storetest.Schema(t)
			}
			openThrough(t, database, 28, rows...).Close()

			db, err := store.Open(ctx, store.Options{Database: database})
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
