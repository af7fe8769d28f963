package web_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestContactsPage: a request goes out and is withdrawn; a request in is
// declined, then accepted after all; the agents' grants are listed; an
// agent let in is stopped later, then let in again — each a form on the
// page.
func TestContactsPage(t *testing.T) {
	s := newSite(t)
	alice, bob := s.person(t, "alice"), s.person(t, "bob")
	s.person(t, "carol")
	p := alice.submit(alice.get("/contacts"), "/contacts", url.Values{"handle": {"carol"}})
	if !strings.Contains(p.notice(), "Asked") || !strings.Contains(p.text(), "@carol pending: you asked") {
		t.Fatalf("asking carol: %q %s", p.notice(), p.text())
	}
	p = alice.submit(p, "/contacts/carol/cancel", nil)
	if !strings.Contains(p.text(), "@carol cancelled") {
		t.Fatalf("withdrawing: %s", p.text())
	}
	if p = alice.submit(p, "/contacts", url.Values{"handle": {"nobody"}}); p.errorText() == "" {
		t.Fatal("a contact request to nobody was taken")
	}

	bob.submit(bob.get("/contacts"), "/contacts", url.Values{"handle": {"alice"}})
	p = alice.submit(alice.get("/contacts"), "/contacts/bob/reject", nil)
	if !strings.Contains(p.text(), "@bob rejected") {
		t.Fatalf("declining bob: %s", p.text())
	}
	p = alice.submit(p, "/contacts/bob/approve", nil)
	if !strings.Contains(p.text(), "@bob accepted") {
		t.Fatalf("accepting bob after all: %s", p.text())
	}

	// bob's helper asks to reach alice's planner; alice lets it in, stops
	// it, and lets it in again.
	s.agent(t, "alice/planner")
	helper, _ := s.agent(t, "bob/helper")
	if _, err := s.hub.SetGrant(ctx, mustUser(t, s, "bob"), "bob/helper", "alice", true, true); err != nil {
		t.Fatal(err)
	}
	s.hub.OpenConversation(ctx, helper, []string{"alice/planner"})
	if _, err := s.hub.SetGrant(ctx, mustUser(t, s, "alice"), "alice/planner", "bob", false, true); err != nil {
		t.Fatal(err)
	}
	p = alice.get("/contacts")
	if !strings.Contains(p.text(), "alice/planner → @bob: not the person, their agents") || !strings.Contains(p.text(), "bob/helper alice/planner pending") {
		t.Fatalf("grants and asks: %s", p.text())
	}
	asks, _ := s.reach.Consent(ctx, mustUser(t, s, "alice"))
	id := asks.Inbound[0].Ask.ID
	if p = alice.submit(p, "/approvals/"+id+"/approve", nil); p.path() != "/contacts" || !strings.Contains(p.notice(), "Approved: alice/planner may be reached") {
		t.Fatalf("letting the helper in: at %s %q %q", p.path(), p.notice(), p.errorText())
	}
	p = alice.submit(p, "/approvals/"+id+"/reject", nil)
	if !strings.Contains(p.text(), "bob/helper alice/planner denied") {
		t.Fatalf("after stopping the helper: %s", p.text())
	}
	if _, err := s.hub.OpenConversation(ctx, helper, []string{"alice/planner"}); err == nil {
		t.Fatal("a stopped agent opened a conversation")
	}
	alice.submit(p, "/approvals/"+id+"/approve", nil)
	if _, err := s.hub.OpenConversation(ctx, helper, []string{"alice/planner"}); err != nil {
		t.Fatalf("let in again: %v", err)
	}
}

// TestSettingsAPITokens: a person mints an API token for scripts (shown
// once; it works on /api/v1), sees it listed and revokes it.
func TestSettingsAPITokens(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	p := alice.submit(alice.get("/settings"), "/settings/tokens", url.Values{"name": {"approvals script"}})
	secret := secretOn(t, p, "secret")
	u, err := s.hub.AuthenticateUser(ctx, secret)
	if err != nil || u.Handle != "alice" {
		t.Fatalf("the API token: %+v, %v", u, err)
	}
	p = alice.get("/settings")
	ts, _ := s.hub.Tokens(ctx, "alice", "")
	if len(ts) != 1 || !strings.Contains(p.text(), "approvals script") {
		t.Fatalf("listed: %d tokens, %s", len(ts), p.text())
	}
	p = alice.confirm(alice.submit(p, "/settings/tokens/"+ts[0].ID+"/revoke", nil), "Revoke the token "+ts[0].ID+"?")
	if _, err := s.hub.AuthenticateUser(ctx, secret); err == nil || !strings.Contains(p.notice(), "Revoked") {
		t.Fatalf("revoked: %v, %q", err, p.notice())
	}
}

