package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/push/pushtest"
	"github.com/palaverhq/palaver/internal/servertest"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestBrowserNotifyDeviceRefused: in Chromium, when the browser refuses
// Settings' "Notify me on this device" (a headless Chromium has not been
// allowed to notify, so its own PushManager.subscribe says permission
// denied), the page says it could not subscribe and why, and the server
// keeps no device.
func TestBrowserNotifyDeviceRefused(t *testing.T) {
	chromium(t)
	s := newSite(t)
	b := newTab(t, s, true)
	s.hub.CreateUser(ctx, "alice", "")
	s.accounts.SetPassword(ctx, "alice", "correct horse battery")
	b.signIn("alice")
	b.open("/settings", "settings")
	b.do(chromedp.WaitVisible(chromedp.CSS(`#notify-device button`)), chromedp.Click(chromedp.CSS(`#notify-device button`)))
	b.waitText(`//p[@data-status]`, "Could not subscribe: ")
	alice, _ := s.hub.User(ctx, "alice")
	if ts, err := s.notices.Targets(ctx, alice); err != nil || len(ts) != 0 {
		t.Fatalf("a refused subscription left %d devices (%v)", len(ts), err)
	}
}

// stubSubscribe is put into every page before its own scripts run. It
// stands in for the one part a test cannot run: the browser's own
// subscription at its vendor's push service, which PushManager.subscribe
// makes. It records what the page asked of it — the applicationServerKey,
// userVisibleOnly, and the scope and worker of the registration asked —
// and resolves a subscription at SUB's endpoint with SUB's keys, as a
// PushSubscription gives them (toJSON). It records each thing the page's
// status says too, so what it says just before the page reloads is seen.
const stubSubscribe = `(function () {
  if (typeof PushManager === "undefined") return;
  var sub = SUB;
  var b64 = function (key) {
    var u = key instanceof ArrayBuffer ? new Uint8Array(key) : new Uint8Array(key.buffer, key.byteOffset, key.byteLength), s = "";
    for (var i = 0; i < u.length; i++) s += String.fromCharCode(u[i]);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };
  PushManager.prototype.subscribe = function (options) {
    var pm = this, key = options.applicationServerKey;
    return navigator.serviceWorker.getRegistrations().then(function (regs) {
      var reg = regs.filter(function (r) { return r.pushManager === pm; })[0];
      sessionStorage.setItem("subscribe", JSON.stringify({
        applicationServerKey: typeof key === "string" ? key : b64(key), userVisibleOnly: options.userVisibleOnly === true,
        scope: reg ? reg.scope : "", worker: reg && reg.active ? reg.active.scriptURL : ""}));
      return {endpoint: sub.endpoint, expirationTime: null, options: options,
        toJSON: function () { return {endpoint: sub.endpoint, expirationTime: null, keys: sub.keys}; }};
    });
  };
  document.addEventListener("DOMContentLoaded", function () {
    var el = document.querySelector("[data-status]");
    if (!el) return;
    new MutationObserver(function () {
      var said = JSON.parse(sessionStorage.getItem("said") || "[]");
      said.push(el.textContent);
      sessionStorage.setItem("said", JSON.stringify(said));
    }).observe(el, {childList: true, characterData: true, subtree: true});
  });
})();`

