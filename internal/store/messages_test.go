package store_test

import (
	"encoding/json"
	"errors"
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

// TestAppendMessage: a new message's writes in one call take the
// conversation's next seq, store the message, a waiting delivery for each
// agent and the events in order with their positions, and move the
// sender's place forward only (never back); a conversation that is not
// there writes nothing, and a client_msg_id used before is a duplicate.
func TestAppendMessage(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		at := time.UnixMilli(50_000).UTC()
		msg := func(id, conv, clientID string) *hub.Message {
			return &hub.Message{ID: id, ConversationID: conv, Status: hub.MessageSent, SenderID: "agt_x", SenderKind: hub.PrincipalAgent,
				SenderHandle: "x/x", SenderInstance: "main", Body: "the words " + id, Format: hub.FormatText, Kind: hub.MessageText,
				ClientMsgID: clientID, Author: hub.AuthorAgent, Authority: hub.AuthorityAgent, OwnerID: "usr_x", OwnerHandle: "x", CreatedAt: at}
		}
		appendOne := func(n *hub.NewMessage) error {
			return db.Update(ctx, func(tx hub.Tx) error { return tx.AppendMessage(ctx, n) })
		}
		err := db.Update(ctx, func(tx hub.Tx) error {
			for _, conv := range []string{"conv_a", "conv_b"} {
				if err := tx.InsertConversation(ctx, &hub.Conversation{ID: conv, Kind: hub.KindGroup, Status: hub.StatusOpen, CreatorID: "agt_x",
					CreatedAt: at, UpdatedAt: at, LastSeq: 4}); err != nil {
					return err
				}
			}
			// The sender read conv_b up to 7 already (another session's words).
			return tx.MoveRead(ctx, "conv_b", "agt_x", "main", 7, true, at)
		})
		if err != nil {
			t.Fatal(err)
		}
		event := func(to, typ string, data string) *hub.Event {
			e := &hub.Event{RecipientID: to, Type: typ, ConversationID: "conv_a", MessageID: "msg_a", CreatedAt: at}
			if data != "" {
				e.Data = json.RawMessage(data)
			}
			return e
		}
		a := msg("msg_a", "conv_a", "c1")
		events := []*hub.Event{event("agt_y", hub.EventMessageNew, ""), event("agt_x", hub.EventMessageNew, ""), event("usr_x", hub.EventAgentSent, `{"n":1}`)}
		if err := appendOne(&hub.NewMessage{Message: a, At: at.Add(time.Second), Agents: []string{"agt_y", "agt_z"}, Events: events}); err != nil {
			t.Fatal(err)
		}
		if a.Seq != 5 {
			t.Errorf("seq %d; want 5, after the conversation's last", a.Seq)
		}
		if m, err := db.MessageBySeq(ctx, "conv_a", 5); err != nil || m.ID != "msg_a" || m.Body != a.Body || m.ClientMsgID != "c1" {
			t.Errorf("message at seq 5: %+v, %v; want msg_a as sent", m, err)
		}
		if c, err := db.Conversation(ctx, "conv_a"); err != nil || c.LastSeq != 5 || !c.UpdatedAt.Equal(at.Add(time.Second)) {
			t.Errorf("conversation: %+v, %v; want last seq 5, updated at the send", c, err)
		}
		for _, agent := range []string{"agt_y", "agt_z"} {
			if d, err := db.Delivery(ctx, agent, "msg_a"); err != nil || d.State != hub.DeliveryWaiting {
				t.Errorf("%s's delivery: %+v, %v; want waiting", agent, d, err)
			}
		}
		if _, err := db.Delivery(ctx, "agt_x", "msg_a"); !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("the sender's delivery: %v; want none", err)
		}
		for i, e := range events {
			if e.ID == 0 || i > 0 && e.ID <= events[i-1].ID || e.Tx != events[0].Tx {
				t.Errorf("event %d at %d/%d, before it %d/%d: want positions in order, one transaction", i, e.Tx, e.ID, events[max(i-1, 0)].Tx, events[max(i-1, 0)].ID)
			}
			got := storetest.EventsAfter(t, db, e.RecipientID, hub.Pos{}, 10)
			if len(got) != 1 || got[0].ID != e.ID || got[0].Type != e.Type || string(got[0].Data) != string(e.Data) || !got[0].CreatedAt.Equal(at) {
				t.Errorf("%s's events: %+v; want only %+v", e.RecipientID, got, e)
			}
		}
		b := msg("msg_b", "conv_b", "")
		if err := appendOne(&hub.NewMessage{Message: b, At: at}); err != nil {
			t.Fatal(err)
		}
		reads := map[string]int64{}
		for _, conv := range []string{"conv_a", "conv_b"} {
			rs, err := db.Reads(ctx, conv)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				reads[conv+" "+r.PrincipalID+"/"+r.Instance] = r.LastReadSeq
			}
		}
		if want := map[string]int64{"conv_a agt_x/main": 5, "conv_b agt_x/main": 7}; !cmp.Equal(reads, want) {
			t.Errorf("places %v; want %v (moved to the seq, never back)", reads, want)
		}
		if b.Seq != 5 {
			t.Errorf("conv_b's seq %d; want 5", b.Seq)
		}
		err = appendOne(&hub.NewMessage{Message: msg("msg_c", "conv_gone", ""), At: at, Agents: []string{"agt_y"}, Events: []*hub.Event{event("agt_y", hub.EventMessageNew, "")}})
		if !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("into a conversation not there: %v; want ErrNoRows", err)
		}
		if _, err := db.Message(ctx, "msg_c"); !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("message into a conversation not there: %v; want none stored", err)
		}
		if err := appendOne(&hub.NewMessage{Message: msg("msg_d", "conv_a", "c1"), At: at}); !errors.Is(err, hub.ErrDuplicate) {
			t.Errorf("a client_msg_id used before: %v; want ErrDuplicate", err)
		}
	})
}
