package hub_test

import (
	"bytes"
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// readsOn is a real store that records on which goroutine each of the
// reads a wait makes ran.
type readsOn struct {
	hub.Store
	mu sync.Mutex
	by map[string]int // goroutine → reads
}

// goroutine is the calling goroutine's number, as its trace names it.
func goroutine() string {
	b := make([]byte, 64)
	return string(bytes.Fields(b[:runtime.Stack(b, false)])[1])
}

func (s *readsOn) saw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.by[goroutine()]++
}

func (s *readsOn) reads(g string) (on, all int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range s.by {
		if k == g {
			on += n
		}
		all += n
	}
	return on, all
}

func (s *readsOn) AuthGeneration(ctx context.Context) (int64, error) {
	s.saw()
	return s.Store.AuthGeneration(ctx)
}

func (s *readsOn) LatestEvent(ctx context.Context) (hub.Pos, int64, error) {
	s.saw()
	return s.Store.LatestEvent(ctx)
}

func (s *readsOn) Meta(ctx context.Context, key string) (string, error) {
	s.saw()
	return s.Store.Meta(ctx, key)
}

func (s *readsOn) EventsAfter(ctx context.Context, recipientID string, after hub.Pos, limit int) ([]*hub.Event, int64, error) {
	s.saw()
	return s.Store.EventsAfter(ctx, recipientID, after, limit)
}

func (s *readsOn) TakesPart(ctx context.Context, conversationID, principalID string) (bool, error) {
	s.saw()
	return s.Store.TakesPart(ctx, conversationID, principalID)
}

func (s *readsOn) Holds(ctx context.Context, agentID string) ([]hub.Hold, error) {
	s.saw()
	return s.Store.Holds(ctx, agentID)
}

// TestWaitReadsOffItsGoroutine: a wait — its caller's authentication, its
// cursor, its first look, its look after the wake-up and the addressing of
// what it hands over — reads the store on other goroutines than the one
// it parks on, whose stack the reads would grow for as long as it waits
// (§17).
func TestWaitReadsOffItsGoroutine(t *testing.T) {
	rs := &readsOn{by: map[string]int{}}
	w := newWorldOn(t, hub.DefaultSettings(), func(s hub.Store) hub.Store { rs.Store = s; return rs })
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	cursor := w.Latest(t, w.Reviewer)
	type waited struct {
		g   string
		r   *hub.WaitResult
		err error
	}
	done := make(chan waited, 1)
	go func() {
		g := goroutine()
		c, err := w.Hub.Authenticate(ctx, w.Tokens["alice/reviewer"])
		if err != nil {
			done <- waited{g, nil, err}
			return
		}
		r, err := w.Hub.Wait(ctx, c, hub.WaitInput{Cursor: cursor, Timeout: 10 * time.Second, Instance: "desk"})
		done <- waited{g, r, err}
	}()
	w.Parked(t, 1)
	w.Send(t, w.Planner, conv, "wake up")
	got := <-done
	if got.err != nil || len(got.r.Events) != 1 || got.r.Events[0].Message == nil || got.r.Events[0].Message.Body != "wake up" {
		t.Fatalf("wait: %+v, %v; want the one message", got.r, got.err)
	}
	if _, ok := got.r.Addressing[got.r.Events[0].ID]; !ok {
		t.Errorf("the message was not addressed to the session: %+v", got.r.Addressing)
	}
	on, all := rs.reads(got.g)
	if on != 0 {
		t.Errorf("%d of %d reads ran on the waiting goroutine, want none", on, all)
	}
	if all < 6 { // generation, cursor, a look, a look, takes part, holds
		t.Errorf("%d reads recorded, want at least 6", all)
	}
}
