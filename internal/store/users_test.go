package store_test

import (
	"errors"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestSetUserName: a person's name is stored; an unknown person is
// ErrNoRows.
func TestSetUserName(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		alice := insertUser(t, db, "alice")
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.SetUserName(ctx, alice.ID, "Alice Ŝ") }); err != nil {
			t.Fatal(err)
		}
		if u, err := db.UserByID(ctx, alice.ID); err != nil || u.Name != "Alice Ŝ" {
			t.Errorf("alice: %+v, %v", u, err)
		}
		err := db.Update(ctx, func(tx hub.Tx) error { return tx.SetUserName(ctx, "usr_nobody", "x") })
		if !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("an unknown person: %v, want ErrNoRows", err)
		}
	})
}
