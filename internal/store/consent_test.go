package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestDeleteInboundAsk: an inbound ask is dropped by its id, by pair and
// from the person's list, leaving the others; dropping one that is gone
// changes nothing.
func TestDeleteInboundAsk(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		alice, bob := insertUser(t, db, "alice"), insertUser(t, db, "bob")
		at := time.UnixMilli(2000).UTC()
		asks := []*hub.InboundAsk{
			{ID: "in_1", AgentID: "agt_helper", UserID: alice.ID, Handles: []string{"alice"}, Status: hub.AskApproved, CreatedAt: at, DecidedAt: at},
			{ID: "in_2", AgentID: "agt_scout", UserID: alice.ID, Handles: []string{"alice/planner"}, Status: hub.AskPending, CreatedAt: at.Add(time.Second)},
			{ID: "in_3", AgentID: "agt_helper", UserID: bob.ID, Handles: []string{"bob"}, Status: hub.AskPending, CreatedAt: at},
		}
		if err := db.Update(ctx, func(tx hub.Tx) error {
			for _, a := range asks {
				if err := tx.PutInboundAsk(ctx, a); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := db.Update(ctx, func(tx hub.Tx) error { return tx.DeleteInboundAsk(ctx, "in_1") }); err != nil {
				t.Fatal(err)
			}
		}
		if a, err := db.InboundAsk(ctx, "agt_helper", alice.ID); !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("by pair once dropped: %+v, %v", a, err)
		}
		if a, err := db.InboundAskByID(ctx, "in_1"); !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("by id once dropped: %+v, %v", a, err)
		}
		left, err := db.InboundAsks(ctx, alice.ID, false)
		if err != nil || len(left) != 1 || left[0].ID != "in_2" {
			t.Errorf("alice's asks once in_1 is dropped: %+v, %v; want in_2 alone", left, err)
		}
		if a, err := db.InboundAsk(ctx, "agt_helper", bob.ID); err != nil || a.ID != "in_3" {
			t.Errorf("the helper's ask of bob: %+v, %v; want it kept", a, err)
		}
	})
}
