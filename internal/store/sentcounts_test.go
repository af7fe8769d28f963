package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// sentWorld is one conversation of agt_x's, for the brakes' counts.
type sentWorld struct {
	t  *testing.T
	at time.Time // the time of the next message
	n  int
}

const sentConv = "conv_sent"

func newSentWorld(t *testing.T, db *store.DB) *sentWorld {
	w := &sentWorld{t: t, at: time.UnixMilli(10_000).UTC()}
	err := db.Update(ctx, func(tx hub.Tx) error {
		return tx.InsertConversation(ctx, &hub.Conversation{ID: sentConv, Kind: hub.KindGroup, Status: hub.StatusOpen, CreatorID: "agt_x", CreatedAt: w.at, UpdatedAt: w.at})
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// insert inserts agt_x's next message, a second after the last, in tx.
func (w *sentWorld) insert(tx hub.Tx, body string) error {
	return w.insertAs(tx, body, hub.MessageSent)
}

// insertAs is insert with a status: sent, or held (with no seq).
func (w *sentWorld) insertAs(tx hub.Tx, body, status string) error {
	w.n++
	w.at = w.at.Add(time.Second)
	seq := int64(w.n)
	if status == hub.MessageHeld {
		seq = 0
	}
	return tx.InsertMessage(ctx, &hub.Message{ID: fmt.Sprintf("msg_sent_%d", w.n), ConversationID: sentConv, Seq: seq, Status: status,
		SenderID: "agt_x", SenderKind: hub.PrincipalAgent, SenderHandle: "x/x", Body: body, Format: hub.FormatText, Kind: hub.MessageText,
		Author: hub.AuthorAgent, Authority: hub.AuthorityAgent, OwnerID: "usr_x", OwnerHandle: "x", CreatedAt: w.at})
}

// count is CountSent of body in the writer's transaction: the same words
// since zero, and everything since recentSince.
func (w *sentWorld) count(db *store.DB, body string, recentSince time.Time) (same, recent int) {
	w.t.Helper()
	err := db.Update(ctx, func(tx hub.Tx) (err error) {
		same, recent, err = store.CountSent(ctx, tx, sentConv, "agt_x", body, time.Time{}, recentSince, 60)
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return same, recent
}

// TestWriterCountsForgetWhatARollbackUndid: the brakes' counts the writer
// keeps (§17 cached checks) do not keep a message whose transaction was
// rolled back.
func TestWriterCountsForgetWhatARollbackUndid(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSentWorld(t, db)
		if err := db.Update(ctx, func(tx hub.Tx) error { return w.insert(tx, "one") }); err != nil {
			t.Fatal(err)
		}
		if same, recent := w.count(db, "two", time.Time{}); same != 0 || recent != 1 {
			t.Fatalf("after one message: same %d, recent %d; want 0 and 1", same, recent)
		}
		undone := errors.New("undone")
		err := db.Update(ctx, func(tx hub.Tx) error {
			if err := w.insert(tx, "two"); err != nil {
				return err
			}
			if same, recent, err := store.CountSent(ctx, tx, sentConv, "agt_x", "two", time.Time{}, time.Time{}, 60); err != nil || same != 1 || recent != 2 {
				t.Errorf("inside the transaction that sends two: same %d, recent %d, %v; want 1 and 2", same, recent, err)
			}
			return undone
		})
		if !errors.Is(err, undone) {
			t.Fatalf("the rolled back update: %v", err)
		}
		for _, body := range []string{"two", "three"} {
			if same, recent := w.count(db, body, time.Time{}); same != 0 || recent != 1 {
				t.Errorf("after the second message was rolled back, %q: same %d, recent %d; want 0 and 1", body, same, recent)
			}
		}
	})
}

// TestWriterCountsSeeAnotherConnection: a message another connection to
// the same database commits — the admin command line on the SQLite file,
// another replica — is in this writer's very next count, and so is one
// it rejects; the window is the caller's to the millisecond.
func TestWriterCountsSeeAnotherConnection(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, open func() *store.DB) {
		db, other := open(), open()
		w := newSentWorld(t, db)
		if err := db.Update(ctx, func(tx hub.Tx) error { return w.insert(tx, "one") }); err != nil {
			t.Fatal(err)
		}
		first := w.at
		if _, recent := w.count(db, "two", time.Time{}); recent != 1 {
			t.Fatalf("after one message: recent %d, want 1", recent)
		}
		if err := other.Update(ctx, func(tx hub.Tx) error { return w.insertAs(tx, "two", hub.MessageHeld) }); err != nil {
			t.Fatal(err)
		}
		if same, recent := w.count(db, "two", time.Time{}); same != 1 || recent != 2 {
			t.Errorf("after another connection held the same words: same %d, recent %d; want 1 and 2", same, recent)
		}
		m := &hub.Message{ID: "msg_sent_2", ConversationID: sentConv, SenderID: "agt_x", Status: hub.MessageRejected, Body: "two",
			Authority: hub.AuthorityAgent, DecidedBy: "usr_x", DecidedAt: w.at}
		if err := other.Update(ctx, func(tx hub.Tx) error { return tx.DecideMessage(ctx, m) }); err != nil {
			t.Fatal(err)
		}
		if same, recent := w.count(db, "two", time.Time{}); same != 0 || recent != 1 {
			t.Errorf("after another connection rejected it: same %d, recent %d; want 0 and 1", same, recent)
		}
		if _, recent := w.count(db, "two", first.Add(-time.Millisecond)); recent != 1 {
			t.Errorf("a millisecond before the first message: recent %d, want 1", recent)
		}
		if _, recent := w.count(db, "two", first); recent != 0 {
			t.Errorf("from the first message's millisecond: recent %d, want 0", recent)
		}
	})
}

// TestSendView: a conversation read with the brakes' counts has the
// conversation and participants ConversationView has, and the counts
// CountSent gives with the conversation's last person as the duplicate
// brake's start; each count stops at its max. A conversation that is not
// there is ErrNoRows.
func TestSendView(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSentWorld(t, db)
		err := db.Update(ctx, func(tx hub.Tx) error {
			if err := tx.AddParticipant(ctx, &hub.Participant{ConversationID: sentConv, PrincipalID: "usr_x", Kind: hub.PrincipalUser, OwnerID: "usr_x", Role: hub.RoleOwner, JoinedAt: w.at}); err != nil {
				return err
			}
			for _, body := range []string{"again", "again", "other"} { // at 11, 12, 13 s
				if err := w.insert(tx, body); err != nil {
					return err
				}
			}
			if err := tx.TouchPerson(ctx, sentConv, w.at); err != nil { // a person at 13 s
				return err
			}
			for _, body := range []string{"again", "other", "again"} { // at 14, 15, 16 s
				if err := w.insert(tx, body); err != nil {
					return err
				}
			}
			return w.insertAs(tx, "again", hub.MessageHeld) // at 17 s
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			body         string
			recentSince  time.Duration
			max          int
			same, recent int
		}{
			{"again", 0, 60, 3, 7},                        // since the person: 14, 16 and the held 17; recent: all
			{"again", 14500 * time.Millisecond, 60, 3, 3}, // recent: 15, 16, 17
			{"other", 0, 60, 1, 7},
			{"again", 0, 2, 2, 2},
			{"never", 0, 60, 0, 7},
		} {
			q := hub.SentQuery{SenderID: "agt_x", Body: tc.body, RecentSince: time.UnixMilli(0).UTC().Add(tc.recentSince), Max: tc.max}
			if tc.recentSince == 0 {
				q.RecentSince = time.Time{}
			}
			var v, want *hub.ConversationView
			var n hub.SentCounts
			var same, recent int
			err := db.Update(ctx, func(tx hub.Tx) (err error) {
				if v, n, err = tx.SendView(ctx, sentConv, q); err != nil {
					return err
				}
				if want, err = tx.ConversationView(ctx, sentConv); err != nil {
					return err
				}
				same, recent, err = store.CountSent(ctx, tx, sentConv, "agt_x", tc.body, want.Conversation.LastPersonAt, q.RecentSince, tc.max)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if n != (hub.SentCounts{Same: tc.same, Recent: tc.recent}) || same != tc.same || recent != tc.recent {
				t.Errorf("%+v: counts %+v, CountSent's %d and %d; want %d and %d", tc, n, same, recent, tc.same, tc.recent)
			}
			if !cmp.Equal(v, want) {
				t.Errorf("%+v: view %s", tc, cmp.Diff(want, v))
			}
		}
		err = db.Update(ctx, func(tx hub.Tx) error {
			_, _, err := tx.SendView(ctx, "conv_gone", hub.SentQuery{SenderID: "agt_x", Body: "again", Max: 60})
			return err
		})
		if !errors.Is(err, hub.ErrNoRows) {
			t.Errorf("a conversation not there: %v; want ErrNoRows", err)
		}
	})
}
