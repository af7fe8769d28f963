package webhook_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
	"github.com/palaverhq/palaver/internal/webhook"
)

// How the outbox's dispatcher keeps endpoints apart (§18): each has its own
// calls in flight and its own rate, and none waits for another's.

// holdCalls makes every call r gets wait unanswered until release is
// called or the test ends, and returns the channel told of each call (up
// to n) as it starts waiting.
func holdCalls(t *testing.T, r *receiver, n int) (held <-chan struct{}, release func()) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hold, r.held = make(chan struct{}), make(chan struct{}, n)
	release = sync.OnceFunc(func() { close(r.hold) })
	t.Cleanup(release) // before the receiver closes, which waits for its calls
	return r.held, release
}

// runWebhooks runs the hooks' delivery loop until the test ends, with ticks
// an hour apart: only what the loop is told of (a call queued, an endpoint
// with room again) makes it step. The channel is told of each call
// recorded, whatever its outcome.
func runWebhooks(t *testing.T, k *webhook.Hooks) <-chan struct{} {
	t.Helper()
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	recorded := make(chan struct{}, 1000)
	go func() {
		defer close(done)
		k.Run(run, time.Hour, func(_ string, n int) {
			for range n {
				recorded <- struct{}{}
			}
		})
	}()
	t.Cleanup(func() { // before the receivers' calls are let go
		stop()
		<-done
	})
	return recorded
}

// awaitCalls waits for n things on c, failing t if they have not all come
// within d.
func awaitCalls(t *testing.T, c <-chan struct{}, n int, d time.Duration, what string) {
	t.Helper()
	deadline := time.After(d)
	for i := range n {
		select {
		case <-c:
		case <-deadline:
			t.Fatalf("%s: %d of %d within %v", what, i, n, d)
		}
	}
}

