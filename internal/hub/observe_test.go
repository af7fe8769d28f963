package hub_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/search"
)

// observed records what a hub tells its Observer.
type observed struct {
	mu       sync.Mutex
	sends    map[string]int
	brakes   map[string]int
	parked   int
	wakes    []time.Duration
	searches int
}

func (o *observed) Sent(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sends[outcome]++
}

func (o *observed) BrakeTripped(word string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.brakes[word]++
}

func (o *observed) Parked(delta int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.parked += delta
}

func (o *observed) Woke(after time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.wakes = append(o.wakes, after)
}

func (o *observed) Searched(time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.searches++
}

func (o *observed) parkedNow() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.parked
}

// TestObserver: every send is told once with the hub's outcome — sent,
// held, denied (and the brake's word when a brake refused it) or error —
// and a parked wait is told parked, then woken by the commit of a send,
// with how long that took (§14).
func TestObserver(t *testing.T) {
	o := &observed{sends: map[string]int{}, brakes: map[string]int{}}
	w := newWorld(t)
	w.observe(o)
	w.reopen(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")

	w.Send(t, w.Planner, conv, "first")
	w.Send(t, w.Planner, conv, "again")
	w.Send(t, w.Planner, conv, "again")
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "again"}); code(err) != "denied:duplicate" {
		t.Fatalf("a third send of the same words: %v", err)
	}
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: "conv_nope", Body: "x"}); code(err) != "not_found" {
		t.Fatalf("a send to nowhere: %v", err)
	}
	// A duplicate client_msg_id is answered with the message stored: sent.
	for range 2 {
		if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "once", ClientMsgID: "c1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Hub.SetAgentMode(ctx, "alice/reviewer", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	reviewer := w.Agent(t, "alice/reviewer")
	if r, err := w.Hub.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: conv, Body: "held for alice"}); err != nil || r.Message.Status != hub.MessageHeld {
		t.Fatalf("a send in review mode: %+v, %v", r, err)
	}
	if _, err := w.Hub.SetAgentMode(ctx, "alice/reviewer", hub.ModeListen); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SendMessage(ctx, w.Agent(t, "alice/reviewer"), hub.SendInput{ConversationID: conv, Body: "x"}); code(err) != "denied:listen" {
		t.Fatalf("a send in listen mode: %v", err)
	}
	o.mu.Lock()
	sends, brakes := o.sends, o.brakes
	o.mu.Unlock()
	if d := cmp.Diff(map[string]int{"sent": 5, "held": 1, "denied": 2, "error": 1}, sends); d != "" {
		t.Errorf("sends told (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int{"duplicate": 1, "listen": 1}, brakes); d != "" {
		t.Errorf("brakes told (-want +got):\n%s", d)
	}

	// A parked wait, woken by a send's commit.
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	cursor := w.Latest(t, reviewer)
	go func() {
		_, err := w.Hub.Wait(wctx, reviewer, hub.WaitInput{Cursor: cursor, Timeout: 15 * time.Second})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for o.parkedNow() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d waits told parked, want 1", o.parkedNow())
		}
		runtime.Gosched()
	}
	w.Send(t, w.Planner, conv, "wake up")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.parked != 0 || len(o.wakes) != 1 || o.wakes[0] <= 0 || o.wakes[0] > 10*time.Second {
		t.Errorf("after the wake: %d parked, wake-ups %v; want 0 parked and one wake-up", o.parked, o.wakes)
	}
}

// TestObserverSearches: each search is timed, an agent's and a person's,
// and one refused before it runs is not (§18).
func TestObserverSearches(t *testing.T) {
	o := &observed{sends: map[string]int{}, brakes: map[string]int{}}
	w := newWorld(t)
	w.observe(o)
	w.reopen(t)
	finder := search.New(w.Hub, w.Store)
	if _, err := finder.Search(ctx, w.Planner, search.Input{Query: "release"}); err != nil {
		t.Fatal(err)
	}
	if _, err := finder.PersonSearch(ctx, w.owner(t), search.Input{Query: "release"}); err != nil {
		t.Fatal(err)
	}
	if _, err := finder.Search(ctx, w.Planner, search.Input{Query: `"unclosed`}); err == nil {
		t.Fatal("an unclosed quote was searched")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.searches != 2 {
		t.Errorf("%d searches observed, want 2", o.searches)
	}
}
