package push_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/push"
)

var ctx = context.Background()

// noticesWorld is the leaves' world whose hub resolves names from names
// and lets privateHosts through its egress policy, with its Notices
// sending through sender (nil: none).
func noticesWorld(t *testing.T, names names, sender *push.Sender, privateHosts ...string) (*hubtest.World, *push.Notices) {
	t.Helper()
	w := hubtest.Open(t, hub.DefaultSettings())
	w.Options = func(o *hub.Options) { o.PrivateHosts, o.Resolver = privateHosts, names }
	w.Reopen(t)
	k := push.NewNotices(push.NoticesOptions{Hub: w.Hub, Store: w.Store, Sender: sender, Logger: slog.New(slog.DiscardHandler)})
	if err := k.EnsureKeys(ctx); err != nil {
		t.Fatal(err)
	}
	return w, k
}

var (
	pushKey  = base64.RawURLEncoding.EncodeToString(append([]byte{4}, make([]byte, 64)...))
	pushAuth = base64.RawURLEncoding.EncodeToString(make([]byte, 16))
)

func TestNotifyTargets(t *testing.T) {
	names := names{"push.example": {netip.MustParseAddr("93.184.215.14")}, "inside.example": {netip.MustParseAddr("10.0.0.2")}}
	w, k := noticesWorld(t, names, nil, "127.0.0.1")
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")

	sub, err := k.AddPushSubscription(ctx, alice, "https://push.example/send/abc", pushKey, pushAuth, "Firefox on Linux")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sub.ID, "nt_") || sub.Kind != hub.TargetWebPush || sub.Label != "Firefox on Linux" {
		t.Fatalf("subscription = %+v", sub)
	}
	w.Clock.Advance(time.Millisecond)
	// The same endpoint again replaces its keys: one device, not two.
	if _, err := k.AddPushSubscription(ctx, alice, "https://push.example/send/abc", pushKey, pushAuth, "Firefox"); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(time.Millisecond)
	topic, err := k.AddNtfyTopic(ctx, alice, "https://127.0.0.1:8443/alerts", "tk_secret", "")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := k.Targets(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Label != "Firefox" || ts[1].ID != topic.ID || ts[1].Token != "tk_secret" {
		t.Fatalf("targets = %+v", ts)
	}

	for _, c := range []struct{ url, p256dh, auth, want string }{
		{"http://push.example/x", pushKey, pushAuth, "is not https"},
		{"https://inside.example/x", pushKey, pushAuth, "lets the host inside.example through"},
		{"https://nowhere.example/x", pushKey, pushAuth, "could not be resolved"},
		{"https://u:p@push.example/x", pushKey, pushAuth, "has user info"},
		{"https://push.example/x", "AAAA", pushAuth, "p256dh key is not 65 bytes"},
		{"https://push.example/x", pushKey, "", "auth key is not 16 bytes"},
	} {
		if _, err := k.AddPushSubscription(ctx, alice, c.url, c.p256dh, c.auth, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddPushSubscription(%s): %v, want %q", c.url, err, c.want)
		}
	}
	for _, c := range []struct{ url, token, want string }{
		{"https://127.0.0.1:8443/", "", "names no topic"},
		{"https://127.0.0.1:8443/a/b", "", "names no topic"},
		{"https://127.0.0.1:8443/a", "tk with space", "access token"},
		{"https://10.0.0.9/a", "", "lets the host 10.0.0.9 through"},
	} {
		if _, err := k.AddNtfyTopic(ctx, alice, c.url, c.token, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddNtfyTopic(%s): %v, want %q", c.url, err, c.want)
		}
	}
	if ts, _ := k.Targets(ctx, alice); len(ts) != 2 {
		t.Fatalf("refused targets were kept: %d", len(ts))
	}

	// Only its person removes a target.
	if _, err := k.RemoveTarget(ctx, bob, topic.ID); hub.AsError(err).Kind != hub.KindNotFound {
		t.Fatalf("bob removed alice's topic: %v", err)
	}
	if _, err := k.RemoveTarget(ctx, alice, topic.ID); err != nil {
		t.Fatal(err)
	}
	if ts, _ := k.Targets(ctx, alice); len(ts) != 1 || ts[0].Kind != hub.TargetWebPush {
		t.Fatalf("after remove: %+v", ts)
	}
}

