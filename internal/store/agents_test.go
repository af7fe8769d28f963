package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestAgentPublicFlag: an agent starts private; SetAgentPublic marks it
// public and back, and every read of an agent (by id, by handle, in a list,
// behind its token, as a participant) says so, and PublicAgents lists it
// while it is public and not archived (§1).
func TestAgentPublicFlag(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		u := insertUser(t, db, "bob")
		now := time.UnixMilli(2000).UTC()
		a := &hub.Agent{ID: "agt_help", OwnerID: u.ID, Slug: "help", Mode: hub.ModeActive, CreatedAt: now}
		tok := &hub.Token{ID: "tok_help", Hash: []byte("hash-of-help"), UserID: u.ID, AgentID: a.ID, Scopes: []string{"msg:read"}, CreatedAt: now}
		conv := &hub.Conversation{ID: "conv_help", Kind: hub.KindGroup, Status: hub.StatusOpen, CreatorID: a.ID, CreatedAt: now, UpdatedAt: now}
		err := db.Update(ctx, func(tx hub.Tx) error {
			if err := tx.InsertAgent(ctx, a); err != nil {
				return err
			}
			if err := tx.InsertToken(ctx, tok); err != nil {
				return err
			}
			if err := tx.InsertConversation(ctx, conv); err != nil {
				return err
			}
			return tx.AddParticipant(ctx, &hub.Participant{ConversationID: conv.ID, PrincipalID: a.ID, Kind: hub.PrincipalAgent,
				OwnerID: u.ID, Role: hub.RoleOwner, JoinedAt: now})
		})
		if err != nil {
			t.Fatal(err)
		}
		reads := func(t *testing.T, want bool) {
			t.Helper()
			byID, err := db.AgentByID(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			byHandle, err := db.AgentByHandle(ctx, "bob", "help")
			if err != nil {
				t.Fatal(err)
			}
			list, err := db.Agents(ctx, u.ID, false)
			if err != nil || len(list) != 1 {
				t.Fatalf("Agents = %v, %v; want the one agent", list, err)
			}
			_, behindToken, _, err := db.TokenByHash(ctx, tok.Hash)
			if err != nil {
				t.Fatal(err)
			}
			ps, err := db.Participants(ctx, conv.ID)
			if err != nil || len(ps) != 1 {
				t.Fatalf("Participants = %v, %v; want the one agent", ps, err)
			}
			public, err := db.PublicAgents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if listed := len(public) == 1 && public[0].ID == a.ID && public[0].Public; listed != want || len(public) > 1 {
				t.Errorf("PublicAgents = %v; want the agent listed: %v", public, want)
			}
			for name, got := range map[string]bool{"AgentByID": byID.Public, "AgentByHandle": byHandle.Public,
				"Agents": list[0].Public, "TokenByHash": behindToken.Public, "Participants": ps[0].Public} {
				if got != want {
					t.Errorf("%s: Public = %v, want %v", name, got, want)
				}
			}
		}
		reads(t, false)
		for _, public := range []bool{true, false} {
			if err := db.Update(ctx, func(tx hub.Tx) error { return tx.SetAgentPublic(ctx, a.ID, public) }); err != nil {
				t.Fatal(err)
			}
			reads(t, public)
		}
		// An archived public agent is listed nowhere (§1).
		err = db.Update(ctx, func(tx hub.Tx) error {
			if err := tx.SetAgentPublic(ctx, a.ID, true); err != nil {
				return err
			}
			return tx.SetAgentArchived(ctx, a.ID, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		if public, err := db.PublicAgents(ctx); err != nil || len(public) != 0 {
			t.Errorf("PublicAgents with the public agent archived = %v, %v; want none", public, err)
		}
		err = db.Update(ctx, func(tx hub.Tx) error { return tx.SetAgentPublic(ctx, "agt_nobody", true) })
		if !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("SetAgentPublic of no agent: err = %v, want ErrNoRows", err)
		}
	})
}
