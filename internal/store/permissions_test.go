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

// TestPermissions: a permission request is read back whole with its
// agent's handle; the owner's pending ones oldest first; ending one
// records its status, who and when, and only once; the ended ones
// (expired, withdrawn) since a time, latest first.
func TestPermissions(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		at := func(s int) time.Time { return time.UnixMilli(int64(s) * 1000).UTC() }
		u := insertUser(t, db, "alice")
		ps := []*hub.Permission{
			{ID: "perm_1", AgentID: "agt_1", OwnerID: u.ID, Instance: "desk", RequestID: "abcde", ToolName: "Bash",
				Description: "List files", InputPreview: `{"command":"ls"}`, Status: hub.PermissionPending, CreatedAt: at(10)},
			{ID: "perm_2", AgentID: "agt_1", OwnerID: u.ID, RequestID: "fghij", ToolName: "Write", Status: hub.PermissionPending, CreatedAt: at(20)},
			{ID: "perm_3", AgentID: "agt_1", OwnerID: u.ID, RequestID: "kmnop", ToolName: "Edit", Status: hub.PermissionPending, CreatedAt: at(30)},
		}
		if err := db.Update(ctx, func(tx hub.Tx) error {
			if err := tx.InsertAgent(ctx, &hub.Agent{ID: "agt_1", OwnerID: u.ID, OwnerHandle: u.Handle, Slug: "planner", Mode: hub.ModeActive, CreatedAt: at(1)}); err != nil {
				return err
			}
			for _, p := range ps {
				if err := tx.InsertPermission(ctx, p); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			p.AgentHandle = "alice/planner"
		}
		got, err := db.Permission(ctx, "perm_1")
		if diff := cmp.Diff(ps[0], got); err != nil || diff != "" {
			t.Errorf("perm_1: %v (-want +got):\n%s", err, diff)
		}
		end := func(id, status, by string, s int) error {
			return db.Update(ctx, func(tx hub.Tx) error { return tx.EndPermission(ctx, id, status, by, at(s)) })
		}
		if err := end("perm_1", hub.PermissionAllowed, u.ID, 40); err != nil {
			t.Fatal(err)
		}
		if err := end("perm_1", hub.PermissionDenied, u.ID, 41); !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("ending perm_1 again: %v, want ErrNoRows", err)
		}
		if err := end("perm_2", hub.PermissionExpired, "", 50); err != nil {
			t.Fatal(err)
		}
		if err := end("perm_3", hub.PermissionWithdrawn, "", 60); err != nil {
			t.Fatal(err)
		}
		got, _ = db.Permission(ctx, "perm_1")
		if got.Status != hub.PermissionAllowed || got.DecidedBy != u.ID || !got.DecidedAt.Equal(at(40)) {
			t.Errorf("perm_1 decided: %+v", got)
		}
		pending, err := db.PendingPermissions(ctx, u.ID)
		if err != nil || len(pending) != 0 {
			t.Errorf("pending: %+v, %v; want none", pending, err)
		}
		ended, err := db.EndedPermissions(ctx, u.ID, at(45))
		var ids []string
		for _, p := range ended {
			ids = append(ids, p.ID+" "+p.Status)
		}
		if diff := cmp.Diff([]string{"perm_3 withdrawn", "perm_2 expired"}, ids); err != nil || diff != "" {
			t.Errorf("ended since 45 s: %v (-want +got):\n%s", err, diff)
		}
		if ended, _ := db.EndedPermissions(ctx, u.ID, at(55)); len(ended) != 1 {
			t.Errorf("ended since 55 s: %+v, want perm_3", ended)
		}
	})
}
