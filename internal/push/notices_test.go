package push_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"maps"
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
	"github.com/palaverhq/palaver/internal/push/pushtest"
)

var ctx = context.Background()

// noticesWorld is the leaves' world whose hub resolves names from names
// and lets privateHosts through its egress policy, with its Notices
// sending through sender (nil: none).
func noticesWorld(t *testing.T, names pushtest.Names, sender *push.Sender, privateHosts ...string) (*hubtest.World, *push.Notices) {
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
	names := pushtest.Names{"push.example": {netip.MustParseAddr("93.184.215.14")}, "inside.example": {netip.MustParseAddr("10.0.0.2")}}
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

// TestNotifyPrefs: quiet hours are the person's, within a day.
func TestNotifyPrefs(t *testing.T) {
	w, k := noticesWorld(t, pushtest.Names{}, nil)
	alice := w.Person(t, "alice")
	p, err := k.Prefs(ctx, alice)
	if err != nil || p != (hub.NotifyPrefs{}) {
		t.Fatalf("default prefs = %+v, %v; want no quiet hours", p, err)
	}
	if _, err := k.SetPrefs(ctx, alice, hub.NotifyPrefs{QuietFrom: 24 * 60}); err == nil {
		t.Fatal("quiet hours past midnight were taken")
	}
	set := hub.NotifyPrefs{QuietFrom: 22 * 60, QuietTo: 7 * 60, QuietUrgent: true}
	if _, err := k.SetPrefs(ctx, alice, set); err != nil {
		t.Fatal(err)
	}
	if got, _ := k.Prefs(ctx, alice); got != set {
		t.Fatalf("prefs = %+v", got)
	}
}

// TestNotifyTargetKinds: a new device or topic is told of every kind but
// every message; its person chooses for each on its own, in NotifyKinds'
// order, none at all too; a kind that is not one is refused, naming the
// kinds and changing nothing; only its person chooses; a browser
// subscribing again keeps its device's kinds; and kinds set for the
// person (REST's older PUT) are set on every target, or on none when one
// is wrong.
func TestNotifyTargetKinds(t *testing.T) {
	names := pushtest.Names{"push.example": {netip.MustParseAddr("93.184.215.14")}}
	w, k := noticesWorld(t, names, nil)
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")
	sub, err := k.AddPushSubscription(ctx, alice, "https://push.example/send/abc", pushKey, pushAuth, "Firefox")
	if err != nil {
		t.Fatal(err)
	}
	topic, err := k.AddNtfyTopic(ctx, alice, "https://push.example/alerts", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sub.Kinds, hub.DefaultNotifyKinds) || sub.Wants(hub.NotifyMessage) || !sub.Wants(hub.NotifyQuestion) {
		t.Fatalf("a new device hears of %v; want %v", sub.Kinds, hub.DefaultNotifyKinds)
	}
	kinds := func() map[string][]string {
		ts, err := k.Targets(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, t := range ts {
			out[t.ID] = t.Kinds
		}
		return out
	}
	got, err := k.SetTargetKinds(ctx, alice, sub.ID, []string{hub.NotifyMessage, hub.NotifyQuestion, hub.NotifyMessage})
	if err != nil || !slices.Equal(got.Kinds, []string{hub.NotifyQuestion, hub.NotifyMessage}) {
		t.Fatalf("SetTargetKinds = %+v, %v", got, err)
	}
	if all := kinds(); !slices.Equal(all[sub.ID], []string{hub.NotifyQuestion, hub.NotifyMessage}) || !slices.Equal(all[topic.ID], hub.DefaultNotifyKinds) {
		t.Fatalf("after choosing for the device: %v", all)
	}
	before := kinds()
	if _, err := k.SetTargetKinds(ctx, alice, topic.ID, []string{hub.NotifyBrake, "gossip"}); hub.AsError(err).Kind != hub.KindInvalid ||
		!strings.Contains(err.Error(), `"gossip" is not a kind of notification; choose from question, held`) {
		t.Fatalf("an unknown kind: %v", err)
	}
	if _, err := k.SetTargetKinds(ctx, bob, topic.ID, []string{hub.NotifyBrake}); hub.AsError(err).Kind != hub.KindNotFound {
		t.Fatalf("bob chose for alice's topic: %v", err)
	}
	if _, err := k.SetSettings(ctx, alice, "Europe/Berlin", hub.NotifyPrefs{}, []string{hub.NotifyHeld, "gossip"}); hub.AsError(err).Kind != hub.KindInvalid {
		t.Fatalf("an unknown kind for every target: %v", err)
	}
	if after := kinds(); !maps.EqualFunc(after, before, slices.Equal) || w.Person(t, "alice").TimeZone != "" {
		t.Fatalf("refused choices changed the kinds %v to %v, or the time zone", before, after)
	}
	if got, err := k.SetTargetKinds(ctx, alice, topic.ID, nil); err != nil || len(got.Kinds) != 0 || len(kinds()[topic.ID]) != 0 {
		t.Fatalf("choosing nothing: %+v, %v, kept %v", got, err, kinds()[topic.ID])
	}
	if _, err := k.AddPushSubscription(ctx, alice, "https://push.example/send/abc", pushKey, pushAuth, "Firefox again"); err != nil {
		t.Fatal(err)
	}
	ts, _ := k.Targets(ctx, alice)
	i := slices.IndexFunc(ts, func(t *hub.NotifyTarget) bool { return t.Kind == hub.TargetWebPush })
	if len(ts) != 2 || ts[i].Label != "Firefox again" || !slices.Equal(ts[i].Kinds, []string{hub.NotifyQuestion, hub.NotifyMessage}) {
		t.Fatalf("subscribing again: %+v", ts)
	}
	if _, err := k.SetSettings(ctx, alice, "", hub.NotifyPrefs{}, []string{hub.NotifyHeld}); err != nil {
		t.Fatal(err)
	}
	for id, ks := range kinds() {
		if !slices.Equal(ks, []string{hub.NotifyHeld}) {
			t.Errorf("kinds for every target: %s hears of %v", id, ks)
		}
	}
}

func TestTimeZoneAndQuietHours(t *testing.T) {
	w, k := noticesWorld(t, pushtest.Names{}, nil)
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
// the test's own, with alice on one of its topics, and any more services
// reachable.
func sendingWorld(t *testing.T, more ...*pushtest.Service) (*hubtest.World, *push.Notices, *hub.User, *pushtest.Service) {
	t.Helper()
	nt := pushtest.NewService(t, "ntfy.test", http.StatusOK)
	rs := append([]*pushtest.Service{nt}, more...)
	hosts := []string{}
	for _, r := range rs {
		hosts = append(hosts, r.Host)
	}
	w, k := noticesWorld(t, pushtest.Loopback(rs...), world(rs...), hosts...)
	alice := w.Person(t, "alice")
	if _, err := k.AddNtfyTopic(ctx, alice, nt.URL+"/alerts", "", ""); err != nil {
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
	if _, err := k.SetPrefs(ctx, alice, hub.NotifyPrefs{QuietFrom: 17 * 60, QuietTo: 19 * 60, QuietUrgent: true}); err != nil {
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
		len(nt.Requests()) != hub.NotifyDigestAfter+1 {
		t.Fatalf("sent %v; want %d questions and one digest", kinds, hub.NotifyDigestAfter)
	}
	w.Clock.Advance(time.Minute)
	ts, _ := k.Targets(ctx, alice)
	if _, err := k.SetTargetKinds(ctx, alice, ts[0].ID, []string{hub.NotifyBrake}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AskOwner(ctx, w.Planner, "Quiet now?", "", "", nil); err != nil {
		t.Fatal(err)
	}
	if deliver(t, k); len(sentKinds(t, k, alice, &seen)) != 0 {
		t.Fatal("a kind turned off notified")
	}
}

// TestNotifyKindsPerTarget: a person told on two topics, each with kinds
// of its own, hears of a kind only one chose only there, and of one both
// chose on both.
func TestNotifyKindsPerTarget(t *testing.T) {
	other := pushtest.NewService(t, "other.test", http.StatusOK)
	w, k, alice, nt := sendingWorld(t, other)
	second, err := k.AddNtfyTopic(ctx, alice, other.URL+"/phone", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := k.Targets(ctx, alice)
	if _, err := k.SetTargetKinds(ctx, alice, ts[0].ID, []string{hub.NotifyQuestion, hub.NotifyGrant}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.SetTargetKinds(ctx, alice, second.ID, []string{hub.NotifyGrant, hub.NotifyHeld}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AskOwner(ctx, w.Planner, "Which way?", "", "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.RequestGrant(ctx, w.Planner, "bob", true, false, "to ask bob"); err != nil {
		t.Fatal(err)
	}
	if p := deliver(t, k); p.Outcomes[push.Sent] != 3 {
		t.Fatalf("pass = %+v; want the question once and the grant twice", p)
	}
	tags := func(r *pushtest.Service) []string {
		var out []string
		for _, req := range r.Requests() {
			var msg struct{ Tags []string }
			if err := json.Unmarshal(req.Body, &msg); err != nil || len(msg.Tags) == 0 {
				t.Fatalf("%s took %s", r.Host, req.Body)
			}
			out = append(out, msg.Tags[0])
		}
		slices.Sort(out)
		return out
	}
	if got := tags(nt); !slices.Equal(got, []string{"key", "question"}) {
		t.Errorf("the first topic heard of %v; want the question and the grant", got)
	}
	if got := tags(other); !slices.Equal(got, []string{"key"}) {
		t.Errorf("the second topic heard of %v; want only the grant", got)
	}
}

// TestNotifyDeadTargetDelaysNoOther: a target that never answers holds up
// none of the person's other targets.
func TestNotifyDeadTargetDelaysNoOther(t *testing.T) {
	dead := pushtest.NewService(t, "dead.test", http.StatusOK)
	dead.Hang()
	w, k, alice, nt := sendingWorld(t, dead)
	if _, err := k.AddNtfyTopic(ctx, alice, dead.URL+"/alerts", "", ""); err != nil {
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
	for len(nt.Requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the live topic was not reached while the dead one hung")
		}
		runtime.Gosched()
	}
	if got := nt.Last(t); !strings.Contains(string(got.Body), "Are you there?") {
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
