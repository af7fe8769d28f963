package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/store/storetest"
	"github.com/palaverhq/palaver/internal/webhook"
)

// TestWebhookWakesAnIdleAgent: a message for an agent with no wait parked
// makes one correctly signed call naming the event without its words,
// whose cursor hands the event over; the sender's own words wake no
// endpoint of its own; and while a wait is parked, nothing is called.
func TestWebhookWakesAnIdleAgent(t *testing.T) {
	r := newReceiver(t)
	w := hookWorld(t, r, nil, "127.0.0.1")
	alice := w.Person(t, "alice")
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	hook, secret, err := w.hooks.Add(ctx, alice, "planner", r.srv.URL+"/wake?agent=planner")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.hooks.Add(ctx, alice, "reviewer", r.srv.URL+"/reviewer"); err != nil {
		t.Fatal(err)
	}

	sent := w.Send(t, w.Reviewer, conv, "the release notes are ready for a look")
	if pass := w.deliver(t); pass.Claimed != 1 || outcomes(pass)[webhook.Delivered] != 1 {
		t.Fatalf("the pass: %+v; want one call delivered (the planner's, not the sender's own)", pass)
	}
	calls := r.got()
	if len(calls) != 1 {
		t.Fatalf("%d calls, want 1", len(calls))
	}
	c := calls[0]
	p := verify(t, secret, c)
	if p.Type != hub.EventMessageNew || p.Data.Agent != "alice/planner" || p.Data.ConversationID != conv || p.Data.MessageID != sent.Message.ID || p.Data.Cursor == "" {
		t.Errorf("the payload: %+v", p)
	}
	if strings.Contains(string(c.body), "release notes") {
		t.Errorf("the payload carries the message's words: %s", c.body)
	}
	if ts, _ := strconv.ParseInt(c.header.Get("webhook-timestamp"), 10, 64); ts != w.Clock.Now().Unix() {
		t.Errorf("webhook-timestamp %d, want the hub's clock %d", ts, w.Clock.Now().Unix())
	}
	// The agent, woken, waits from the cursor and gets the event first.
	got, err := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: &p.Data.Cursor})
	if err != nil || len(got.Events) == 0 || got.Events[0].MessageID != sent.Message.ID || got.Events[0].Message.Body == "" {
		var he *hub.Error
		errors.As(err, &he)
		t.Fatalf("waiting from the call's cursor: %+v, %v (%+v)", got, err, he)
	}
	if pass := w.deliver(t); pass.Claimed != 0 {
		t.Errorf("a delivered call was claimed again: %+v", pass)
	}
	views, err := w.hooks.List(ctx, alice, "planner")
	if err != nil || len(views) != 1 || views[0].ID != hook.ID || views[0].Pending != 0 || len(views[0].Attempts) != 1 ||
		views[0].Attempts[0].Status != 200 || views[0].Attempts[0].CallID != c.header.Get("webhook-id") {
		t.Errorf("the delivery log: %+v, %v", views, err)
	}

	// A wait parked: the event goes to it, and nobody is called.
	done := make(chan *hub.WaitResult)
	go func() {
		res, err := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: &got.Cursor, Timeout: 30 * time.Second})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	w.Parked(t, 1)
	second := w.Send(t, w.Reviewer, conv, "one more thing")
	if res := <-done; res == nil || len(res.Events) != 1 || res.Events[0].MessageID != second.Message.ID {
		t.Fatalf("the parked wait: %+v", res)
	}
	if pass := w.deliver(t); pass.Claimed != 0 || len(r.got()) != 1 {
		t.Errorf("with a wait parked: %+v, %d calls; want none", pass, len(r.got()))
	}
}

