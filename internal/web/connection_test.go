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
	if _, err := s.reach.RequestContact(ctx, mustUser(t, s, "bob"), "alice", ""); err != nil {
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

// TestBrowserContactsLive: with JavaScript on, Contacts updates in place —
// another owner's agent asking in, and a contact request, show without a
// reload, while what is typed in the form above stays.
func TestBrowserContactsLive(t *testing.T) {
	chromium(t)
	s := newSite(t)
	for _, h := range []string{"alice", "bob", "carol"} {
		s.hub.CreateUser(ctx, h, "")
		s.accounts.SetPassword(ctx, h, "correct horse battery")
	}
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	s.agent(t, "alice/planner")
	helper, _ := s.agent(t, "bob/helper")
	if _, err := s.reach.RequestContact(ctx, alice, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.DecideContact(ctx, bob, "alice", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SetGrant(ctx, bob, "bob/helper", "alice", false, true); err != nil {
		t.Fatal(err)
	}
	b := newTab(t, s, true)
	b.signIn("alice")
	b.open("/contacts", "contacts")
	b.waitText(byID("contacts-live"), "No other owner’s agent has asked")
	b.do(chromedp.SendKeys(chromedp.CSS(`form[action="/contacts"] input[name=handle]`), "dav"))
	s.hub.OpenConversation(ctx, helper, []string{"alice/planner"}) // asks in
	b.waitText(byID("contacts-live"), "bob/helper")
	if _, err := s.reach.RequestContact(ctx, mustUser(t, s, "carol"), "alice", ""); err != nil {
		t.Fatal(err)
	}
	b.waitText(byID("contacts-live"), "@carol")
	if typed := evaluate[string](b, `document.querySelector('form[action="/contacts"] input[name=handle]').value`); typed != "dav" {
		t.Errorf("the form's field holds %q after the updates, want what was typed", typed)
	}
}
