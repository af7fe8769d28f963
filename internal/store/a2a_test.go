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

// TestA2ARequestsFrom: a caller's requests to an agent come newest first,
// those of one time by message id, in pages after the last one given,
// with the count of them all; another caller's, another agent's and, when
// a conversation is named, another conversation's are left out (§18
// ListTasks).
func TestA2ARequestsFrom(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		u := insertUser(t, db, "bob")
		at := func(s int64) time.Time { return time.UnixMilli(s * 1000).UTC() }
		help := &hub.Agent{ID: "agt_help", OwnerID: u.ID, Slug: "help", Mode: hub.ModeActive, CreatedAt: at(1)}
		other := &hub.Agent{ID: "agt_other", OwnerID: u.ID, Slug: "other", Mode: hub.ModeActive, CreatedAt: at(1)}
		req := func(id, agent, caller, conv string, s int64) *hub.A2ARequest {
			return &hub.A2ARequest{MessageID: id, AgentID: agent, CallerID: caller, ConversationID: conv, CreatedAt: at(s)}
		}
		all := []*hub.A2ARequest{
			req("msg_1", help.ID, "usr_carol", "conv_1", 10),
			req("msg_2", help.ID, "usr_carol", "conv_1", 20),
			req("msg_3", help.ID, "usr_carol", "conv_2", 20), // the same time as msg_2: by id
			req("msg_4", help.ID, "usr_carol", "conv_2", 30),
			req("msg_5", help.ID, "usr_dave", "conv_3", 40),   // another caller
			req("msg_6", other.ID, "usr_carol", "conv_4", 50), // another agent
		}
		err := db.Update(ctx, func(tx hub.Tx) error {
			for _, a := range []*hub.Agent{help, other} {
				if err := tx.InsertAgent(ctx, a); err != nil {
					return err
				}
			}
			for _, r := range all {
				if err := tx.InsertA2ARequest(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ids := func(rs []*hub.A2ARequest) []string {
			out := []string{}
			for _, r := range rs {
				out = append(out, r.MessageID)
			}
			return out
		}
		for _, tc := range []struct {
			name, conv string
			before     *hub.A2ARequest
			limit      int
			want       []string
			total      int
		}{
			{"the first page", "", nil, 2, []string{"msg_4", "msg_3"}, 4},
			{"after it", "", all[2], 2, []string{"msg_2", "msg_1"}, 4},
			{"after the last", "", all[0], 2, []string{}, 4},
			{"all at once", "", nil, 10, []string{"msg_4", "msg_3", "msg_2", "msg_1"}, 4},
			{"one conversation", "conv_1", nil, 10, []string{"msg_2", "msg_1"}, 2},
			{"one conversation, after", "conv_2", all[3], 10, []string{"msg_3"}, 2},
			{"a conversation of none of them", "conv_3", nil, 10, []string{}, 0},
		} {
			got, total, err := db.A2ARequestsFrom(ctx, "usr_carol", help.ID, tc.conv, tc.before, tc.limit)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if diff := cmp.Diff(tc.want, ids(got)); diff != "" || total != tc.total {
				t.Errorf("%s: total %d, want %d; ids (-want +got):\n%s", tc.name, total, tc.total, diff)
			}
		}
		got, _, err := db.A2ARequestsFrom(ctx, "usr_carol", help.ID, "", nil, 1)
		if err != nil || len(got) != 1 || cmp.Diff(all[3], got[0]) != "" {
			t.Errorf("the newest: %+v, %v; want %+v as stored", got, err, all[3])
		}
	})
}