func TestNotifyPrefs(t *testing.T) {
	w, k := noticesWorld(t, names{}, nil)
	alice := w.Person(t, "alice")
	p, err := k.Prefs(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	// Every kind but every message, until the person chooses.
	if p.Wants(hub.NotifyMessage) || !p.Wants(hub.NotifyQuestion) || len(p.Kinds) != len(hub.NotifyKinds)-1 {
		t.Fatalf("default prefs = %+v", p)
	}
	if _, err := k.SetPrefs(ctx, alice, hub.NotifyPrefs{Kinds: []string{"gossip"}}); err == nil || !strings.Contains(err.Error(), "choose from question, held") {
		t.Fatalf("unknown kind: %v", err)
	}
	if _, err := k.SetPrefs(ctx, alice, hub.NotifyPrefs{QuietFrom: 24 * 60}); err == nil {
		t.Fatal("quiet hours past midnight were taken")
	}
	set := hub.NotifyPrefs{Kinds: []string{hub.NotifyMessage, hub.NotifyQuestion}, QuietFrom: 22 * 60, QuietTo: 7 * 60, QuietUrgent: true}
	if _, err := k.SetPrefs(ctx, alice, set); err != nil {
		t.Fatal(err)
	}
	got, _ := k.Prefs(ctx, alice)
	if !slices.Equal(got.Kinds, []string{hub.NotifyQuestion, hub.NotifyMessage}) || got.QuietFrom != 22*60 || got.QuietTo != 7*60 || !got.QuietUrgent {
		t.Fatalf("prefs = %+v", got)
	}
	none := hub.NotifyPrefs{Kinds: nil}
	if _, err := k.SetPrefs(ctx, alice, none); err != nil {
		t.Fatal(err)
	}
	if got, _ := k.Prefs(ctx, alice); len(got.Kinds) != 0 {
		t.Fatalf("choosing nothing kept %v", got.Kinds)
	}
}

func TestTimeZoneAndQuietHours(t *testing.T) {
	w, k := noticesWorld(t, names{}, nil)
	alice := w.Person(t, "alice")
	if err := k.SetTimeZone(ctx, alice, "Mars/Olympus"); err == nil || !strings.Contains(err.Error(), "IANA name like Europe/Berlin") {
		t.Fatalf("bad zone: %v", err)
	}
	if err := k.SetTimeZone(ctx, alice, "Europe/Berlin"); err != nil {
		t.Fatal(err)
	}
	again := w.Person(t, "alice")
	if again.TimeZone != "Europe/Berlin" {
		t.Fatalf("time zone = %q", again.TimeZone)
	}
	loc := again.Location()
	p := hub.NotifyPrefs{QuietFrom: 22 * 60, QuietTo: 7 * 60}
	// 21:30 UTC is 22:30 in Berlin in November: quiet; 06:30 UTC is 07:30: not.
	late := time.Date(2026, 11, 1, 21, 30, 0, 0, time.UTC)
	if !p.Quiet(late, loc, hub.NotifyHeld) || p.Quiet(late, time.UTC, hub.NotifyHeld) {
		t.Fatal("quiet hours not read in the person's zone")
	}
	if p.Quiet(time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC), loc, hub.NotifyHeld) {
		t.Fatal("07:30 Berlin is quiet")
	}
	if end := p.QuietEnd(late, loc); !end.Equal(time.Date(2026, 11, 2, 6, 0, 0, 0, time.UTC)) {
		t.Fatalf("quiet end = %v", end)
	}
	if p.Quiet(late, loc, hub.NotifyQuestion) != true {
		t.Fatal("urgent kinds passed though the person did not ask")
	}
	p.QuietUrgent = true
	if p.Quiet(late, loc, hub.NotifyQuestion) || !p.Quiet(late, loc, hub.NotifyBrake) {
		t.Fatal("urgent exception wrong")
	}
	if err := k.SetTimeZone(ctx, alice, ""); err != nil || alice.Location() != time.UTC {
		t.Fatalf("empty zone: %v %v", err, alice.Location())
	}
}