// TestWebhookDeadEndpointDelaysNoOther: while the planner's endpoint holds
// its call unanswered, the reviewer's endpoint is called at once — before
// the held call has ended (it is neither logged nor out of the outbox).
func TestWebhookDeadEndpointDelaysNoOther(t *testing.T) {
	dead, live := newReceiver(t), newReceiver(t)
	held, _ := holdCalls(t, dead, 1)
	roots := dead.roots.Clone()
	roots.AddCert(live.srv.Certificate())
	w := newWorld(t)
	sender, err := webhook.New(webhook.Options{RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	w.sender = sender
	w.Options = func(o *hub.Options) { o.PrivateHosts = []string{"127.0.0.1"} }
	w.reopen(t)
	alice := w.Person(t, "alice")
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	if _, _, err := w.hooks.Add(ctx, alice, "planner", dead.srv.URL+"/planner"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.hooks.Add(ctx, alice, "reviewer", live.srv.URL+"/reviewer"); err != nil {
		t.Fatal(err)
	}
	runWebhooks(t, w.hooks)

	w.Send(t, w.Reviewer, conv, "are you there?") // calls the planner
	awaitCalls(t, held, 1, 10*time.Second, "the planner's endpoint getting its call")
	w.Send(t, w.Planner, conv, "a question for you") // calls the reviewer
	awaitCalls(t, live.came, 1, 30*time.Second, "the reviewer's endpoint getting its call")

	views, err := w.hooks.List(ctx, alice, "planner")
	if err != nil {
		t.Fatal(err)
	}
	if v := views[0]; len(v.Attempts) != 0 || v.Pending != 1 {
		t.Errorf("when the reviewer's endpoint was called, the planner's call had ended: %d attempts logged, %d pending; want it still in flight", len(v.Attempts), v.Pending)
	}
	if len(dead.got()) != 1 || len(live.got()) != 1 {
		t.Errorf("calls: %d to the held endpoint, %d to the live one; want one each", len(dead.got()), len(live.got()))
	}
}

// TestWebhookSlowEndpointGetsCallsAtOnce: an endpoint that takes its time
// gets WebhookConcurrency calls at once, never more; the rest are made as
// those end.
func TestWebhookSlowEndpointGetsCallsAtOnce(t *testing.T) {
	r := newReceiver(t)
	w := hookWorld(t, r, nil, "127.0.0.1")
	alice := w.Person(t, "alice")
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	if _, _, err := w.hooks.Add(ctx, alice, "planner", r.srv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	n := webhook.Concurrency + webhook.Rate
	for i := range n {
		w.Send(t, w.Reviewer, conv, "message "+strconv.Itoa(i))
	}
	held, release := holdCalls(t, r, n)
	runWebhooks(t, w.hooks)
	awaitCalls(t, held, webhook.Concurrency, 20*time.Second, "calls in flight at once")
	// None has ended (a call given up by its time limit would be logged):
	// they are in flight at once.
	if views, _ := w.hooks.List(ctx, alice, "planner"); len(views[0].Attempts) != 0 {
		t.Fatalf("with %d calls at the receiver, %d had already ended; want them all in flight at once", webhook.Concurrency, len(views[0].Attempts))
	}
	// The rate has room again a second later, but the endpoint has none.
	w.Clock.Advance(time.Second)
	if pass := w.deliver(t); pass.Claimed != 0 {
		t.Errorf("with %d calls in flight, another step claimed %d more", webhook.Concurrency, pass.Claimed)
	}
	release()
	awaitCalls(t, r.came, n, 20*time.Second, "calls answered")
	r.mu.Lock()
	most, got := r.most, len(r.calls)
	r.mu.Unlock()
	if most != webhook.Concurrency || got != n {
		t.Errorf("%d calls, at most %d at once; want %d, %d at once", got, most, n, webhook.Concurrency)
	}
}

// TestWebhookRate: an endpoint is sent WebhookBurst calls at once and then
// WebhookRate a second; the rest wait their turn in the outbox, unclaimed
// and counted as no attempt.
func TestWebhookRate(t *testing.T) {
	r := newReceiver(t)
	w := hookWorld(t, r, nil, "127.0.0.1")
	alice := w.Person(t, "alice")
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	if _, _, err := w.hooks.Add(ctx, alice, "planner", r.srv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	n := webhook.Burst + webhook.Rate
	for i := range n {
		w.Send(t, w.Reviewer, conv, "message "+strconv.Itoa(i))
	}
	if pass := w.deliver(t); pass.Claimed != webhook.Burst || outcomes(pass)[webhook.Delivered] != webhook.Burst || len(r.got()) != webhook.Burst {
		t.Fatalf("%d calls at once: %+v, %d made; want %d made, the rest waiting", n, pass, len(r.got()), webhook.Burst)
	}
	views, _ := w.hooks.List(ctx, alice, "planner")
	if views[0].Pending != webhook.Rate || len(views[0].Attempts) != webhook.Burst {
		t.Errorf("after the burst: %d waiting, %d attempts logged", views[0].Pending, len(views[0].Attempts))
	}
	w.Clock.Advance(time.Second)
	if pass := w.deliver(t); outcomes(pass)[webhook.Delivered] != webhook.Rate || len(r.got()) != n {
		t.Errorf("a second later: %+v, %d made in all; want the other %d", pass, len(r.got()), webhook.Rate)
	}
}

// TestWebhookReplicasMakeEachCallOnce: two servers over one database (two
// replicas on PostgreSQL) deliver side by side, and each call in the
// outbox is made exactly once.
func TestWebhookReplicasMakeEachCallOnce(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, open func() *store.DB) {
		r := newReceiver(t)
		w := newWorldOn(t, open())
		sender, err := webhook.New(webhook.Options{RootCAs: r.roots})
		if err != nil {
			t.Fatal(err)
		}
		w.sender = sender
		w.Options = func(o *hub.Options) { o.PrivateHosts = []string{"127.0.0.1"} }
		w.reopen(t)
		db := open()
		other := w.hooksOf(w.HubOn(t, db, notify.NewLocal()), db)
		alice := w.Person(t, "alice")
		conv := w.Direct(t, w.Reviewer, "alice/planner")
		hooks := 3
		for i := range hooks {
			if _, _, err := w.hooks.Add(ctx, alice, "planner", r.srv.URL+"/"+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
		sends := webhook.Burst // each endpoint's calls within one server's burst
		for i := range sends {
			w.Send(t, w.Reviewer, conv, "message "+strconv.Itoa(i))
		}
		here, there := runWebhooks(t, w.hooks), runWebhooks(t, other)
		for range hooks * sends {
			select {
			case <-here:
			case <-there:
			case <-time.After(20 * time.Second):
				t.Fatalf("not every call was recorded within 20 s: %d calls made", len(r.got()))
			}
		}
		views, err := w.hooks.List(ctx, alice, "planner")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range views {
			if v.Pending != 0 {
				t.Errorf("%s has %d calls still to make", v.ID, v.Pending)
			}
		}
		seen := map[string]int{}
		for _, c := range r.got() {
			seen[c.header.Get("webhook-id")]++
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s was made %d times", id, n)
			}
		}
		if len(seen) != hooks*sends {
			t.Errorf("%d calls made, want %d", len(seen), hooks*sends)
		}
	})
}

// TestWebhookRetriesBesideOthers: a failing endpoint's call comes back on
// its backoff schedule with its webhook-id, while another endpoint's calls
// are made in the same steps without waiting for it.
func TestWebhookRetriesBesideOthers(t *testing.T) {
	r := newReceiver(t)
	w := hookWorld(t, r, nil, "127.0.0.1")
	alice := w.Person(t, "alice")
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	failing, _, err := w.hooks.Add(ctx, alice, "planner", r.srv.URL+"/failing")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.hooks.Add(ctx, alice, "reviewer", r.srv.URL+"/ok"); err != nil {
		t.Fatal(err)
	}
	r.answer(http.StatusBadGateway)
	w.Send(t, w.Reviewer, conv, "for the planner")
	if pass := w.deliver(t); outcomes(pass)[webhook.Failed] != 1 {
		t.Fatalf("the first call: %+v; want it failed", pass)
	}
	r.answer(http.StatusOK)
	// 7 s on: the retry is not due (8–12 s), the reviewer's call is made.
	w.Clock.Advance(7 * time.Second)
	w.Send(t, w.Planner, conv, "for the reviewer")
	if pass := w.deliver(t); pass.Claimed != 1 || outcomes(pass)[webhook.Delivered] != 1 {
		t.Errorf("7 s after the failure: %+v; want only the reviewer's call, delivered", pass)
	}
	w.Clock.Advance(6 * time.Second)
	if pass := w.deliver(t); pass.Claimed != 1 || outcomes(pass)[webhook.Delivered] != 1 {
		t.Errorf("13 s after the failure: %+v; want the retry, delivered", pass)
	}
	calls := r.got()
	if len(calls) != 3 || calls[0].header.Get("webhook-id") != calls[2].header.Get("webhook-id") {
		t.Fatalf("%d calls; want the planner's, the reviewer's, then the planner's again with the same webhook-id", len(calls))
	}
	views, _ := w.hooks.List(ctx, alice, "planner")
	if views[0].ID != failing.ID || len(views[0].Attempts) != 2 || views[0].Attempts[0].Status != 200 || views[0].Attempts[1].Status != 502 {
		t.Errorf("the failing endpoint's log: %+v", views[0].Attempts)
	}
}

// TestWebhookDisabledOnce: an endpoint's calls that give up side by side
// disable it once, and its owner hears webhook.disabled once.
func TestWebhookDisabledOnce(t *testing.T) {
	r := newReceiver(t)
	r.answer(http.StatusServiceUnavailable)
	w := hookWorld(t, r, nil, "127.0.0.1")
	alice := w.Person(t, "alice")
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	if _, _, err := w.hooks.Add(ctx, alice, "planner", r.srv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	w.Send(t, w.Reviewer, conv, "one")
	w.Send(t, w.Reviewer, conv, "two")
	gaveUp := 0
	for range 100 {
		pass := w.deliver(t)
		if gaveUp += pass.Outcomes[webhook.GaveUp]; gaveUp > 0 {
			if pass.Claimed != 2 {
				t.Fatalf("the last step claimed %d calls; want both, giving up side by side", pass.Claimed)
			}
			break
		}
		w.Clock.Advance(webhook.Retry.Max * 6 / 5)
	}
	if gaveUp != 2 {
		t.Fatalf("%d calls gave up, want 2", gaveUp)
	}
	told := 0
	for _, e := range storetest.EventsAfter(t, w.Store, alice.ID, hub.Pos{}, 1000) {
		if e.Type == hub.EventWebhookDisabled {
			told++
		}
	}
	if told != 1 {
		t.Errorf("the owner heard webhook.disabled %d times, want once", told)
	}
}