// TestBrowserNotifyDeviceDelivers: in Chromium, Settings' "Notify me on
// this device" registers the dashboard's service worker over the whole
// dashboard, asks its registration for a push subscription with the
// server's VAPID public key, hands the subscription to the server and says
// the device is notified; then "Send a test notification" reaches the
// device's push service as Web Push: a payload the device's keys decrypt
// (RFC 8291) to the test notification, signed with the server's VAPID key
// for the push service's origin (RFC 8292).
//
// Stood in, and only that: the browser's own subscription at its vendor's
// push service (stubSubscribe replaces PushManager.prototype.subscribe).
// Chromium's would go to Google's push service (FCM), which a test can
// neither reach nor run; the stand-in resolves a subscription at a push
// service of the test's own instead (pushtest: https on loopback, under a
// name only the server's resolver knows, with a certificate only the
// server trusts), with keys the test made and so can decrypt with. The
// page and its notify.js, the service worker's registration, the server,
// its outbox and its Web Push sending are the real ones.
func TestBrowserNotifyDeviceDelivers(t *testing.T) {
	chromium(t)
	ps := pushtest.NewService(t, "push.test", http.StatusCreated)
	s := notifiedSite(t, ps)
	if err := s.hub.RecordPublicURL(ctx, s.url); err != nil { // as serve does: the notifications' links are under it
		t.Fatal(err)
	}
	device := pushtest.NewBrowser(t)
	sub := device.Subscription(ps.URL + "/wpush/v2/dev-1")
	stub, _ := json.Marshal(map[string]any{"endpoint": sub.Endpoint, "keys": map[string]string{"p256dh": sub.P256dh, "auth": sub.Auth}})
	b := newTab(t, s, true)
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument,
			cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: strings.Replace(stubSubscribe, "SUB", string(stub), 1)})
		return err
	}))
	s.hub.CreateUser(ctx, "alice", "")
	s.accounts.SetPassword(ctx, "alice", "correct horse battery")
	b.signIn("alice")
	b.open("/settings", "settings")
	b.do(chromedp.WaitVisible(chromedp.CSS(`#notify-device button`)), chromedp.Click(chromedp.CSS(`#notify-device button`)))
	b.until(`JSON.parse(sessionStorage.getItem("said") || "[]").indexOf("This device is notified.") >= 0`)
	b.waitText(`//*[@id='notify']//li`, "Device: ")

	var asked struct {
		ApplicationServerKey string
		UserVisibleOnly      bool
		Scope, Worker        string
	}
	if err := json.Unmarshal([]byte(evaluate[string](b, `sessionStorage.getItem("subscribe")`)), &asked); err != nil {
		t.Fatal(err)
	}
	public, err := s.notices.VAPIDPublicKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if asked.ApplicationServerKey != public || !asked.UserVisibleOnly || asked.Scope != s.url+"/" || asked.Worker != s.url+"/sw.js" {
		t.Errorf("the page asked for a subscription with %+v; want the server's VAPID key %q, user-visible only, of the worker %s/sw.js over the whole dashboard",
			asked, public, s.url)
	}
	if said := evaluate[string](b, `sessionStorage.getItem("said")`); strings.Contains(said, "Could not") {
		t.Errorf("the page said %s", said)
	}
	ua := evaluate[string](b, `navigator.userAgent.slice(0, 100)`)
	alice, _ := s.hub.User(ctx, "alice")
	ts, err := s.notices.Targets(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Kind != hub.TargetWebPush || ts[0].URL != sub.Endpoint || ts[0].P256dh != sub.P256dh || ts[0].Auth != sub.Auth || ts[0].Label != ua {
		t.Fatalf("the server holds %d devices: %+v; want the subscription %+v labelled %q", len(ts), ts, sub, ua)
	}

	b.do(chromedp.Click(chromedp.CSS(`form[action="/settings/notifications/test"] button`)), b.at("settings"))
	b.waitText(notice, "A test notification is on its way to your device or topic")
	r := ps.Await(t, 20*time.Second)
	if r.Method != http.MethodPost || r.Path != "/wpush/v2/dev-1" || r.Header.Get("Content-Encoding") != "aes128gcm" || r.Header.Get("Urgency") != "normal" {
		t.Errorf("the push service took %s %s, Content-Encoding %q, Urgency %q", r.Method, r.Path, r.Header.Get("Content-Encoding"), r.Header.Get("Urgency"))
	}
	plain, err := device.Decrypt(r.Body)
	if err != nil {
		t.Fatalf("the device cannot read the push message: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(plain, &got); err != nil {
		t.Fatalf("the payload %q: %v", plain, err)
	}
	if id, _ := got["id"].(string); id == "" || r.Header.Get("Topic") == "" {
		t.Errorf("the payload's id %q, Topic %q; want both", id, r.Header.Get("Topic"))
	}
	delete(got, "id") // each test is an item of its own
	want := map[string]any{"title": "A test from Palaver", "summary": "Notifications reach you here.", "link": s.url + "/settings#notify",
		"priority": "normal", "tags": []any{"white_check_mark"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the payload (-want +got):\n%s", diff)
	}
	pushtest.CheckVAPID(t, r.Header.Get("Authorization"), public, ps.URL, "mailto:admin@example.com")
}

// notifiedSite is a site whose notifications go out through
// internal/push to the services, which the server trusts and may reach
// (serve's --allow-private-host) under their names: its resolver gives
// those as 127.0.0.1, and no other name at all.
func notifiedSite(t *testing.T, services ...*pushtest.Service) *site {
	t.Helper()
	names, hosts := pushtest.Loopback(services...), []string{}
	for _, p := range services {
		hosts = append(hosts, p.Host)
	}
	s := servertest.Open(t, servertest.Options{MCP: true, API: true, Web: true, Store: storetest.Open(t),
		PushSender: push.New(push.Options{RootCAs: pushtest.Roots(services...), Resolver: names}), VAPIDSubject: "mailto:admin@example.com",
		Hub: func(o *hub.Options) { o.Resolver, o.PrivateHosts = names, hosts }})
	go s.Notices.Run(t.Context(), time.Second, func(string) {})
	return &site{url: s.URL, hub: s.Hub, notices: s.Notices, projects: s.Projects, reach: s.Reach, auth: s.OAuth, accounts: s.Accounts, stop: s.Close}
}

// TestBrowserNotifyTest: in Chromium with JavaScript off, Settings' "Send
// a test notification" first says to add a device or a topic; with an
// ntfy topic added, it says the test is on its way, and the test's ntfy
// server receives it.
func TestBrowserNotifyTest(t *testing.T) {
	chromium(t)
	ntfy := pushtest.NewService(t, "ntfy.test", http.StatusOK)
	s := notifiedSite(t, ntfy)
	b := newTab(t, s, false)
	s.hub.CreateUser(ctx, "alice", "")
	s.accounts.SetPassword(ctx, "alice", "correct horse battery")
	b.signIn("alice")
	b.open("/settings", "settings")
	test := chromedp.Click(chromedp.CSS(`form[action="/settings/notifications/test"] button`))
	b.do(test, b.at("settings"))
	b.waitText(`//*[@role='alert' or contains(@class,'error')]`, "add a device or an ntfy topic first")
	b.do(chromedp.SendKeys(chromedp.CSS(`input[name=url]`), ntfy.URL+"/alerts"),
		chromedp.Click(chromedp.CSS(`form[action="/settings/notifications/ntfy"] button`)), b.at("settings"))
	b.waitText(notice, "ntfy topic is added")
	b.do(test, b.at("settings"))
	b.waitText(notice, "A test notification is on its way")
	b.screenshot("settings-notify-test")
	var msg map[string]any
	if err := json.Unmarshal(ntfy.Await(t, 10*time.Second).Body, &msg); err != nil || msg["topic"] != "alerts" || msg["title"] != "A test from Palaver" {
		t.Fatalf("the test's ntfy server received %v (%v)", msg, err)
	}
}
