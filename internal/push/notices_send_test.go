package push_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/push/pushtest"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// notified is a hub over a real store whose notifications go out through
// push.Notices to the services, with alice's agent alice/planner.
type notified struct {
	h       *hub.Hub
	k       *push.Notices
	db      hub.Store
	clock   *hubtest.Clock
	open    func() *push.Notices // a server started again: its hub and Notices
	alice   *hub.User
	planner *hub.Caller
}

func newNotified(t *testing.T, rs ...*pushtest.Service) *notified {
	t.Helper()
	n := &notified{db: storetest.Open(t), clock: hubtest.NewClock(hubtest.Start)}
	hosts := []string{}
	for _, r := range rs {
		hosts = append(hosts, r.Host)
	}
	n.open = func() *push.Notices {
		h, err := hub.New(context.Background(), hub.Options{Store: n.db, Waker: notify.NewLocal(), Clock: n.clock, Logger: slog.New(slog.DiscardHandler),
			PrivateHosts: hosts, Resolver: pushtest.Loopback(rs...)})
		if err != nil {
			t.Fatal(err)
		}
		n.h = h
		k := push.NewNotices(push.NoticesOptions{Hub: h, Store: n.db, Sender: world(rs...), Subject: "mailto:admin@hub.example", Logger: slog.New(slog.DiscardHandler)})
		if err := k.EnsureKeys(context.Background()); err != nil {
			t.Fatal(err)
		}
		return k
	}
	n.k = n.open()
	ctx := context.Background()
	var err error
	if n.alice, err = n.h.CreateUser(ctx, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if err := n.h.RecordPublicURL(ctx, "https://hub.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.h.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/planner", Description: "plans"}); err != nil {
		t.Fatal(err)
	}
	_, secret, err := n.h.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: "planner"})
	if err != nil {
		t.Fatal(err)
	}
	if n.planner, err = n.h.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *notified) deliver(t *testing.T) hub.Pass {
	t.Helper()
	p, err := n.k.Deliver(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (n *notified) ask(t *testing.T, question string) *hub.Question {
	t.Helper()
	q, err := n.h.AskOwner(context.Background(), n.planner, question, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestNotifyWebPush: an agent's question reaches its owner's browser
// through a push service of the test's own: a payload the browser's keys
// decrypt, with the question's words, the agent, the decision link and
// high urgency, signed with the server's VAPID key for the push service's
// origin and the subject given. The server's key pair is made once and
// kept: a hub opened again has the same one. A question notifies once,
// however often delivery runs.
func TestNotifyWebPush(t *testing.T) {
	ctx := context.Background()
	ps := pushtest.NewService(t, "push.test", http.StatusCreated)
	n := newNotified(t, ps)
	b := pushtest.NewBrowser(t)
	sub := b.Subscription(ps.URL + "/wpush/v2/abc")
	if _, err := n.k.AddPushSubscription(ctx, n.alice, sub.Endpoint, sub.P256dh, sub.Auth, "Chromium"); err != nil {
		t.Fatal(err)
	}
	pub, err := n.k.VAPIDPublicKey(ctx)
	if err != nil || pub == "" {
		t.Fatalf("VAPID key %q: %v", pub, err)
	}
	h := n.h
	if again, _ := n.open().VAPIDPublicKey(ctx); again != pub {
		t.Fatalf("a second start made another key pair: %s, %s", again, pub)
	}
	n.h = h
	n.ask(t, "Ship on Friday?")
	if p := n.deliver(t); p.Outcomes[push.Sent] != 1 {
		t.Fatalf("pass = %+v", p)
	}
	r := ps.Last(t)
	if r.Header.Get("Urgency") != "high" {
		t.Errorf("Urgency %q; want high for a question", r.Header.Get("Urgency"))
	}
	plain, err := b.Decrypt(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	var got push.Notification
	if err := json.Unmarshal(plain, &got); err != nil {
		t.Fatal(err)
	}
	if got.Title != "alice/planner asks you" || got.Summary != "Ship on Friday?" || got.Link != "https://hub.example/approvals" ||
		got.Priority != push.PriorityHigh || got.Action == nil || got.Action.Label != "Answer" {
		t.Errorf("payload = %s", plain)
	}
	keys := push.VAPIDKeys{Public: pub}
	pushtest.CheckVAPID(t, r.Header.Get("Authorization"), keys.Public, ps.URL, "mailto:admin@hub.example")

	if p := n.deliver(t); p.Claimed != 0 || len(ps.Requests()) != 0 {
		t.Fatalf("sent again: %+v", p)
	}
	log, err := n.k.Log(ctx, n.alice)
	if err != nil || len(log) != 1 || !log[0].OK() || log[0].Kind != hub.NotifyQuestion {
		t.Fatalf("log = %+v, %v", log, err)
	}
}

// TestNotifyGone: a subscription its push service answers 410 is removed,
// and nothing more is sent to it.
func TestNotifyGone(t *testing.T) {
	ctx := context.Background()
	ps := pushtest.NewService(t, "push.test", http.StatusGone)
	n := newNotified(t, ps)
	sub := pushtest.NewBrowser(t).Subscription(ps.URL + "/wpush/v2/gone")
	if _, err := n.k.AddPushSubscription(ctx, n.alice, sub.Endpoint, sub.P256dh, sub.Auth, ""); err != nil {
		t.Fatal(err)
	}
	n.ask(t, "Still there?")
	n.deliver(t)
	if ts, _ := n.k.Targets(ctx, n.alice); len(ts) != 0 {
		t.Fatalf("the gone subscription is kept: %+v", ts)
	}
	ps.Last(t)
	n.ask(t, "And now?")
	if p := n.deliver(t); p.Claimed != 0 || len(ps.Requests()) != 0 {
		t.Fatalf("sent to a removed subscription: %+v", p)
	}
}

// TestNotifyRestart: a notification committed with its event and not yet
// sent when the server stops is sent by the next start, once.
func TestNotifyRestart(t *testing.T) {
	ctx := context.Background()
	nt := pushtest.NewService(t, "ntfy.test", http.StatusOK)
	n := newNotified(t, nt)
	if _, err := n.k.AddNtfyTopic(ctx, n.alice, nt.URL+"/alerts", "tk_abc", ""); err != nil {
		t.Fatal(err)
	}
	n.ask(t, "Deploy?")
	n.k = n.open() // the first server stopped before sending
	if p := n.deliver(t); p.Outcomes[push.Sent] != 1 {
		t.Fatalf("pass = %+v", p)
	}
	r := nt.Last(t)
	if r.Header.Get("Authorization") != "Bearer tk_abc" {
		t.Errorf("Authorization %q", r.Header.Get("Authorization"))
	}
	var msg map[string]any
	if err := json.Unmarshal(r.Body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg["topic"] != "alerts" || msg["title"] != "alice/planner asks you" || msg["message"] != "Deploy?" || msg["priority"] != float64(4) ||
		msg["click"] != "https://hub.example/approvals" {
		t.Errorf("ntfy message = %s", r.Body)
	}
	acts, _ := msg["actions"].([]any)
	if len(acts) != 1 || acts[0].(map[string]any)["action"] != "view" {
		t.Errorf("actions = %v", msg["actions"])
	}
	n.k = n.open()
	if p := n.deliver(t); p.Claimed != 0 || len(nt.Requests()) != 0 {
		t.Fatalf("sent twice across a restart: %+v", p)
	}
}

// TestNotifyTest: the test a person asks for reaches each of their devices
// and topics at once — their ntfy topic and their browser through its push
// service — though they chose to hear of nothing and are in their quiet
// hours; with neither, it is refused saying to add one.
func TestNotifyTest(t *testing.T) {
	ctx := context.Background()
	nt := pushtest.NewService(t, "ntfy.test", http.StatusOK)
	ps := pushtest.NewService(t, "push.test", http.StatusCreated)
	n := newNotified(t, nt, ps)
	if _, err := n.k.Test(ctx, n.alice); hub.AsError(err).Code != "no_targets" || !strings.Contains(err.Error(), "add a device or an ntfy topic") {
		t.Fatalf("a test with nowhere to go: %v", err)
	}
	if _, err := n.k.AddNtfyTopic(ctx, n.alice, nt.URL+"/alerts", "", ""); err != nil {
		t.Fatal(err)
	}
	b := pushtest.NewBrowser(t)
	sub := b.Subscription(ps.URL + "/wpush/v2/abc")
	if _, err := n.k.AddPushSubscription(ctx, n.alice, sub.Endpoint, sub.P256dh, sub.Auth, "Chromium"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.k.SetSettings(ctx, n.alice, "", hub.NotifyPrefs{QuietFrom: 0, QuietTo: 23*60 + 59}, []string{}); err != nil {
		t.Fatal(err)
	}
	if got, err := n.k.Test(ctx, n.alice); err != nil || got != 2 {
		t.Fatalf("TestNotification = %d, %v; want 2 queued", got, err)
	}
	if p := n.deliver(t); p.Outcomes[push.Sent] != 2 {
		t.Fatalf("pass = %+v", p)
	}
	var msg map[string]any
	if err := json.Unmarshal(nt.Last(t).Body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg["topic"] != "alerts" || msg["title"] != "A test from Palaver" || msg["priority"] != float64(3) || msg["click"] != "https://hub.example/settings#notify" {
		t.Errorf("ntfy message = %v", msg)
	}
	plain, err := b.Decrypt(ps.Last(t).Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plain), "A test from Palaver") {
		t.Errorf("the pushed payload %s is not the test", plain)
	}
	log, err := n.k.Log(ctx, n.alice)
	if err != nil || len(log) != 2 || log[0].Kind != hub.NotifyTest || !log[0].OK() {
		t.Errorf("the delivery log: %+v, %v", log, err)
	}
	// Each test is one of its own.
	if _, err := n.k.Test(ctx, n.alice); err != nil {
		t.Fatal(err)
	}
	if p := n.deliver(t); p.Outcomes[push.Sent] != 2 {
		t.Fatalf("a second test: pass = %+v", p)
	}
}