// contacts makes alice and bob contacts with bob's helper reaching
// alice's planner (granted and let in), and returns the helper.
func contacts(t *testing.T, s *site) *hub.Caller {
	t.Helper()
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
	s.hub.OpenConversation(ctx, helper, []string{"alice/planner"})
	v, _ := s.reach.Consent(ctx, alice)
	if _, err := s.hub.DecideInbound(ctx, alice, v.Inbound[0].Ask.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.OpenConversation(ctx, helper, []string{"alice/planner"}); err != nil {
		t.Fatalf("the helper let in: %v", err)
	}
	return helper
}

// TestRemoveContactForm: Remove on an accepted contact ends it, for both:
// the row says who ended it and offers to ask again, the grant it carried
// is withdrawn, and the other side's agents can no longer open a
// conversation.
func TestRemoveContactForm(t *testing.T) {
	s := newSite(t)
	alice, bob := s.person(t, "alice"), s.person(t, "bob")
	helper := contacts(t, s)
	p := alice.confirm(alice.submit(alice.get("/contacts"), "/contacts/bob/remove", nil), "Remove @bob from your contacts?")
	if !strings.Contains(p.notice(), "Removed") || !strings.Contains(p.text(), "@bob removed by you") {
		t.Fatalf("alice removing bob: %q %q %s", p.notice(), p.errorText(), p.text())
	}
	if _, err := s.hub.OpenConversation(ctx, helper, []string{"alice/planner"}); err == nil || !strings.Contains(err.Error(), "not contacts") {
		t.Fatalf("bob's helper opening once the contact ended: %v; want denied, not contacts", err)
	}
	p = bob.get("/contacts")
	if !strings.Contains(p.text(), "@alice removed by them") || !strings.Contains(p.text(), "bob/helper → @alice: not the person, not their agents") ||
		strings.Contains(p.raw, `action="/contacts/alice/remove"`) || strings.Contains(p.raw, `action="/contacts/alice/approve"`) {
		t.Fatalf("bob's page once alice ended it: %s", p.text())
	}
	if p = bob.submit(p, "/contacts", url.Values{"handle": {"alice"}}); !strings.Contains(p.text(), "@alice pending: you asked") {
		t.Fatalf("bob asking again: %q %s", p.errorText(), p.text())
	}
}

// TestBrowserRemoveContact: in Chromium, with JavaScript on and off,
// pressing Remove on an accepted contact ends it.
func TestBrowserRemoveContact(t *testing.T) {
	chromium(t)
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "javascript", false: "no-javascript"}[js], func(t *testing.T) {
			s := newSite(t)
			for _, h := range []string{"alice", "bob"} {
				s.hub.CreateUser(ctx, h, "")
				s.accounts.SetPassword(ctx, h, "correct horse battery")
			}
			helper := contacts(t, s)
			b := newTab(t, s, js)
			b.open("/signin", "signin")
			b.do(chromedp.SendKeys(chromedp.CSS(`input[name=handle]`), "alice"),
				chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "correct horse battery"),
				chromedp.Click(chromedp.CSS(`form[action="/signin"] button`)),
				b.at("home"))
			b.open("/contacts", "contacts")
			b.do(chromedp.Click(chromedp.CSS(`form[action="/contacts/bob/remove"] button`)))
			b.yes("Remove @bob from your contacts?")
			b.waitText(notice, "Removed")
			b.waitText(`//table`, "removed by you")
			b.screenshot("contacts-removed")
			if _, err := s.hub.OpenConversation(ctx, helper, []string{"alice/planner"}); err == nil {
				t.Fatal("bob's helper opened a conversation with alice's planner once the contact ended")
			}
		})
	}
}

// TestSettingsEmail: a person sets the email on their profile in Settings,
// sees it there, and clears it; a bad one is refused saying how to write
// it, and changes nothing.
func TestSettingsEmail(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	p := alice.submit(alice.get("/settings"), "/settings/email", url.Values{"email": {"alice@example.com"}})
	if u, _ := s.hub.User(ctx, "alice"); u.Email != "alice@example.com" || !strings.Contains(p.notice(), "alice@example.com") {
		t.Fatalf("set: %q, notice %q", u.Email, p.notice())
	}
	if f := alice.get("/settings").form("/settings/email"); !slices.Contains(f.fields, field{"email", "alice@example.com"}) {
		t.Errorf("the form's fields are %v, want the email set", f.fields)
	}
	p = alice.submit(alice.get("/settings"), "/settings/email", url.Values{"email": {"not an address"}})
	if u, _ := s.hub.User(ctx, "alice"); u.Email != "alice@example.com" || !strings.Contains(p.errorText(), "alice@example.com") {
		t.Errorf("a bad email: %q kept, error %q", u.Email, p.errorText())
	}
	alice.submit(alice.get("/settings"), "/settings/email", url.Values{"email": {""}})
	if u, _ := s.hub.User(ctx, "alice"); u.Email != "" {
		t.Errorf("cleared: %q", u.Email)
	}
}
