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

// TestAgentGrantRequests: an agent's requests are listed whatever their
// status, oldest first, each with its contact's handle; the pending list
// keeps only those waiting.
func TestAgentGrantRequests(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		alice, bob := insertUser(t, db, "alice"), insertUser(t, db, "bob")
		var made []*hub.GrantRequest
		for i, agent := range []string{"agt_1", "agt_1", "agt_2", "agt_1"} {
			r := &hub.GrantRequest{ID: "gr_" + string(rune('a'+i)), AgentID: agent, OwnerID: alice.ID, ContactID: bob.ID,
				AllowHuman: true, Reason: "why", Status: hub.AskPending, CreatedAt: time.UnixMilli(int64(1000 * (i + 1))).UTC()}
			made = append(made, r)
			if err := db.Update(ctx, func(tx hub.Tx) error { return tx.InsertGrantRequest(ctx, r) }); err != nil {
				t.Fatal(err)
			}
		}
		decidedAt := time.UnixMilli(9000).UTC()
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.DecideGrantRequest(ctx, "gr_b", hub.GrantCancelled, decidedAt) }); err != nil {
			t.Fatal(err)
		}
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.DecideGrantRequest(ctx, "gr_b", hub.AskApproved, decidedAt) }); !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("deciding a cancelled request: %v, want ErrNoRows", err)
		}
		made[1].Status, made[1].DecidedAt = hub.GrantCancelled, decidedAt
		for _, r := range made {
			r.ContactHandle = "bob"
		}
		all, err := db.AgentGrantRequests(ctx, "agt_1")
		if diff := cmp.Diff([]*hub.GrantRequest{made[0], made[1], made[3]}, all); err != nil || diff != "" {
			t.Errorf("agt_1's requests: %v (-want +got):\n%s", err, diff)
		}
		pending, err := db.GrantRequests(ctx, "", "agt_1")
		if diff := cmp.Diff([]*hub.GrantRequest{made[0], made[3]}, pending); err != nil || diff != "" {
			t.Errorf("agt_1's pending requests: %v (-want +got):\n%s", err, diff)
		}
		one, err := db.GrantRequest(ctx, "gr_c")
		if diff := cmp.Diff(made[2], one); err != nil || diff != "" {
			t.Errorf("gr_c: %v (-want +got):\n%s", err, diff)
		}
	})
}
