package hub_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/metrics"
)

// benchWorld is a world with the default brakes whose clock moves a minute
// at every reading, so a benchmark's stream of distinct sends stays within
// each agent's budget the way a long-running hub's traffic does. Its hub
// counts into Prometheus series, as a server's does.
func benchWorld(b *testing.B) *world {
	w := newWorld(b)
	w.Clock.Tick(time.Minute)
	o, err := metrics.NewHubObserver(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	w.observe(o)
	w.reopen(b)
	return w
}

// BenchmarkSendMessage measures durable sends (SQLite, synchronous=FULL)
// from parallel senders, each in its own conversation, through the group
// committing writer.
func BenchmarkSendMessage(b *testing.B) {
	w := benchWorld(b)
	const parallelism = 8 // goroutines per GOMAXPROCS
	type lane struct {
		sender *hub.Caller
		conv   string
	}
	var lanes []lane
	for i := range parallelism * runtime.GOMAXPROCS(0) {
		sender := w.Agent(b, fmt.Sprintf("alice/sender%d", i))
		v, err := w.Hub.OpenConversation(ctx, sender, []string{"alice/reviewer"})
		if err != nil {
			b.Fatal(err)
		}
		lanes = append(lanes, lane{sender, v.Conversation.ID})
	}
	var next, sent atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		l := lanes[next.Add(1)-1]
		for pb.Next() {
			body := fmt.Sprintf("benchmark ask %d of a typical length", sent.Add(1))
			if _, err := w.Hub.SendMessage(ctx, l.sender, hub.SendInput{ConversationID: l.conv, Body: body}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkCheckInbox measures check_inbox with 10,000 messages of history
// in 200 conversations of 50, 100 of them waiting.
func BenchmarkCheckInbox(b *testing.B) {
	w := benchWorld(b)
	var conv string
	for i := range 10000 {
		if i%50 == 0 {
			v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "history", Participants: []string{"alice/reviewer"}})
			if err != nil {
				b.Fatal(err)
			}
			conv = v.Conversation.ID
		}
		r, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: fmt.Sprintf("message %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		if i < 9900 {
			if _, err := w.Hub.Acknowledge(ctx, w.Reviewer, r.Message.ID, "", ""); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := w.Hub.Inbox(ctx, w.Reviewer, 20, "")
		if err != nil || r.Total != 100 {
			b.Fatalf("inbox: %+v, %v", r, err)
		}
	}
}

// BenchmarkSendToWake measures one send and the wake-up of the recipient's
// parked wait: each op is SendMessage until Wait returns it (§6, §17).
func BenchmarkSendToWake(b *testing.B) {
	w := benchWorld(b)
	latest, err := w.Hub.LatestCursor(ctx, w.Reviewer.Agent.ID)
	if err != nil {
		b.Fatal(err)
	}
	heard := make(chan struct{})
	// The waiter ends, and is waited for, before the store closes.
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	defer func() { cancel(); <-done }()
	go func() {
		defer close(done)
		cursor := &latest
		for {
			r, err := w.Hub.Wait(wctx, w.Reviewer, hub.WaitInput{Cursor: cursor, Timeout: 5 * time.Second})
			if err != nil {
				if wctx.Err() == nil {
					b.Error(err)
				}
				return
			}
			cursor = &r.Cursor
			for range r.Events {
				select {
				case heard <- struct{}{}:
				case <-wctx.Done():
					return
				}
			}
		}
	}()
	var conv string
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%50 == 0 {
			v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "wake", Participants: []string{"alice/reviewer"}})
			if err != nil {
				b.Fatal(err)
			}
			conv = v.Conversation.ID
			<-heard // the reviewer hears it was added
		}
		if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: fmt.Sprintf("wake %d", i)}); err != nil {
			b.Fatal(err)
		}
		<-heard
	}
}
