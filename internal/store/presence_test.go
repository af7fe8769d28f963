package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestListeners: a replica's row of a session's listening replaces its
// row before; rows are read for the principals asked about that end
// after since; DeleteListeners drops those that ended before a time.
func TestListeners(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		at := func(s int) time.Time { return time.UnixMilli(int64(s) * 1000).UTC() }
		put := func(rows ...hub.Listener) {
			t.Helper()
			if err := db.Update(ctx, func(tx hub.Tx) error {
				for _, r := range rows {
					if err := tx.PutListener(ctx, &r); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		a := hub.Listener{PrincipalID: "agt_1", Instance: "desk", Replica: "rep_a", Since: at(10), Until: at(100)}
		b := hub.Listener{PrincipalID: "agt_1", Instance: "desk", Replica: "rep_b", Since: at(20), Until: at(30)}
		other := hub.Listener{PrincipalID: "agt_2", Instance: "", Replica: "rep_a", Since: at(10), Until: at(200)}
		put(a, b, other)
		a.Until = at(150) // renewed
		put(a)
		got, err := db.Listeners(ctx, []string{"agt_1"}, at(25))
		if diff := cmp.Diff([]hub.Listener{a, b}, got); err != nil || diff != "" {
			t.Errorf("agt_1's rows ending after 25 s: %v (-want +got):\n%s", err, diff)
		}
		got, err = db.Listeners(ctx, []string{"agt_1", "agt_2"}, at(30))
		if diff := cmp.Diff([]hub.Listener{a, other}, got); err != nil || diff != "" {
			t.Errorf("rows ending after 30 s: %v (-want +got):\n%s", err, diff)
		}
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.DeleteListeners(ctx, at(160)) }); err != nil {
			t.Fatal(err)
		}
		got, err = db.Listeners(ctx, []string{"agt_1", "agt_2"}, time.Time{})
		if diff := cmp.Diff([]hub.Listener{other}, got); err != nil || diff != "" {
			t.Errorf("rows after deleting those ended before 160 s: %v (-want +got):\n%s", err, diff)
		}
	})
}

// TestSightings: an agent's named sessions with their last sightings, and
// the latest use of any of its tokens; a token never used counts for
// nothing, and another agent's are not its.
func TestSightings(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		at := func(s int) time.Time { return time.UnixMilli(int64(s) * 1000).UTC() }
		u := insertUser(t, db, "alice")
		if err := db.Update(ctx, func(tx hub.Tx) error {
			for _, slug := range []string{"planner", "reviewer", "idle"} {
				if err := tx.InsertAgent(ctx, &hub.Agent{ID: "agt_" + slug, OwnerID: u.ID, OwnerHandle: u.Handle, Slug: slug, Mode: hub.ModeActive, CreatedAt: at(1)}); err != nil {
					return err
				}
			}
			for _, tok := range []*hub.Token{
				{ID: "tok_1", Hash: []byte("1"), UserID: u.ID, AgentID: "agt_planner", Scopes: []string{hub.ScopeRead}, CreatedAt: at(1), LastUsedAt: at(40)},
				{ID: "tok_2", Hash: []byte("2"), UserID: u.ID, AgentID: "agt_planner", Scopes: []string{hub.ScopeRead}, CreatedAt: at(1), LastUsedAt: at(70)},
				{ID: "tok_3", Hash: []byte("3"), UserID: u.ID, AgentID: "agt_planner", Scopes: []string{hub.ScopeRead}, CreatedAt: at(1)},
				{ID: "tok_4", Hash: []byte("4"), UserID: u.ID, AgentID: "agt_reviewer", Scopes: []string{hub.ScopeRead}, CreatedAt: at(1), LastUsedAt: at(90)},
				{ID: "tok_5", Hash: []byte("5"), UserID: u.ID, AgentID: "agt_idle", Scopes: []string{hub.ScopeRead}, CreatedAt: at(1)},
			} {
				if err := tx.InsertToken(ctx, tok); err != nil {
					return err
				}
				if !tok.LastUsedAt.IsZero() {
					if err := tx.TouchToken(ctx, tok.ID, tok.LastUsedAt); err != nil {
						return err
					}
				}
			}
			if err := tx.UpsertInstance(ctx, "agt_planner", "desk", "", at(50)); err != nil {
				return err
			}
			return tx.UpsertInstance(ctx, "agt_planner", "phone", "", at(60))
		}); err != nil {
			t.Fatal(err)
		}
		got, err := db.Sightings(ctx, []string{"agt_planner", "agt_idle"})
		want := []hub.Sighting{{AgentID: "agt_planner", LastSeen: at(70)}, {AgentID: "agt_planner", Instance: "desk", LastSeen: at(50)},
			{AgentID: "agt_planner", Instance: "phone", LastSeen: at(60)}}
		if diff := cmp.Diff(want, got); err != nil || diff != "" {
			t.Errorf("sightings: %v (-want +got):\n%s", err, diff)
		}
	})
}
