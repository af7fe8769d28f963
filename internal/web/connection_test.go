package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserSignInEnded: a page whose sign-in ends elsewhere (a new
// password) says so, hides what it showed and offers to sign in again,
// which leads back to the page.
func TestBrowserSignInEnded(t *testing.T) {
	chromium(t)
	s := newSite(t)
	for _, h := range []string{"alice", "bob"} {
		s.hub.CreateUser(ctx, h, "")
		s.accounts.SetPassword(ctx, h, "correct horse battery")
	}
	b := newTab(t, s, true)
	b.signIn("alice")
	b.open("/contacts", "contacts")
	if err := s.accounts.SetPassword(ctx, "alice", "a brand new passphrase"); err != nil {
		t.Fatal(err)
	}
	// An event for alice wakes her stream, which finds its sign-in ended.
	if _, err := s.hub.RequestContact(ctx, mustUser(t, s, "bob"), "alice", ""); err != nil {
		t.Fatal(err)
	}
	b.waitText(byID("connection"), "Your sign-in has ended")
	if visible := evaluate[bool](b, `document.getElementById("main").checkVisibility()`); visible {
		t.Error("the page still shows what it showed before the sign-in ended")
	}
	b.screenshot("signin-ended")
	b.do(chromedp.Click(chromedp.CSS(`#connection a`)), b.at("signin"))
	if loc := b.location(); loc != s.url+"/signin?next=%2Fcontacts" {
		t.Errorf("Sign in again leads to %s", loc)
	}
}

// TestBrowserReconnecting: while the server is away the page says it is
// reconnecting, and since when.
func TestBrowserReconnecting(t *testing.T) {
	chromium(t)
	s := newSite(t)
	s.hub.CreateUser(ctx, "alice", "")
	s.accounts.SetPassword(ctx, "alice", "correct horse battery")
	b := newTab(t, s, true)
	b.signIn("alice")
	b.open("/contacts", "contacts")
	s.stop()
	b.waitText(byID("connection"), "Reconnecting to the server")
	b.waitText(byID("connection"), "s ago")
}
