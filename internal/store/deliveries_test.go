package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestUnmarkFetched: the agent's body reads of its waiting deliveries in
// one conversation are forgotten from a seq on; earlier ones, acknowledged
// ones, another agent's and another conversation's are kept.
func TestUnmarkFetched(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		at := time.UnixMilli(10_000).UTC()
		var ids []string // msg_conv_a_1 … _4, msg_conv_b_1
		err := db.Update(ctx, func(tx hub.Tx) error {
			for conv, n := range map[string]int{"conv_a": 4, "conv_b": 1} {
				if err := tx.InsertConversation(ctx, &hub.Conversation{ID: conv, Kind: hub.KindGroup, Status: hub.StatusOpen, CreatorID: "agt_x", CreatedAt: at, UpdatedAt: at}); err != nil {
					return err
				}
				for seq := 1; seq <= n; seq++ {
					m := &hub.Message{ID: fmt.Sprintf("msg_%s_%d", conv, seq), ConversationID: conv, Seq: int64(seq), Status: hub.MessageSent, SenderID: "agt_x",
						SenderKind: hub.PrincipalAgent, SenderHandle: "x/x", Body: "words", Format: hub.FormatText, Kind: hub.MessageText,
						Author: hub.AuthorAgent, Authority: hub.AuthorityAgent, OwnerID: "usr_x", OwnerHandle: "x", CreatedAt: at}
					if err := tx.InsertMessage(ctx, m); err != nil {
						return err
					}
					if err := tx.InsertDeliveries(ctx, m, []string{"agt_a", "agt_b"}); err != nil {
						return err
					}
					ids = append(ids, m.ID)
				}
			}
			for _, agent := range []string{"agt_a", "agt_b"} {
				if err := tx.MarkFetched(ctx, agent, ids, at); err != nil {
					return err
				}
			}
			// agt_a is done with conv_a's #4.
			d, err := tx.Delivery(ctx, "agt_a", "msg_conv_a_4")
			if err != nil {
				return err
			}
			d.State, d.AckedAt = hub.DeliveryDone, at
			return tx.SetDeliveryState(ctx, d)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.UnmarkFetched(ctx, "agt_a", "conv_a", 2) }); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			agent, msg string
			fetched    bool
		}{
			{"agt_a", "msg_conv_a_1", true}, {"agt_a", "msg_conv_a_2", false}, {"agt_a", "msg_conv_a_3", false},
			{"agt_a", "msg_conv_a_4", true}, // acknowledged: out of the inbox, kept as it was
			{"agt_a", "msg_conv_b_1", true}, {"agt_b", "msg_conv_a_2", true}, {"agt_b", "msg_conv_a_3", true},
		} {
			d, err := db.Delivery(ctx, tc.agent, tc.msg)
			if err != nil || d.FetchedAt.IsZero() == tc.fetched {
				t.Errorf("%s's %s: fetched at %v, %v; want fetched %v", tc.agent, tc.msg, d.FetchedAt, err, tc.fetched)
			}
		}
	})
}
