package hub_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestAWaitFromInsideAHeldTransaction (PostgreSQL): a cursor standing
// inside a transaction whose events are held back — a webhook's, just
// before its event — waits for them to come out and hands them over,
// rather than taking its own position for what came out and waiting out
// its timeout with them unseen.
func TestAWaitFromInsideAHeldTransaction(t *testing.T) {
	dbs := storetest.Replicas(t, 2)
	looks := &lookCounter{Store: dbs[0], looks: make(chan string, 100)}
	w := newWorldOnStore(t, hub.DefaultSettings(), looks)
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	// Another replica's transaction, older than the send, holds the
	// send's events back until it ends.
	stall, release := make(chan struct{}), make(chan struct{})
	commit := sync.OnceFunc(func() { close(release) })
	t.Cleanup(commit)
	done := make(chan error, 1)
	go func() {
		done <- dbs[1].Update(ctx, func(tx hub.Tx) error {
			if err := tx.InsertEvents(ctx, []*hub.Event{{RecipientID: "agt_elsewhere", Type: hub.EventMessageNew, CreatedAt: time.Now()}}); err != nil {
				return err
			}
			close(stall)
			<-release
			return nil
		})
	}()
	<-stall
	sent := w.Send(t, w.Reviewer, conv, "held back a moment")
	_, heldTx, err := dbs[0].EventsAfter(ctx, w.Planner.Agent.ID, hub.Pos{}, 10)
	if err != nil || heldTx == 0 {
		t.Fatalf("the send's events are not held back: %d, %v", heldTx, err)
	}
	cursor := w.Hub.CursorForTest(w.Planner.Agent.ID, w.Hub.GenerationForTest(), hub.Pos{Tx: heldTx})
	go func() {
		// Once the wait has looked twice — seen them held, and looked
		// again while they still are — they come out.
		for n := 0; n < 2; {
			if <-looks.looks == w.Planner.Agent.ID {
				n++
			}
		}
		commit()
	}()
	r, err := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: &cursor, Timeout: 5 * time.Second})
	if err != nil || len(r.Events) == 0 || r.Events[len(r.Events)-1].MessageID != sent.Message.ID {
		t.Fatalf("a wait from inside the held transaction: %+v, %v; want the message once it came out", r, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// lookCounter tells of each EventsAfter, by recipient.
type lookCounter struct {
	hub.Store
	looks chan string
}

func (s *lookCounter) EventsAfter(ctx context.Context, recipientID string, after hub.Pos, limit int) ([]*hub.Event, int64, error) {
	events, heldTx, err := s.Store.EventsAfter(ctx, recipientID, after, limit)
	select {
	case s.looks <- recipientID:
	default:
	}
	return events, heldTx, err
}
