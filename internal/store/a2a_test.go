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

// TestA2AExposure: an agent never set is ErrNoRows; PutA2AExposure stores
// and replaces the setting with its skills, and ExposedAgents lists the
// owner's exposed agents that are not archived (§18).
func TestA2AExposure(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		u := insertUser(t, db, "bob")
		now := time.UnixMilli(2000).UTC()
		help := &hub.Agent{ID: "agt_help", OwnerID: u.ID, Slug: "help", Mode: hub.ModeActive, CreatedAt: now}
		quiet := &hub.Agent{ID: "agt_quiet", OwnerID: u.ID, Slug: "quiet", Mode: hub.ModeActive, CreatedAt: now}
		gone := &hub.Agent{ID: "agt_gone", OwnerID: u.ID, Slug: "gone", Mode: hub.ModeActive, CreatedAt: now, ArchivedAt: now}
		err := db.Update(ctx, func(tx hub.Tx) error {
			for _, a := range []*hub.Agent{help, quiet, gone} {
				if err := tx.InsertAgent(ctx, a); err != nil {
					return err
				}
			}
			return tx.SetAgentArchived(ctx, gone.ID, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.A2AExposure(ctx, help.ID); !errors.Is(err, hub.ErrNoRows) {
			t.Fatalf("never set: err = %v, want ErrNoRows", err)
		}
		put := func(e *hub.A2AExposure) {
			t.Helper()
			if err := db.Update(ctx, func(tx hub.Tx) error { return tx.PutA2AExposure(ctx, e) }); err != nil {
				t.Fatal(err)
			}
		}
		skills := []hub.Skill{{ID: "triage", Name: "Triage", Description: "Sorts bug reports — ünïcode"}}
		put(&hub.A2AExposure{AgentID: help.ID, Exposed: true, Skills: skills, UpdatedAt: now})
		put(&hub.A2AExposure{AgentID: quiet.ID, Exposed: false, UpdatedAt: now})
		put(&hub.A2AExposure{AgentID: gone.ID, Exposed: true, UpdatedAt: now})
		got, err := db.A2AExposure(ctx, help.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&hub.A2AExposure{AgentID: help.ID, Exposed: true, Skills: skills, UpdatedAt: now}, got); diff != "" {
			t.Errorf("exposure (-want +got):\n%s", diff)
		}
		if q, err := db.A2AExposure(ctx, quiet.ID); err != nil || q.Exposed || len(q.Skills) != 0 {
			t.Errorf("quiet: %+v, %v; want not exposed, no skills", q, err)
		}
		list, err := db.ExposedAgents(ctx, u.ID)
		if err != nil || len(list) != 1 || list[0].ID != help.ID {
			t.Fatalf("ExposedAgents = %v, %v; want only help", list, err)
		}
		later := now.Add(time.Minute)
		put(&hub.A2AExposure{AgentID: help.ID, Exposed: false, Skills: skills, UpdatedAt: later})
		if list, err := db.ExposedAgents(ctx, u.ID); err != nil || len(list) != 0 {
			t.Errorf("after turning it off: ExposedAgents = %v, %v; want none", list, err)
		}
		if got, err := db.A2AExposure(ctx, help.ID); err != nil || got.Exposed || len(got.Skills) != 1 || !got.UpdatedAt.Equal(later) {
			t.Errorf("after turning it off: %+v, %v; want off, skills kept", got, err)
		}
	})
}

// TestA2ARequest: a stored request is found by its message id; another id
// is ErrNoRows.
func TestA2ARequest(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		u := insertUser(t, db, "bob")
		now := time.UnixMilli(2000).UTC()
		a := &hub.Agent{ID: "agt_help", OwnerID: u.ID, Slug: "help", Mode: hub.ModeActive, CreatedAt: now}
		r := &hub.A2ARequest{MessageID: "msg_1", AgentID: a.ID, CallerID: "usr_carol", ConversationID: "conv_1", CreatedAt: now}
		err := db.Update(ctx, func(tx hub.Tx) error {
			if err := tx.InsertAgent(ctx, a); err != nil {
				return err
			}
			return tx.InsertA2ARequest(ctx, r)
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.A2ARequest(ctx, "msg_1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("request (-want +got):\n%s", diff)
		}
		if _, err := db.A2ARequest(ctx, "msg_2"); !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("another id: err = %v, want ErrNoRows", err)
		}
		second := &hub.A2ARequest{MessageID: "msg_3", AgentID: a.ID, CallerID: "usr_carol", ConversationID: "conv_1", CreatedAt: now}
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.InsertA2ARequest(ctx, second) }); err != nil {
			t.Fatal(err)
		}
		if got, err := db.A2ACallers(ctx, "conv_1", a.ID); err != nil || len(got) != 1 || got[0] != "usr_carol" {
			t.Errorf("A2ACallers = %v, %v; want carol once", got, err)
		}
		if got, err := db.A2ACallers(ctx, "conv_2", a.ID); err != nil || len(got) != 0 {
			t.Errorf("A2ACallers of another conversation = %v, %v; want none", got, err)
		}
	})
}
