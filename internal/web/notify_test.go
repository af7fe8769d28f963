package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestNotifySettings: Settings has the notifications section — without
// JavaScript it says push needs it, and ntfy works with plain forms: a
// topic added (a private address refused) and removed, the kinds, quiet
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
	form := url.Values{"kind": {hub.NotifyQuestion, hub.NotifyMessage}, "quiet_from": {"22:00"}, "quiet_to": {"07:00"}, "quiet_urgent": {"1"}, "time_zone": {"Mars/Base"}}
	if p = b.submit(b.get("/settings"), "/settings/notifications", form); !strings.Contains(p.errorText(), "IANA name") {
		t.Errorf("a bad time zone: %q", p.errorText())
	}
	alice, _ := s.hub.User(ctx, "alice")
	if n, _ := s.notices.Settings(ctx, alice); n.Prefs.Wants(hub.NotifyMessage) {
		t.Error("a refused form changed the kinds")
	}
	form.Set("time_zone", "Europe/Berlin")
	if p = b.submit(b.get("/settings"), "/settings/notifications", form); !strings.Contains(p.notice(), "saved") {
		t.Fatalf("saving: %q %q", p.notice(), p.errorText())
	}
	alice, _ = s.hub.User(ctx, "alice")
	n, _ := s.notices.Settings(ctx, alice)
	if alice.TimeZone != "Europe/Berlin" || !n.Prefs.Wants(hub.NotifyMessage) || n.Prefs.Wants(hub.NotifyBrake) || n.Prefs.QuietFrom != 22*60 || !n.Prefs.QuietUrgent {
		t.Fatalf("saved %q %+v", alice.TimeZone, n.Prefs)
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
