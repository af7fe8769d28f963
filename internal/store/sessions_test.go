package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestHold: an agent's hold on one conversation is read with its session's
// last sighting (zero for a session never seen); another conversation's,
// or another agent's, is not it.
func TestHold(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		at := time.UnixMilli(5000).UTC()
		u := insertUser(t, db, "alice")
		if err := db.Update(ctx, func(tx hub.Tx) error {
			a := &hub.Agent{ID: "agt_1", OwnerID: u.ID, OwnerHandle: u.Handle, Slug: "planner", Mode: hub.ModeActive, CreatedAt: at}
			if err := tx.InsertAgent(ctx, a); err != nil {
				return err
			}
			if err := tx.UpsertInstance(ctx, "agt_1", "desk", "", at.Add(time.Minute)); err != nil {
				return err
			}
			if err := tx.SetHold(ctx, "agt_1", "conv_1", "desk", at); err != nil {
				return err
			}
			return tx.SetHold(ctx, "agt_1", "conv_2", "phone", at)
		}); err != nil {
			t.Fatal(err)
		}
		got, err := db.Hold(ctx, "agt_1", "conv_1")
		if diff := cmp.Diff(hub.Hold{ConversationID: "conv_1", Instance: "desk", Since: at, LastSeen: at.Add(time.Minute)}, got); err != nil || diff != "" {
			t.Errorf("the hold on conv_1: %v (-want +got):\n%s", err, diff)
		}
		got, err = db.Hold(ctx, "agt_1", "conv_2")
		if diff := cmp.Diff(hub.Hold{ConversationID: "conv_2", Instance: "phone", Since: at}, got); err != nil || diff != "" {
			t.Errorf("the hold of a session never seen: %v (-want +got):\n%s", err, diff)
		}
		for _, k := range [][2]string{{"agt_1", "conv_3"}, {"agt_2", "conv_1"}} {
			if got, err := db.Hold(ctx, k[0], k[1]); !errors.Is(err, hub.ErrNoRows) {
				t.Errorf("the hold of %s on %s: %+v, %v; want none", k[0], k[1], got, err)
			}
		}
	})
}
