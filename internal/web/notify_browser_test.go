package web_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/servertest"
	"github.com/palaverhq/palaver/internal/store/storetest"
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
		ts, _ := s.notices.Targets(ctx, alice)
		now, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("[data-status]").textContent + " | " + location.href`))
		t.Fatalf("%v: status %q, %d devices", err, now, len(ts))
	}
	ts, _ := s.notices.Targets(ctx, alice)
	switch {
	case strings.Contains(status, "Could not subscribe") && len(ts) == 0:
		t.Logf("this Chromium has no push service: %s", status)
	case len(ts) == 1 && ts[0].Kind == "webpush":
	default:
		t.Fatalf("status %q with %d devices", status, len(ts))
	}
}

// ntfyReceiver is an ntfy server of the test's own on loopback, known as
// example.com (the name its certificate has): each publish's JSON arrives
// on got.
type ntfyReceiver struct {
	url string
	got chan map[string]any
}

// notifiedSite is a site whose notifications go out through
// internal/push to an ntfy receiver, which the server trusts and may reach.
func notifiedSite(t *testing.T) (*site, *ntfyReceiver) {
	t.Helper()
	r := &ntfyReceiver{got: make(chan map[string]any, 10)}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var msg map[string]any
		json.NewDecoder(req.Body).Decode(&msg)
		r.got <- msg
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	r.url = "https://example.com:" + strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	names := ntfyNames{"example.com"}
	s := servertest.Open(t, servertest.Options{MCP: true, API: true, Web: true, Store: storetest.Open(t), PushSender: push.New(push.Options{RootCAs: roots, Resolver: names}), Hub: func(o *hub.Options) {
		o.Resolver, o.PrivateHosts = names, []string{"example.com"}
	}})
	go s.Notices.Run(t.Context(), time.Second, func(string) {})
	return &site{url: s.URL, hub: s.Hub, notices: s.Notices, projects: s.Projects, reach: s.Reach, auth: s.OAuth, accounts: s.Accounts, stop: s.Close}, r
}

// ntfyNames resolves its hosts to 127.0.0.1, and no other.
type ntfyNames []string

func (n ntfyNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if slices.Contains(n, host) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestBrowserNotifyTest: in Chromium with JavaScript off, Settings' "Send
// a test notification" first says to add a device or a topic; with an
// ntfy topic added, it says the test is on its way, and the test's ntfy
// server receives it.
func TestBrowserNotifyTest(t *testing.T) {
	chromium(t)
	s, ntfy := notifiedSite(t)
	b := newTab(t, s, false)
	s.hub.CreateUser(ctx, "alice", "")
	s.accounts.SetPassword(ctx, "alice", "correct horse battery")
	b.signIn("alice")
	b.open("/settings", "settings")
	test := chromedp.Click(chromedp.CSS(`form[action="/settings/notifications/test"] button`))
	b.do(test, b.at("settings"))
	b.waitText(`//*[@role='alert' or contains(@class,'error')]`, "add a device or an ntfy topic first")
	b.do(chromedp.SendKeys(chromedp.CSS(`input[name=url]`), ntfy.url+"/alerts"),
		chromedp.Click(chromedp.CSS(`form[action="/settings/notifications/ntfy"] button`)), b.at("settings"))
	b.waitText(notice, "ntfy topic is added")
	b.do(test, b.at("settings"))
	b.waitText(notice, "A test notification is on its way")
	b.screenshot("settings-notify-test")
	select {
	case msg := <-ntfy.got:
		if msg["topic"] != "alerts" || msg["title"] != "A test from Palaver" {
			t.Fatalf("the test's ntfy server received %v", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the test's ntfy server received nothing")
	}
}
