package hub_test

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// notifier is a hub.Notifier that keeps what it is given; sends to a URL
// in hang block until their context ends.
type notifier struct {
	mu   sync.Mutex
	got  []*hub.Notification
	hang map[string]bool
	sent chan *hub.Notification
}

func (f *notifier) Notify(ctx context.Context, n *hub.Notification, _ func(netip.Addr) bool) hub.NotifyResult {
	f.mu.Lock()
	hang := f.hang[n.To.URL]
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return hub.NotifyResult{Err: ctx.Err()}
	}
	f.mu.Lock()
	f.got = append(f.got, n)
	f.mu.Unlock()
	if f.sent != nil {
		f.sent <- n
	}
	return hub.NotifyResult{Status: 200}
}

func (f *notifier) taken() []*hub.Notification {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.got
	f.got = nil
	return out
}

// notifierWorld is a world whose notifications go to a notifier, with
// alice on an ntfy topic.
func notifierWorld(t *testing.T) (*world, *notifier, *hub.User) {
	t.Helper()
	f := &notifier{hang: map[string]bool{}}
	w := newWorld(t)
	w.options = func(o *hub.Options) {
		o.Notifier, o.Resolver, o.PrivateHosts = f, resolver{"ntfy.test": {netip.MustParseAddr("127.0.0.1")}, "dead.test": {netip.MustParseAddr("127.0.0.1")}},
			[]string{"ntfy.test", "dead.test"}
	}
	w.reopen(t)
	alice := person(t, w, "alice")
	if _, err := w.hub.AddNtfyTopic(ctx, alice, "https://ntfy.test/alerts", "", ""); err != nil {
		t.Fatal(err)
	}
	return w, f, alice
}

func deliver(t *testing.T, w *world) hub.Pass {
	t.Helper()
	p, err := w.hub.DeliverNotifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNotifyQuietHours: in the person's quiet hours (read in their time
// zone) a held-back kind waits for them to end; an urgent kind goes at
// once when they let urgent ones through.
func TestNotifyQuietHours(t *testing.T) {
	w, f, alice := notifierWorld(t)
	if err := w.hub.SetTimeZone(ctx, alice, "Asia/Tokyo"); err != nil { // 09:00 UTC is 18:00 in Tokyo
		t.Fatal(err)
	}
	if _, err := w.hub.SetNotifyPrefs(ctx, alice, hub.NotifyPrefs{Kinds: hub.DefaultNotifyKinds, QuietFrom: 17 * 60, QuietTo: 19 * 60, QuietUrgent: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.RequestGrant(ctx, w.planner, "bob", true, false, "to ask bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.AskOwner(ctx, w.planner, "Now?", "", "", nil); err != nil {
		t.Fatal(err)
	}
	deliver(t, w)
	got := f.taken()
	if len(got) != 1 || got[0].Kind != hub.NotifyQuestion {
		t.Fatalf("in quiet hours sent %d; want only the question", len(got))
	}
	w.clock.Advance(59 * time.Minute) // 18:59 Tokyo
	if deliver(t, w); len(f.taken()) != 0 {
		t.Fatal("sent before the quiet hours ended")
	}
	w.clock.Advance(time.Minute)
	deliver(t, w)
	if got := f.taken(); len(got) != 1 || got[0].Kind != hub.NotifyGrant {
		t.Fatalf("after the quiet hours: %d", len(got))
	}
}

// TestNotifyCoalescing: one notification per item, and past
// NotifyDigestAfter in a minute the rest become one digest; a kind the
// person turned off notifies no one.
func TestNotifyCoalescing(t *testing.T) {
	w, f, alice := notifierWorld(t)
	for range hub.NotifyDigestAfter + 5 {
		if _, err := w.hub.AskOwner(ctx, w.planner, "Again?", "", "", nil); err != nil {
			t.Fatal(err)
		}
	}
	// Each target sends a few at once and so many a second: a second a pass.
	for range 10 {
		if deliver(t, w).Claimed == 0 {
			break
		}
		w.clock.Advance(time.Second)
	}
	got := f.taken()
	kinds := map[string]int{}
	for _, n := range got {
		kinds[n.Kind]++
	}
	if kinds[hub.NotifyQuestion] != hub.NotifyDigestAfter || kinds[hub.NotifyDigest] != 1 || len(got) != hub.NotifyDigestAfter+1 {
		t.Fatalf("sent %v; want %d questions and one digest", kinds, hub.NotifyDigestAfter)
	}
	w.clock.Advance(time.Minute)
	if _, err := w.hub.SetNotifyPrefs(ctx, alice, hub.NotifyPrefs{Kinds: []string{hub.NotifyBrake}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.AskOwner(ctx, w.planner, "Quiet now?", "", "", nil); err != nil {
		t.Fatal(err)
	}
	if deliver(t, w); len(f.taken()) != 0 {
		t.Fatal("a kind turned off notified")
	}
}

// TestNotifyDeadTargetDelaysNoOther: a target that never answers holds up
// none of the person's other targets.
func TestNotifyDeadTargetDelaysNoOther(t *testing.T) {
	w, f, alice := notifierWorld(t)
	f.hang["https://dead.test/alerts"] = true
	f.sent = make(chan *hub.Notification, 1)
	if _, err := w.hub.AddNtfyTopic(ctx, alice, "https://dead.test/alerts", "", ""); err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.hub.RunNotifications(run, time.Hour, nil); close(done) }()
	defer func() { stop(); <-done }()
	if _, err := w.hub.AskOwner(ctx, w.planner, "Are you there?", "", "", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-f.sent:
		if n.To.URL != "https://ntfy.test/alerts" {
			t.Fatalf("sent to %s", n.To.URL)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the live topic was not reached while the dead one hung")
	}
}

// TestNotifyPruned: notifications done with are pruned with the events,
// past the same retention; one still to send stays, however old, and so
// does one sent within the retention.
func TestNotifyPruned(t *testing.T) {
	w, _, alice := notifierWorld(t)
	ts, err := w.hub.NotifyTargets(ctx, alice)
	if err != nil || len(ts) != 1 {
		t.Fatalf("targets %v, %v", ts, err)
	}
	queue := func(item string, sent bool) {
		t.Helper()
		now := w.clock.Now()
		n := &hub.Notification{ID: hub.NewID(hub.IDNotification, now), TargetID: ts[0].ID, UserID: alice.ID, Kind: hub.NotifyQuestion, Item: item,
			Payload: hub.NotifyPayload{Title: item, Path: "/approvals"}, CreatedAt: now, DueAt: now}
		err := w.store.Update(ctx, func(tx hub.Tx) error {
			if err := tx.InsertNotifications(ctx, []*hub.Notification{n}); err != nil || !sent {
				return err
			}
			return tx.MarkNotificationSent(ctx, n.ID, now)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	queue("old and sent", true)
	queue("old and still to send", false)
	w.clock.Advance(w.settings.EventRetention + time.Hour)
	recent := w.clock.Now()
	queue("sent just now", true)
	if err := w.hub.PruneEvents(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := w.store.RecentNotifications(ctx, alice.ID, recent.Add(-2*w.settings.EventRetention))
	if err != nil {
		t.Fatal(err)
	}
	late, _ := w.store.RecentNotifications(ctx, alice.ID, recent)
	due, _ := w.store.DueNotifyTargets(ctx, w.clock.Now())
	if all != 2 || late != 1 || len(due) != 1 {
		t.Fatalf("after pruning: %d kept, %d of them recent, %d targets with some to send; want the old one still to send and the recent one", all, late, len(due))
	}
}
