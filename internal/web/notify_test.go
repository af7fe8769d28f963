package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestNotifySettings: Settings has the notifications section — without
// JavaScript it says push needs it, and ntfy works with plain forms: a
// topic added (a private address refused) and removed, each topic's kinds
// saved with its own form (an unknown kind refused, changing nothing), quiet
// hours and time zone saved (a bad zone refused, changing nothing). The
// service worker is served from the root, allowed the whole dashboard, and
// the manifest names the app.
func TestNotifySettings(t *testing.T) {
	db := storetest.Open(t)
	s := serveSite(t, db, nil)
	b := s.person(t, "alice")
	p := b.get("/settings")
	key, _ := s.notices.VAPIDPublicKey(ctx)
	if !strings.Contains(p.raw, "Push notifications need JavaScript") || !strings.Contains(p.raw, `data-key="`+key+`"`) || !strings.Contains(p.text(), "None yet.") {
		t.Fatalf("the settings page: %s", p.raw)
	}
	if p = b.submit(b.get("/settings"), "/settings/notifications/ntfy", url.Values{"url": {"https://192.168.0.9/alerts"}}); !strings.Contains(p.errorText(), "private") {
		t.Errorf("a private topic: %q", p.errorText())
	}
	p = b.submit(b.get("/settings"), "/settings/notifications/ntfy", url.Values{"url": {"https://93.184.215.14/alerts"}, "token": {"tk_1"}})
	if !strings.Contains(p.notice(), "ntfy topic is added") || !strings.Contains(p.text(), "ntfy: https://93.184.215.14/alerts") {
		t.Fatalf("adding a topic: %q %q %s", p.notice(), p.errorText(), p.text())
	}
	p = b.submit(b.get("/settings"), "/settings/notifications/ntfy", url.Values{"url": {"https://93.184.215.14/phone"}})
	alice, _ := s.hub.User(ctx, "alice")
	n, _ := s.notices.Settings(ctx, alice)
	if len(n.Targets) != 2 || !strings.Contains(p.raw, `action="/settings/notifications/`+n.Targets[1].ID+`/kinds"`) ||
		!strings.Contains(p.raw, `value="`+hub.NotifyBrake+`" checked`) || strings.Contains(p.raw, `value="`+hub.NotifyMessage+`" checked`) {
		t.Fatalf("each topic's kinds, every one but every message to start with: %s", p.raw)
	}
	first, second := n.Targets[0].ID, n.Targets[1].ID
	// The delivery log says which topic each attempt went to.
	err := db.Update(ctx, func(tx hub.Tx) error {
		return tx.InsertNotifyAttempt(ctx, &hub.NotifyAttempt{ID: "ntl_1", UserID: alice.ID, TargetID: second, NotificationID: "ntf_1",
			Kind: hub.NotifyQuestion, At: time.Now(), Status: 503}, 50)
	})
	if err != nil {
		t.Fatal(err)
	}
	if p = b.get("/settings"); !strings.Contains(p.text(), "question to https://93.184.215.14/phone · failed (503)") {
		t.Errorf("the delivery log does not name the topic: %s", p.text())
	}
	kinds := "/settings/notifications/" + first + "/kinds"
	if p = b.submit(b.get("/settings"), kinds, url.Values{"kind": {hub.NotifyQuestion, "gossip"}}); !strings.Contains(p.errorText(), `"gossip" is not a kind of notification`) {
		t.Errorf("an unknown kind: %q", p.errorText())
	}
	if n, _ = s.notices.Settings(ctx, alice); !n.Targets[0].Wants(hub.NotifyBrake) {
		t.Error("a refused form changed the kinds")
	}
	if p = b.submit(b.get("/settings"), kinds, url.Values{"kind": {hub.NotifyQuestion, hub.NotifyMessage}}); !strings.Contains(p.notice(), "is saved") {
		t.Fatalf("saving a topic's kinds: %q %q", p.notice(), p.errorText())
	}
	n, _ = s.notices.Settings(ctx, alice)
	if !n.Targets[0].Wants(hub.NotifyMessage) || n.Targets[0].Wants(hub.NotifyBrake) || n.Targets[1].Wants(hub.NotifyMessage) || !n.Targets[1].Wants(hub.NotifyBrake) {
		t.Fatalf("saved %v for the first topic and %v for the second", n.Targets[0].Kinds, n.Targets[1].Kinds)
	}
	if p = b.submit(b.get("/settings"), "/settings/notifications/"+second+"/remove", nil); !strings.Contains(p.notice(), "no longer notified") {
		t.Errorf("removing the second topic: %q %q", p.notice(), p.errorText())
	}
	form := url.Values{"quiet_from": {"22:00"}, "quiet_to": {"07:00"}, "quiet_urgent": {"1"}, "time_zone": {"Mars/Base"}}
	if p = b.submit(b.get("/settings"), "/settings/notifications", form); !strings.Contains(p.errorText(), "IANA name") {
		t.Errorf("a bad time zone: %q", p.errorText())
	}
	if n, _ := s.notices.Settings(ctx, alice); n.Prefs.QuietFrom != 0 {
		t.Error("a refused form changed the quiet hours")
	}
	form.Set("time_zone", "Europe/Berlin")
	if p = b.submit(b.get("/settings"), "/settings/notifications", form); !strings.Contains(p.notice(), "saved") {
		t.Fatalf("saving: %q %q", p.notice(), p.errorText())
	}
	alice, _ = s.hub.User(ctx, "alice")
	n, _ = s.notices.Settings(ctx, alice)
	if alice.TimeZone != "Europe/Berlin" || n.Prefs.QuietFrom != 22*60 || !n.Prefs.QuietUrgent || !n.Targets[0].Wants(hub.NotifyMessage) {
		t.Fatalf("saved %q %+v %v", alice.TimeZone, n.Prefs, n.Targets[0].Kinds)
	}
	if p = b.get("/settings"); !strings.Contains(p.raw, `value="Europe/Berlin"`) || !strings.Contains(p.raw, `value="22:00"`) {
		t.Errorf("the page does not show what was saved")
	}
	p = b.submit(b.get("/settings"), "/settings/notifications/"+n.Targets[0].ID+"/remove", nil)
	if !strings.Contains(p.notice(), "no longer notified") || !strings.Contains(p.text(), "None yet.") {
		t.Errorf("removing: %q %q", p.notice(), p.errorText())
	}

	for path, want := range map[string]string{"/sw.js": "showNotification", "/manifest.webmanifest": `"name":"Palaver"`} {
		resp, err := http.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		if path == "/sw.js" && resp.Header.Get("Service-Worker-Allowed") != "/" {
			t.Errorf("the service worker's scope header: %q", resp.Header.Get("Service-Worker-Allowed"))
		}
	}
}
