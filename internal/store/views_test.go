package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestWriterForgetsWhatARollbackUndid: the conversation views a writer's
// transaction read stand on what it wrote; rolled back, they are forgotten,
// so that a later change that brings the database to the same generation
// is not answered with what was undone (§17 cached checks).
func TestWriterForgetsWhatARollbackUndid(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		u := insertUser(t, db, "bob")
		now := time.UnixMilli(2000).UTC()
		conv := &hub.Conversation{ID: "conv_views", Kind: hub.KindGroup, Status: hub.StatusOpen, CreatorID: "agt_a", CreatedAt: now, UpdatedAt: now}
		join := func(tx hub.Tx, id string) error {
			return tx.AddParticipant(ctx, &hub.Participant{ConversationID: conv.ID, PrincipalID: id, Kind: hub.PrincipalAgent, OwnerID: u.ID, Role: hub.RoleMember, JoinedAt: now})
		}
		err := db.Update(ctx, func(tx hub.Tx) error {
			for _, slug := range []string{"a", "x", "y"} {
				if err := tx.InsertAgent(ctx, &hub.Agent{ID: "agt_" + slug, OwnerID: u.ID, Slug: slug, Mode: hub.ModeActive, CreatedAt: now}); err != nil {
					return err
				}
			}
			if err := tx.InsertConversation(ctx, conv); err != nil {
				return err
			}
			return join(tx, "agt_a")
		})
		if err != nil {
			t.Fatal(err)
		}
		ids := func(v *hub.ConversationView) []string {
			var out []string
			for _, p := range v.Participants {
				out = append(out, p.PrincipalID)
			}
			slices.Sort(out)
			return out
		}
		undone := errors.New("undone")
		err = db.Update(ctx, func(tx hub.Tx) error {
			if err := join(tx, "agt_x"); err != nil {
				return err
			}
			if v, err := tx.ConversationView(ctx, conv.ID); err != nil || !slices.Equal(ids(v), []string{"agt_a", "agt_x"}) {
				t.Errorf("inside the transaction that adds x: %v, %v", v, err)
			}
			return undone
		})
		if !errors.Is(err, undone) {
			t.Fatalf("the rolled back update: %v", err)
		}
		err = db.Update(ctx, func(tx hub.Tx) error {
			if err := join(tx, "agt_y"); err != nil {
				return err
			}
			v, err := tx.ConversationView(ctx, conv.ID)
			if err != nil {
				return err
			}
			if got := ids(v); !slices.Equal(got, []string{"agt_a", "agt_y"}) {
				t.Errorf("after x's addition was rolled back and y added: %v, want agt_a and agt_y", got)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
