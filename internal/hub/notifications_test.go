package hub_test

import (
	"encoding/base64"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// notifyWorld is a world whose hub resolves names from names and lets
// privateHosts through its egress policy.
func notifyWorld(t *testing.T, names resolver, privateHosts ...string) *world {
	t.Helper()
	w := newWorld(t)
	w.options = func(o *hub.Options) { o.PrivateHosts, o.Resolver = privateHosts, names }
	w.reopen(t)
	return w
}

func person(t *testing.T, w *world, handle string) *hub.User {
	t.Helper()
	u, err := w.hub.User(ctx, handle)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

var (
	pushKey  = base64.RawURLEncoding.EncodeToString(append([]byte{4}, make([]byte, 64)...))
	pushAuth = base64.RawURLEncoding.EncodeToString(make([]byte, 16))
)

func TestNotifyTargets(t *testing.T) {
	names := resolver{"push.example": {netip.MustParseAddr("93.184.215.14")}, "inside.example": {netip.MustParseAddr("10.0.0.2")}}
	w := notifyWorld(t, names, "127.0.0.1")
	alice, bob := person(t, w, "alice"), person(t, w, "bob")

	sub, err := w.hub.AddPushSubscription(ctx, alice, "https://push.example/send/abc", pushKey, pushAuth, "Firefox on Linux")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sub.ID, "nt_") || sub.Kind != hub.TargetWebPush || sub.Label != "Firefox on Linux" {
		t.Fatalf("subscription = %+v", sub)
	}
	w.clock.Advance(time.Millisecond)
	// The same endpoint again replaces its keys: one device, not two.
	if _, err := w.hub.AddPushSubscription(ctx, alice, "https://push.example/send/abc", pushKey, pushAuth, "Firefox"); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Millisecond)
	topic, err := w.hub.AddNtfyTopic(ctx, alice, "https://127.0.0.1:8443/alerts", "tk_secret", "")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := w.hub.NotifyTargets(ctx, alice)
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
		if _, err := w.hub.AddPushSubscription(ctx, alice, c.url, c.p256dh, c.auth, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddPushSubscription(%s): %v, want %q", c.url, err, c.want)
		}
	}
	for _, c := range []struct{ url, token, want string }{
		{"https://127.0.0.1:8443/", "", "names no topic"},
		{"https://127.0.0.1:8443/a/b", "", "names no topic"},
		{"https://127.0.0.1:8443/a", "tk with space", "access token"},
		{"https://10.0.0.9/a", "", "lets the host 10.0.0.9 through"},
	} {
		if _, err := w.hub.AddNtfyTopic(ctx, alice, c.url, c.token, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddNtfyTopic(%s): %v, want %q", c.url, err, c.want)
		}
	}
	if ts, _ := w.hub.NotifyTargets(ctx, alice); len(ts) != 2 {
		t.Fatalf("refused targets were kept: %d", len(ts))
	}

	// Only its person removes a target.
	if _, err := w.hub.RemoveNotifyTarget(ctx, bob, topic.ID); hub.AsError(err).Kind != hub.KindNotFound {
		t.Fatalf("bob removed alice's topic: %v", err)
	}
	if _, err := w.hub.RemoveNotifyTarget(ctx, alice, topic.ID); err != nil {
		t.Fatal(err)
	}
	if ts, _ := w.hub.NotifyTargets(ctx, alice); len(ts) != 1 || ts[0].Kind != hub.TargetWebPush {
		t.Fatalf("after remove: %+v", ts)
	}
}

func TestNotifyPrefs(t *testing.T) {
	w := newWorld(t)
	alice := person(t, w, "alice")
	p, err := w.hub.NotifyPrefs(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	// Every kind but every message, until the person chooses.
	if p.Wants(hub.NotifyMessage) || !p.Wants(hub.NotifyQuestion) || len(p.Kinds) != len(hub.NotifyKinds)-1 {
		t.Fatalf("default prefs = %+v", p)
	}
	if _, err := w.hub.SetNotifyPrefs(ctx, alice, hub.NotifyPrefs{Kinds: []string{"gossip"}}); err == nil || !strings.Contains(err.Error(), "choose from question, held") {
		t.Fatalf("unknown kind: %v", err)
	}
	if _, err := w.hub.SetNotifyPrefs(ctx, alice, hub.NotifyPrefs{QuietFrom: 24 * 60}); err == nil {
		t.Fatal("quiet hours past midnight were taken")
	}
	set := hub.NotifyPrefs{Kinds: []string{hub.NotifyMessage, hub.NotifyQuestion}, QuietFrom: 22 * 60, QuietTo: 7 * 60, QuietUrgent: true}
	if _, err := w.hub.SetNotifyPrefs(ctx, alice, set); err != nil {
		t.Fatal(err)
	}
	got, _ := w.hub.NotifyPrefs(ctx, alice)
	if !slices.Equal(got.Kinds, []string{hub.NotifyQuestion, hub.NotifyMessage}) || got.QuietFrom != 22*60 || got.QuietTo != 7*60 || !got.QuietUrgent {
		t.Fatalf("prefs = %+v", got)
	}
	none := hub.NotifyPrefs{Kinds: nil}
	if _, err := w.hub.SetNotifyPrefs(ctx, alice, none); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.hub.NotifyPrefs(ctx, alice); len(got.Kinds) != 0 {
		t.Fatalf("choosing nothing kept %v", got.Kinds)
	}
}

func TestTimeZoneAndQuietHours(t *testing.T) {
	w := newWorld(t)
	alice := person(t, w, "alice")
	if err := w.hub.SetTimeZone(ctx, alice, "Mars/Olympus"); err == nil || !strings.Contains(err.Error(), "IANA name like Europe/Berlin") {
		t.Fatalf("bad zone: %v", err)
	}
	if err := w.hub.SetTimeZone(ctx, alice, "Europe/Berlin"); err != nil {
		t.Fatal(err)
	}
	again := person(t, w, "alice")
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
	if err := w.hub.SetTimeZone(ctx, alice, ""); err != nil || alice.Location() != time.UTC {
		t.Fatalf("empty zone: %v %v", err, alice.Location())
	}
}