// TestWebhookRetries: a receiver answering 500 is called again on the
// backoff schedule (the hub's clock, no sleeping) with the same
// webhook-id; a server stopping mid-call, and a new hub over the same
// store, lose nothing; once it answers 200 the call is done.
func TestWebhookRetries(t *testing.T) {
	r := newReceiver(t)
	w := hookWorld(t, r, nil, "127.0.0.1")
	alice := w.Person(t, "alice")
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	_, secret, err := w.hooks.Add(ctx, alice, "planner", r.srv.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	sent := w.Send(t, w.Reviewer, conv, "please review")

	// The server stops while the first call is in flight: nothing is
	// recorded, and the call's claim lapses.
	r.mu.Lock()
	r.hold, r.held = make(chan struct{}), make(chan struct{}, 1)
	r.mu.Unlock()
	stopping, stop := context.WithCancel(ctx)
	passed := make(chan hub.Pass)
	go func() {
		pass, _ := w.hooks.Deliver(stopping)
		passed <- pass
	}()
	<-r.held
	stop()
	if pass := <-passed; len(pass.Outcomes) != 0 {
		t.Errorf("a pass stopped mid-call counted %v", pass.Outcomes)
	}
	r.mu.Lock()
	close(r.hold)
	r.hold = nil
	r.mu.Unlock()

	w.reopen(t) // a new server over the same database
	r.answer(http.StatusInternalServerError)
	if pass := w.deliver(t); pass.Claimed != 0 {
		t.Errorf("a call claimed by the stopped server was sent again within its lease: %+v", pass)
	}
	w.Clock.Advance(2 * time.Minute)
	if pass := w.deliver(t); outcomes(pass)[webhook.Failed] != 1 {
		t.Fatalf("after the lease: %+v; want one failed call", pass)
	}
	// The first retry is due 8–12 s later (10 s ± 20 %), not before.
	w.Clock.Advance(7 * time.Second)
	if pass := w.deliver(t); pass.Claimed != 0 {
		t.Errorf("retried after 7 s: %+v", pass)
	}
	w.Clock.Advance(6 * time.Second)
	if pass := w.deliver(t); outcomes(pass)[webhook.Failed] != 1 {
		t.Errorf("13 s after failing: %+v; want the retry", pass)
	}
	w.reopen(t)
	// The second retry waits 16–24 s.
	w.Clock.Advance(15 * time.Second)
	if pass := w.deliver(t); pass.Claimed != 0 {
		t.Errorf("retried after 15 s: %+v", pass)
	}
	w.Clock.Advance(10 * time.Second)
	r.answer(http.StatusOK)
	if pass := w.deliver(t); outcomes(pass)[webhook.Delivered] != 1 {
		t.Fatalf("the third retry: %+v; want it delivered", pass)
	}
	w.Clock.Advance(time.Hour)
	if pass := w.deliver(t); pass.Claimed != 0 {
		t.Errorf("a delivered call came back: %+v", pass)
	}

	calls := r.got()
	if len(calls) != 4 {
		t.Fatalf("%d calls, want 4 (stopped, two 500s, 200)", len(calls))
	}
	id := calls[0].header.Get("webhook-id")
	for i, c := range calls {
		p := verify(t, secret, c)
		if c.header.Get("webhook-id") != id || p.Data.MessageID != sent.Message.ID {
			t.Errorf("call %d: webhook-id %q for %s; want every retry to carry %q", i, c.header.Get("webhook-id"), p.Data.MessageID, id)
		}
	}
	views, err := w.hooks.List(ctx, alice, "planner")
	if err != nil || len(views) != 1 {
		t.Fatal(views, err)
	}
	var statuses []int
	for _, a := range views[0].Attempts {
		statuses = append(statuses, a.Status)
		if a.CallID != id {
			t.Errorf("an attempt logged for %s, want %s", a.CallID, id)
		}
	}
	if got := strconv.Itoa(len(statuses)); got != "3" || statuses[0] != 200 || statuses[1] != 500 || statuses[2] != 500 {
		t.Errorf("the log's statuses, newest first: %v; want [200 500 500]", statuses)
	}
}

// TestWebhookDisabledAfterADay: calls that fail for 24 hours disable the
// endpoint; its owner hears webhook.disabled (and sees it on the Bridge
// and the agent's page); no more calls are queued until it is enabled.
func TestWebhookDisabledAfterADay(t *testing.T) {
	r := newReceiver(t)
	r.answer(http.StatusServiceUnavailable)
	w := hookWorld(t, r, nil, "127.0.0.1")
	alice := w.Person(t, "alice")
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	hook, _, err := w.hooks.Add(ctx, alice, "planner", r.srv.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	start := w.Clock.Now()
	w.Send(t, w.Reviewer, conv, "are you there?")
	failed, gaveUp := 0, 0
	for range 100 {
		pass := w.deliver(t)
		failed += pass.Outcomes[webhook.Failed]
		gaveUp += pass.Outcomes[webhook.GaveUp]
		if gaveUp > 0 {
			break
		}
		w.Clock.Advance(webhook.Retry.Max * 6 / 5) // past the longest wait
	}
	if gaveUp != 1 || failed < 9 {
		t.Fatalf("%d failed, %d gave up; want retries for a day, then one give-up", failed, gaveUp)
	}
	views, err := w.hooks.List(ctx, alice, "planner")
	if err != nil || len(views) != 1 {
		t.Fatal(views, err)
	}
	v := views[0]
	if v.Enabled() || v.Pending != 0 || !strings.Contains(v.DisabledReason, "24 hours") || !strings.Contains(v.DisabledReason, "answered 503") {
		t.Errorf("the endpoint after a day of failures: %+v", v.Webhook)
	}
	if d := v.DisabledAt.Sub(start); d < 24*time.Hour || d > 24*time.Hour+webhook.Retry.Max*6/5 {
		t.Errorf("disabled %v after the call was made; want once it had failed for 24 h", d)
	}
	if last := v.Attempts[0]; last.At.Sub(start) != 24*time.Hour && last.At.Before(start.Add(24*time.Hour)) {
		t.Errorf("the last attempt at %v after the first; want it at 24 h", last.At.Sub(start))
	}

	events := storetest.EventsAfter(t, w.Store, alice.ID, hub.Pos{}, 1000)
	var told *hub.Event
	for _, e := range events {
		if e.Type == hub.EventWebhookDisabled {
			told = e
		}
	}
	if told == nil || !strings.Contains(string(told.Data), `"webhook_id":"`+hook.ID+`"`) || !strings.Contains(string(told.Data), `"agent":"alice/planner"`) {
		t.Fatalf("the owner's webhook.disabled: %+v", told)
	}
	b, err := overview.New(w.Hub, w.Store).Bridge(ctx, alice)
	if err != nil || len(b.Activity) == 0 || b.Activity[0].Kind != overview.ActivityWebhook || b.Activity[0].Agent != "alice/planner" || b.Activity[0].Text != v.DisabledReason {
		t.Errorf("the Bridge's latest activity: %+v, %v", b.Activity, err)
	}

	// Off: new events queue nothing. On again: they do.
	w.Send(t, w.Reviewer, conv, "hello?")
	if pass := w.deliver(t); pass.Claimed != 0 {
		t.Errorf("a disabled endpoint was called: %+v", pass)
	}
	if _, err := w.hooks.Enable(ctx, alice, "planner", hook.ID); err != nil {
		t.Fatal(err)
	}
	r.answer(http.StatusOK)
	n := len(r.got())
	w.Send(t, w.Reviewer, conv, "back?")
	if pass := w.deliver(t); outcomes(pass)[webhook.Delivered] != 1 || len(r.got()) != n+1 {
		t.Errorf("enabled again: %+v", pass)
	}
}

// TestWebhookURLs: an endpoint is saved only at https on a public address
// — by its address, or every address its name resolves to — unless the
// admin let its host through; and at connect time the guard refuses what
// the allow-list no longer lets through.
func TestWebhookURLs(t *testing.T) {
	r := newReceiver(t)
	names := resolver{
		"hooks.example.com": {netip.MustParseAddr("93.184.215.14")},
		"intranet.example":  {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("192.168.1.20")},
		"metadata.example":  {netip.MustParseAddr("169.254.169.254")},
		"nat64.example":     {netip.MustParseAddr("64:ff9b::a9fe:a9fe")},
	}
	w := hookWorld(t, r, names)
	alice := w.Person(t, "alice")
	for _, tc := range []struct{ url, want string }{
		{"http://hooks.example.com/x", "not https"},
		{"hooks.example.com/x", "not an absolute URL"},
		{"https://user:pw@hooks.example.com/x", "user info"},
		{"https://hooks.example.com/x#frag", "fragment"},
		{"https://10.1.2.3/hook", "is at 10.1.2.3, a private-use address (10.0.0.0/8); webhooks call only globally reachable addresses"},
		{"https://[::1]:8443/hook", "is at ::1, a loopback address (::1/128)"},
		{"https://[::ffff:127.0.0.1]/hook", "is at ::ffff:127.0.0.1, which carries 127.0.0.1, a loopback address (127.0.0.0/8)"},
		{"https://[::127.0.0.1]/hook", "is at ::7f00:1, which carries 127.0.0.1, a loopback address (127.0.0.0/8)"},
		{"https://[64:ff9b::a9fe:a9fe]/latest", "is at 64:ff9b::a9fe:a9fe, which carries 169.254.169.254, a link-local address (169.254.0.0/16)"},
		{"https://[2002:c0a8:114::1]/hook", "is at 2002:c0a8:114::1, which carries 192.168.1.20, a private-use address (192.168.0.0/16)"},
		{"https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook", "which carries 127.0.0.1, a loopback address (127.0.0.0/8)"},
		{"https://100.64.0.1/hook", "is at 100.64.0.1, a shared (carrier-grade NAT) address (100.64.0.0/10)"},
		{"https://192.0.0.1/hook", "is at 192.0.0.1, an IPv4 service continuity address (192.0.0.0/29)"},
		{"https://192.0.2.1/hook", "is at 192.0.2.1, a documentation address (192.0.2.0/24)"},
		{"https://198.18.0.1/hook", "is at 198.18.0.1, a benchmarking address (198.18.0.0/15)"},
		{"https://240.0.0.1/hook", "is at 240.0.0.1, a reserved address (240.0.0.0/4)"},
		{"https://intranet.example/hook", "is at 192.168.1.20, a private-use address"},
		{"https://metadata.example/latest", "is at 169.254.169.254, a link-local address"},
		{"https://nat64.example/latest", "is at 64:ff9b::a9fe:a9fe, which carries 169.254.169.254"},
		{"https://nowhere.example/hook", "could not be resolved"},
		{r.srv.URL + "/hook", "is at 127.0.0.1, a loopback address"},
		{"", "url"},
	} {
		if _, _, err := w.hooks.Add(ctx, alice, "planner", tc.url); hubtest.Code(err) != "invalid_argument" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%q) = %v; want invalid saying %q", tc.url, err, tc.want)
		}
	}
	if ws, _ := w.hooks.List(ctx, alice, "planner"); len(ws) != 0 {
		t.Fatalf("refused URLs saved %d webhooks", len(ws))
	}
	for i := range webhook.MaxPerAgent {
		if _, _, err := w.hooks.Add(ctx, alice, "planner", "https://hooks.example.com/"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := w.hooks.Add(ctx, alice, "planner", "https://hooks.example.com/more"); hubtest.Code(err) != "invalid_argument" {
		t.Errorf("webhook %d: %v; want invalid", webhook.MaxPerAgent+1, err)
	}
	bob, _ := w.Hub.User(ctx, "bob")
	if _, _, err := w.hooks.Add(ctx, bob, "planner", "https://hooks.example.com/bob"); hubtest.Code(err) != "not_found" {
		t.Errorf("bob gives alice's agent a webhook: %v", err)
	}
	views, _ := w.hooks.List(ctx, alice, "planner")
	if _, err := w.hooks.Remove(ctx, bob, "helper", views[0].ID); hubtest.Code(err) != "not_found" {
		t.Errorf("bob removes alice's webhook through his agent: %v", err)
	}
	if _, err := w.hooks.Remove(ctx, alice, "planner", views[0].ID); err != nil {
		t.Fatal(err)
	}
	if vs, _ := w.hooks.List(ctx, alice, "planner"); len(vs) != webhook.MaxPerAgent-1 {
		t.Errorf("after removing one: %d", len(vs))
	}
	for _, v := range views[1:] { // nothing is to call their public address
		if _, err := w.hooks.Remove(ctx, alice, "planner", v.ID); err != nil {
			t.Fatal(err)
		}
	}

	// Let through by the admin, saved; the admin takes it back, and the
	// next call is refused when connecting.
	w.sender, _ = webhook.New(webhook.Options{RootCAs: r.roots})
	w.Options = func(o *hub.Options) { o.PrivateHosts = []string{"127.0.0.1"} }
	w.reopen(t)
	if _, _, err := w.hooks.Add(ctx, alice, "reviewer", r.srv.URL+"/hook"); err != nil {
		t.Fatalf("a let-through host: %v", err)
	}
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	w.sender, _ = webhook.New(webhook.Options{RootCAs: r.roots})
	w.Options = nil
	w.reopen(t)
	w.Send(t, w.Planner, conv, "hi")
	if pass := w.deliver(t); outcomes(pass)[webhook.Failed] == 0 || len(r.got()) != 0 {
		t.Fatalf("no longer let through: %+v, %d calls reached the receiver", pass, len(r.got()))
	}
	vs, _ := w.hooks.List(ctx, alice, "reviewer")
	if len(vs) != 1 || len(vs[0].Attempts) == 0 || !strings.Contains(vs[0].Attempts[0].Error, "refusing to connect to 127.0.0.1: it is at 127.0.0.1, a loopback address") {
		t.Errorf("the refused call's log: %+v", vs)
	}
}

// TestRunWebhooks: the delivery loop calls at once when a change here
// queues a call — not at its next tick — counts the outcome, and returns
// when its context ends.
func TestRunWebhooks(t *testing.T) {
	r := newReceiver(t)
	w := hookWorld(t, r, nil, "127.0.0.1")
	alice := w.Person(t, "alice")
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	if _, _, err := w.hooks.Add(ctx, alice, "planner", r.srv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(ctx)
	counted := make(chan string, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.hooks.Run(run, time.Hour, func(outcome string, n int) { counted <- outcome + ":" + strconv.Itoa(n) })
	}()
	w.Send(t, w.Reviewer, conv, "wake up")
	select {
	case <-r.came:
	case <-time.After(10 * time.Second):
		t.Fatal("no call within 10 s of the send; the loop's ticks are an hour apart")
	}
	select {
	case got := <-counted:
		if got != "delivered:1" {
			t.Errorf("counted %s, want delivered:1", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the delivered call was not counted")
	}
	stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return when its context ended")
	}
}

// TestWebhookDocsStateTheNumbers: docs/webhooks.md gives the hub's numbers
// for webhooks, so the page cannot drift from what the server does.
func TestWebhookDocsStateTheNumbers(t *testing.T) {
	doc, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	r := webhook.Retry
	for _, want := range []string{
		fmt.Sprintf("| endpoints per agent | %d |", webhook.MaxPerAgent),
		fmt.Sprintf("An agent has at most %d endpoints.", webhook.MaxPerAgent),
		fmt.Sprintf("after about %d s, then twice as long each time (each wait moved at random by up to ±%d %%), at most %d h apart", int(r.First.Seconds()), int(r.Jitter*100), int(r.Max.Hours())),
		fmt.Sprintf("| retried for | %d h after the call was queued", int(r.For.Hours())),
		fmt.Sprintf("| one call's time limit | %d s |", int(webhook.Timeout.Seconds())),
		fmt.Sprintf("within %d s", int(webhook.Timeout.Seconds())),
		fmt.Sprintf("| calls to one endpoint | %d a second, %d at once, from each server process |", webhook.Rate, webhook.Concurrency),
		fmt.Sprintf("| attempts in the delivery log | the latest %d per endpoint |", webhook.LogSize),
		fmt.Sprintf("still failing %d hours after", int(r.For.Hours())),
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/webhooks.md does not say %q", want)
		}
	}
	for _, o := range webhook.Outcomes {
		if !strings.Contains(string(doc), "`"+o+"`") {
			t.Errorf("docs/webhooks.md does not name the outcome %s", o)
		}
	}
}

// TestWebhookMadeOnAnotherReplica: this hub knows which agents have
// endpoints without looking at every send; one made through another hub
// over the same store is called for once a second has passed on this one.
func TestWebhookMadeOnAnotherReplica(t *testing.T) {
	r := newReceiver(t)
	w := hookWorld(t, r, nil, "127.0.0.1")
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	w.Send(t, w.Reviewer, conv, "before any endpoint") // this hub reads that none exist
	here, hereHooks := w.Hub, w.hooks
	w.reopen(t) // another replica over the same store
	if _, _, err := w.hooks.Add(ctx, w.Person(t, "alice"), "planner", r.srv.URL+"/wake"); err != nil {
		t.Fatal(err)
	}
	other, otherHooks := w.Hub, w.hooks
	w.Hub, w.hooks = here, hereHooks
	w.Send(t, w.Reviewer, conv, "within the second")
	if pass := w.deliver(t); pass.Claimed != 0 {
		t.Errorf("a call within the second the set is trusted: %+v", pass)
	}
	w.Clock.Advance(time.Second)
	w.Send(t, w.Reviewer, conv, "after it")
	if pass := w.deliver(t); pass.Claimed != 1 {
		t.Errorf("after a second: %+v, want the new endpoint called", pass)
	}
	w.Hub, w.hooks = other, otherHooks
	w.Send(t, w.Reviewer, conv, "on the replica that made it")
	if pass := w.deliver(t); pass.Claimed != 1 {
		t.Errorf("on the replica that made the endpoint: %+v, want it called at once", pass)
	}
}