// sendingWorld is a world whose notifications go out to an ntfy server of
// the test's own, with alice on one of its topics, and any more receivers
// reachable.
func sendingWorld(t *testing.T, more ...*receiver) (*hubtest.World, *push.Notices, *hub.User, *receiver) {
	t.Helper()
	nt := newReceiver(t, "ntfy.test", http.StatusOK)
	rs := append([]*receiver{nt}, more...)
	hosts := []string{}
	for _, r := range rs {
		hosts = append(hosts, r.host)
	}
	w, k := noticesWorld(t, loopback(rs), world(rs...), hosts...)
	alice := w.Person(t, "alice")
	if _, err := k.AddNtfyTopic(ctx, alice, nt.url+"/alerts", "", ""); err != nil {
		t.Fatal(err)
	}
	return w, k, alice, nt
}

func deliver(t *testing.T, k *push.Notices) hub.Pass {
	t.Helper()
	p, err := k.Deliver(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sentKinds are the kinds of the notifications sent since the log last
// had seen lines, oldest first.
func sentKinds(t *testing.T, k *push.Notices, u *hub.User, seen *int) []string {
	t.Helper()
	log, err := k.Log(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i := len(log) - 1 - *seen; i >= 0; i-- {
		if log[i].OK() {
			kinds = append(kinds, log[i].Kind)
		}
	}
	*seen = len(log)
	return kinds
}

// TestNotifyQuietHours: in the person's quiet hours (read in their time
// zone) a held-back kind waits for them to end; an urgent kind goes at
// once when they let urgent ones through.
func TestNotifyQuietHours(t *testing.T) {
	w, k, alice, _ := sendingWorld(t)
	if err := k.SetTimeZone(ctx, alice, "Asia/Tokyo"); err != nil { // 09:00 UTC is 18:00 in Tokyo
		t.Fatal(err)
	}
	if _, err := k.SetPrefs(ctx, alice, hub.NotifyPrefs{Kinds: hub.DefaultNotifyKinds, QuietFrom: 17 * 60, QuietTo: 19 * 60, QuietUrgent: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.RequestGrant(ctx, w.Planner, "bob", true, false, "to ask bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AskOwner(ctx, w.Planner, "Now?", "", "", nil); err != nil {
		t.Fatal(err)
	}
	seen := 0
	deliver(t, k)
	got := sentKinds(t, k, alice, &seen)
	if len(got) != 1 || got[0] != hub.NotifyQuestion {
		t.Fatalf("in quiet hours sent %v; want only the question", got)
	}
	w.Clock.Advance(59 * time.Minute) // 18:59 Tokyo
	if deliver(t, k); len(sentKinds(t, k, alice, &seen)) != 0 {
		t.Fatal("sent before the quiet hours ended")
	}
	w.Clock.Advance(time.Minute)
	deliver(t, k)
	if got := sentKinds(t, k, alice, &seen); len(got) != 1 || got[0] != hub.NotifyGrant {
		t.Fatalf("after the quiet hours: %v", got)
	}
}

// TestNotifyCoalescing: one notification per item, and past
// NotifyDigestAfter in a minute the rest become one digest; a kind the
// person turned off notifies no one.
func TestNotifyCoalescing(t *testing.T) {
	w, k, alice, nt := sendingWorld(t)
	for range hub.NotifyDigestAfter + 5 {
		if _, err := w.Hub.AskOwner(ctx, w.Planner, "Again?", "", "", nil); err != nil {
			t.Fatal(err)
		}
	}
	// Each target sends a few at once and so many a second: a second a pass.
	for range 10 {
		if deliver(t, k).Claimed == 0 {
			break
		}
		w.Clock.Advance(time.Second)
	}
	seen := 0
	got := sentKinds(t, k, alice, &seen)
	kinds := map[string]int{}
	for _, kind := range got {
		kinds[kind]++
	}
	if kinds[hub.NotifyQuestion] != hub.NotifyDigestAfter || kinds[hub.NotifyDigest] != 1 || len(got) != hub.NotifyDigestAfter+1 ||
		len(nt.requests()) != hub.NotifyDigestAfter+1 {
		t.Fatalf("sent %v; want %d questions and one digest", kinds, hub.NotifyDigestAfter)
	}
	w.Clock.Advance(time.Minute)
	if _, err := k.SetPrefs(ctx, alice, hub.NotifyPrefs{Kinds: []string{hub.NotifyBrake}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AskOwner(ctx, w.Planner, "Quiet now?", "", "", nil); err != nil {
		t.Fatal(err)
	}
	if deliver(t, k); len(sentKinds(t, k, alice, &seen)) != 0 {
		t.Fatal("a kind turned off notified")
	}
}

// TestNotifyDeadTargetDelaysNoOther: a target that never answers holds up
// none of the person's other targets.
func TestNotifyDeadTargetDelaysNoOther(t *testing.T) {
	dead := newReceiver(t, "dead.test", http.StatusOK)
	dead.hang = true
	w, k, alice, nt := sendingWorld(t, dead)
	if _, err := k.AddNtfyTopic(ctx, alice, dead.url+"/alerts", "", ""); err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { k.Run(run, time.Hour, nil); close(done) }()
	defer func() { stop(); <-done }()
	if _, err := w.Hub.AskOwner(ctx, w.Planner, "Are you there?", "", "", nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(nt.requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the live topic was not reached while the dead one hung")
		}
		runtime.Gosched()
	}
	if got := nt.last(t); !strings.Contains(string(got.Body), "Are you there?") {
		t.Fatalf("sent to the live topic: %s", got.Body)
	}
}

// TestNotifyPruned: notifications done with are pruned with the events,
// past the same retention; one still to send stays, however old, and so
// does one sent within the retention.
func TestNotifyPruned(t *testing.T) {
	w, k, alice, _ := sendingWorld(t)
	ts, err := k.Targets(ctx, alice)
	if err != nil || len(ts) != 1 {
		t.Fatalf("targets %v, %v", ts, err)
	}
	queue := func(item string, sent bool) {
		t.Helper()
		now := w.Clock.Now()
		n := &hub.Notification{ID: hub.NewID(hub.IDNotification, now), TargetID: ts[0].ID, UserID: alice.ID, Kind: hub.NotifyQuestion, Item: item,
			Payload: hub.NotifyPayload{Title: item, Path: "/approvals"}, CreatedAt: now, DueAt: now}
		err := w.Store.Update(ctx, func(tx hub.Tx) error {
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
	w.Clock.Advance(w.Settings.EventRetention + time.Hour)
	recent := w.Clock.Now()
	queue("sent just now", true)
	if err := w.Hub.PruneEvents(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := w.Store.RecentNotifications(ctx, alice.ID, recent.Add(-2*w.Settings.EventRetention))
	if err != nil {
		t.Fatal(err)
	}
	late, _ := w.Store.RecentNotifications(ctx, alice.ID, recent)
	due, _ := w.Store.DueNotifyTargets(ctx, w.Clock.Now())
	if all != 2 || late != 1 || len(due) != 1 {
		t.Fatalf("after pruning: %d kept, %d of them recent, %d targets with some to send; want the old one still to send and the recent one", all, late, len(due))
	}
}
