package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserNotifyDevice: in Chromium, Settings' "Notify me on this
// device" registers the dashboard's service worker over the whole
// dashboard and asks the browser for a push subscription, saying how it
// went. A headless Chromium has not been allowed to notify and says so
// (allowed, it waits on Google's push service, which a test cannot reach
// or stand in for); one with a push service hands the server the
// subscription, and the device is listed.
func TestBrowserNotifyDevice(t *testing.T) {
	chromium(t)
	s := newSite(t)
	b := newTab(t, s, true)
	s.hub.CreateUser(ctx, "alice", "")
	s.accounts.SetPassword(ctx, "alice", "correct horse battery")
	b.open("/signin", "signin")
	b.do(chromedp.SendKeys(chromedp.CSS(`input[name=handle]`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`form[action="/signin"] button`)),
		b.at("home"))
	b.open("/settings", "settings")
	b.do(chromedp.WaitVisible(chromedp.CSS(`#notify-device button`)), chromedp.Click(chromedp.CSS(`#notify-device button`)))
	c, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	scope, err := chromedp.Run(c, chromedp.Evaluate[string](`navigator.serviceWorker.ready.then(function (r) { return r.scope; })`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if scope != s.url+"/" {
		t.Fatalf("the service worker's scope is %q; want the whole dashboard", scope)
	}
	status, err := chromedp.Run(c, chromedp.Evaluate[string](`new Promise(function (done) {
		var look = function () { var s = document.querySelector("[data-status]"); var t = s ? s.textContent : "";
			if (t.indexOf("notified") >= 0 || t.indexOf("Could not") >= 0) done(t); else setTimeout(look, 50); };
		look(); })`, chromedp.EvalAwaitPromise))
	alice, _ := s.hub.User(ctx, "alice")
	if err != nil {
		ts, _ := s.hub.NotifyTargets(ctx, alice)
		now, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("[data-status]").textContent + " | " + location.href`))
		t.Fatalf("%v: status %q, %d devices", err, now, len(ts))
	}
	ts, _ := s.hub.NotifyTargets(ctx, alice)
	switch {
	case strings.Contains(status, "Could not subscribe") && len(ts) == 0:
		t.Logf("this Chromium has no push service: %s", status)
	case len(ts) == 1 && ts[0].Kind == "webpush":
	default:
		t.Fatalf("status %q with %d devices", status, len(ts))
	}
}
