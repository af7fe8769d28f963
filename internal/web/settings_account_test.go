package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// signInAgain signs a new browser in as handle with password.
func (s *site) signInAgain(t *testing.T, handle, password string) (*browser, *page) {
	t.Helper()
	b := s.browser(t)
	return b, b.submit(b.get("/signin"), "/signin", url.Values{"handle": {handle}, "password": {password}})
}

// TestSettingsSignIns: Settings lists the person's sign-ins, this
// browser's marked; "Sign out everywhere else" ends the others and keeps
// this one.
func TestSettingsSignIns(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	phone, _ := s.signInAgain(t, "alice", "correct horse battery")
	p := alice.get("/settings")
	if got := p.byClass("tokens"); strings.Count(got, "Signed in") != 2 || strings.Count(got, "this browser") != 1 {
		t.Fatalf("the sign-ins listed: %q", got)
	}
	p = alice.submit(p, "/settings/signins/others", nil)
	if !strings.Contains(p.notice(), "Signed out everywhere else: 1 other sign-in ended") {
		t.Fatalf("signing out elsewhere: %q %q", p.notice(), p.errorText())
	}
	if p := phone.get("/settings"); p.path() != "/signin" {
		t.Errorf("the other browser after: at %s, want /signin", p.path())
	}
	if p := alice.get("/settings"); p.path() != "/settings" || strings.Contains(p.raw, `action="/settings/signins/others"`) || !strings.Contains(p.text(), "Only this browser is signed in") {
		t.Errorf("this browser after: at %s: %s", p.path(), p.byClass("tokens"))
	}
}

// TestSettingsChangePassword: a new password needs the current one and
// the same new one twice (a refusal changes nothing); once changed, the
// old password no longer signs in, the new one does, and every other
// sign-in has ended while this one stays.
func TestSettingsChangePassword(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	phone, _ := s.signInAgain(t, "alice", "correct horse battery")
	for _, tc := range []struct {
		current, password, again, want string
	}{
		{"not my password", "a brand new passphrase", "a brand new passphrase", "not your current password"},
		{"correct horse battery", "a brand new passphrase", "a brand new passphrase!", "differ"},
		{"correct horse battery", "short", "short", "at least 10 characters"},
	} {
		p := alice.submit(alice.get("/settings"), "/settings/password", url.Values{"current": {tc.current}, "password": {tc.password}, "again": {tc.again}})
		if !strings.Contains(p.errorText(), tc.want) || p.notice() != "" {
			t.Errorf("changing with %+v: error %q, notice %q", tc, p.errorText(), p.notice())
		}
	}
	if p := phone.get("/settings"); p.path() != "/settings" {
		t.Fatalf("a refused change ended the other sign-in: at %s", p.path())
	}
	p := alice.submit(alice.get("/settings"), "/settings/password", url.Values{"current": {"correct horse battery"}, "password": {"a brand new passphrase"}, "again": {"a brand new passphrase"}})
	if !strings.Contains(p.notice(), "Changed your password: every other sign-in of yours has ended") {
		t.Fatalf("the change: %q %q", p.notice(), p.errorText())
	}
	if p := alice.get("/settings"); p.path() != "/settings" {
		t.Errorf("this browser after the change: at %s", p.path())
	}
	if p := phone.get("/settings"); p.path() != "/signin" {
		t.Errorf("the other browser after the change: at %s, want /signin", p.path())
	}
	if _, p := s.signInAgain(t, "alice", "correct horse battery"); p.path() == "/" {
		t.Error("the old password still signs in")
	}
	if _, p := s.signInAgain(t, "alice", "a brand new passphrase"); p.path() != "/" {
		t.Errorf("the new password: at %s, %q", p.path(), p.errorText())
	}
}

// TestSettingsInvites: the admin's open invitations are listed; Revoke
// takes one back, and its link makes no account; nobody else sees them
// or may revoke one.
func TestSettingsInvites(t *testing.T) {
	s := newSite(t)
	admin := s.person(t, "alice")
	bob := s.person(t, "bob")
	p := admin.submit(admin.get("/settings"), "/settings/invites", nil)
	var link string
	for _, n := range p.all("input") {
		if attr(n, "id") == "link" {
			link = attr(n, "value")
		}
	}
	u, _ := url.Parse(link)
	p = admin.get("/settings")
	var id string
	for _, a := range p.actions() {
		if rest, ok := strings.CutPrefix(a, "/settings/invites/"); ok {
			id = strings.TrimSuffix(rest, "/revoke")
		}
	}
	if id == "" || !strings.Contains(p.text(), "Open invitations") {
		t.Fatalf("the open invitation is not listed: %v", p.actions())
	}
	if p := bob.get("/settings"); strings.Contains(p.text(), "Open invitations") {
		t.Error("bob, no admin, sees the invitations")
	}
	if p := bob.post("/settings/invites/"+id+"/revoke", nil); p.status != http.StatusOK || !strings.Contains(p.errorText(), "only the admin") {
		t.Errorf("bob revoking: %d %q", p.status, p.errorText())
	}
	p = admin.submit(p, "/settings/invites/"+id+"/revoke", nil)
	if !strings.Contains(p.notice(), "Revoked the invitation "+id) || strings.Contains(p.raw, "/settings/invites/"+id+"/revoke") {
		t.Fatalf("revoking: %q %q", p.notice(), p.errorText())
	}
	carol := s.browser(t)
	if p := carol.get(u.RequestURI()); !strings.Contains(p.text(), "not known, used, or expired") {
		t.Errorf("the revoked link: %s", p.text())
	}
}

// TestBrowserSettingsAccount: in Chromium, with JavaScript on and off,
// Settings lists this browser's sign-in and another, "Sign out everywhere
// else" ends the other, and a new password is set from the form, after
// which it signs in.
func TestBrowserSettingsAccount(t *testing.T) {
	chromium(t)
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "javascript", false: "no-javascript"}[js], func(t *testing.T) {
			s := newSite(t)
			s.hub.CreateUser(ctx, "alice", "")
			s.accounts.SetPassword(ctx, "alice", "correct horse battery")
			b := newTab(t, s, js)
			b.signIn("alice")
			other, _ := s.signInAgain(t, "alice", "correct horse battery")
			b.open("/settings", "settings")
			b.waitText(byID("signins"), "this browser")
			b.do(chromedp.Click(chromedp.CSS(`form[action="/settings/signins/others"] button`)))
			b.waitText(notice, "Signed out everywhere else: 1 other sign-in ended")
			if p := other.get("/settings"); p.path() != "/signin" {
				t.Errorf("the other sign-in after: at %s", p.path())
			}
			b.do(chromedp.SendKeys(chromedp.CSS(`input[name=current]`), "correct horse battery"),
				chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "a brand new passphrase"),
				chromedp.SendKeys(chromedp.CSS(`input[name=again]`), "a brand new passphrase"),
				chromedp.Click(chromedp.CSS(`form[action="/settings/password"] button`)))
			b.waitText(notice, "Changed your password")
			b.screenshot("settings-account")
			if _, p := s.signInAgain(t, "alice", "a brand new passphrase"); p.path() != "/" {
				t.Errorf("the new password: at %s, %q", p.path(), p.errorText())
			}
		})
	}
}
