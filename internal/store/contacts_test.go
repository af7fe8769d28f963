package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestContactMessage: a contact request's message is kept, replaced with
// the row, and read by pair, by id and in a person's list.
func TestContactMessage(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		alice, bob := insertUser(t, db, "alice"), insertUser(t, db, "bob")
		at := time.UnixMilli(2000).UTC()
		c := &hub.Contact{ID: "ct_1", UserA: bob.ID, UserB: alice.ID, Status: hub.ContactPending, RequestedBy: bob.ID, RequestedAt: at, Message: "hello, alice ✓"}
		put := func(c *hub.Contact) {
			t.Helper()
			if err := db.Update(ctx, func(tx hub.Tx) error { return tx.PutContact(ctx, c) }); err != nil {
				t.Fatal(err)
			}
		}
		put(c)
		want := *c // the pair is stored in id order
		want.UserA, want.UserB = alice.ID, bob.ID
		byPair, err := db.Contact(ctx, bob.ID, alice.ID)
		if diff := cmp.Diff(&want, byPair); err != nil || diff != "" {
			t.Errorf("by pair: %v (-want +got):\n%s", err, diff)
		}
		byID, err := db.ContactByID(ctx, "ct_1")
		if diff := cmp.Diff(&want, byID); err != nil || diff != "" {
			t.Errorf("by id: %v (-want +got):\n%s", err, diff)
		}
		c.Status, c.Message, c.DecidedBy, c.DecidedAt = hub.ContactCancelled, "", bob.ID, at.Add(time.Second)
		put(c)
		list, err := db.ContactsOf(ctx, alice.ID)
		if err != nil || len(list) != 1 || list[0].Message != "" || list[0].Status != hub.ContactCancelled {
			t.Errorf("after the update: %+v, %v; want the message gone with it", list, err)
		}
	})
}
