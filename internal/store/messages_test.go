package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestOriginalBodiesOnlyWhenAsked: the agent's words of a message its
// owner edited are kept, and no read of messages hands them over — only
// OriginalBodies, which the hub asks for the owner who edited them (§7).
func TestOriginalBodiesOnlyWhenAsked(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSearchWorld(t, db)
		edited := w.add("conv_a", "alice/a", hub.MessageHeld, "", "the agent's draft")
		plain := w.add("conv_a", "alice/a", hub.MessageSent, "", "words as sent")
		at := time.UnixMilli(2_000_000).UTC()
		err := db.Update(ctx, func(tx hub.Tx) error {
			return tx.DecideMessage(ctx, &hub.Message{ID: edited, Status: hub.MessageSent, Seq: 9, Body: "the owner's words",
				OriginalBody: "the agent's draft", Authority: hub.AuthorityEdited, DecidedBy: "usr_alice", DecidedAt: at})
		})
		if err != nil {
			t.Fatal(err)
		}
		m, err := db.Message(ctx, edited)
		if err != nil || m.Body != "the owner's words" || m.Authority != hub.AuthorityEdited || m.OriginalBody != "" {
			t.Errorf("Message: %+v, %v; want the owner's words, owner_edited, no original", m, err)
		}
		msgs, err := db.Messages(ctx, "conv_a", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.OriginalBody != "" {
				t.Errorf("Messages hands over %q of %s", m.OriginalBody, m.ID)
			}
		}
		got, err := db.OriginalBodies(ctx, []string{edited, plain, "msg_none"})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(map[string]string{edited: "the agent's draft"}, got); d != "" {
			t.Errorf("OriginalBodies (-want +got):\n%s", d)
		}
	})
}
