package web_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/palaverhq/palaver/internal/hub"
)

// confirm is the page a destroying form answers with first: it asks the
// question, and its form, sent, does what was asked.
func (b *browser) confirm(p *page, question string) *page {
	b.t.Helper()
	if p.path() == "" || !strings.Contains(p.text(), "Are you sure?") || !strings.Contains(p.text(), question) {
		b.t.Fatalf("at %s, no confirmation asking %q: %s", p.path(), question, p.text())
	}
	return b.submit(p, p.path(), nil)
}

// yes answers the question a destroying form asks — the dialog with
// JavaScript, the page without — with "Yes, go on".
func (b *tab) yes(question string) {
	b.t.Helper()
	if b.shot == "" {
		b.waitText(`//dialog[@id='confirm']`, question)
		b.do(chromedp.Click(chromedp.CSS(`dialog#confirm button[value="yes"]`)))
		return
	}
	b.do(b.at("confirm"))
	b.waitText(`//main`, question)
	b.do(chromedp.Click(chromedp.CSS(`.confirm button[type=submit]`)))
}

// TestConfirmBeforeDestroy: archiving an agent, revoking a token, removing
// a contact and removing a project's member first answer with a page
// asking (its Cancel leading back), and change nothing until it is
// answered; sent again from that page, each is done and says what it did.
func TestConfirmBeforeDestroy(t *testing.T) {
	s := newSite(t)
	alice, _ := s.person(t, "alice"), s.person(t, "bob")
	contacts(t, s) // alice/planner, bob/helper, alice and bob contacts
	tok, _, err := s.hub.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: "planner", Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	proj, err := s.hub.CreateProject(ctx, mustUser(t, s, "alice"), "Launch", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.AddMember(ctx, mustUser(t, s, "alice"), proj.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from, action, question, notice string
		done                           func() bool
	}{
		{"/agents/planner", "/agents/planner/tokens/" + tok.ID + "/revoke", "Revoke the token " + tok.ID + "? Whatever uses it is refused from its next request.", "Revoked the token \"laptop\"",
			func() bool {
				d, _ := s.pages.AgentDetail(ctx, mustUser(t, s, "alice"), "planner")
				return slices.ContainsFunc(d.Tokens, func(k *hub.Token) bool { return k.ID == tok.ID && !k.RevokedAt.IsZero() })
			}},
		{"/contacts", "/contacts/bob/remove", "Remove @bob from your contacts? Neither one's agents reach the other any more.", "Removed: you and @bob are no longer contacts",
			func() bool {
				v, _ := s.reach.Consent(ctx, mustUser(t, s, "alice"))
				return v.Contacts[0].Contact.Status == hub.ContactRemoved
			}},
		{"/projects/" + proj.ID, "/projects/" + proj.ID + "/members/bob/remove", "Remove @bob from this project?", "Removed @bob from the project",
			func() bool {
				b, _ := s.pages.ProjectBoard(ctx, mustUser(t, s, "alice"), proj.ID)
				return len(b.Members) == 1
			}},
		{"/agents/planner", "/agents/planner/archive", "Archive alice/planner? Every token it has is revoked at once", "alice/planner is archived",
			func() bool { a, _ := s.hub.Agent(ctx, "alice/planner"); return a.Archived() }},
	} {
		from := alice.get(tc.from)
		if !strings.Contains(from.raw, `data-confirm="`+strings.ReplaceAll(strings.ReplaceAll(tc.question, `"`, "&#34;"), "'", "&#39;")) {
			t.Errorf("%s: its form has no data-confirm asking %q", tc.from, tc.question)
		}
		p := alice.submit(from, tc.action, nil)
		if tc.done() {
			t.Fatalf("%s was done before it was confirmed", tc.action)
		}
		var cancel string
		for _, a := range p.all("a") {
			if strings.TrimSpace(text(a)) == "Cancel" {
				cancel = attr(a, "href")
			}
		}
		if cancel != tc.from {
			t.Errorf("%s: Cancel leads to %q, want %s", tc.action, cancel, tc.from)
		}
		p = alice.confirm(p, tc.question)
		if !tc.done() || !strings.Contains(p.notice(), tc.notice) {
			t.Fatalf("%s confirmed: done %v, notice %q %q", tc.action, tc.done(), p.notice(), p.errorText())
		}
	}
}

// TestBrowserConfirm: in Chromium, Archive asks first — a dialog with
// JavaScript, a page without — and Cancel there leaves the agent as it
// was; "Yes, go on" archives it.
func TestBrowserConfirm(t *testing.T) {
	chromium(t)
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "javascript", false: "no-javascript"}[js], func(t *testing.T) {
			s := newSite(t)
			s.hub.CreateUser(ctx, "alice", "")
			s.accounts.SetPassword(ctx, "alice", "correct horse battery")
			if _, err := s.hub.CreateOwnAgent(ctx, mustUser(t, s, "alice"), "planner", "Plans", ""); err != nil {
				t.Fatal(err)
			}
			b := newTab(t, s, js)
			b.signIn("alice")
			b.open("/agents/planner", "agent")
			archive := chromedp.Click(chromedp.CSS(`form[action="/agents/planner/archive"] button`))
			b.do(archive)
			if js {
				b.waitText(`//dialog[@id='confirm']`, "Archive alice/planner?")
				b.screenshot("confirm-dialog")
				b.do(chromedp.Click(chromedp.CSS(`dialog#confirm button[value="cancel"]`)),
					chromedp.WaitNotVisible(chromedp.CSS(`dialog#confirm`)))
			} else {
				b.do(b.at("confirm"))
				b.waitText(`//main`, "Archive alice/planner?")
				b.screenshot("confirm")
				b.do(chromedp.Click(chromedp.CSS(`.confirm a[role=button]`)), b.at("agent"))
			}
			if a, _ := s.hub.Agent(ctx, "alice/planner"); a.Archived() {
				t.Fatal("Cancel archived the agent")
			}
			b.do(archive)
			b.yes("Archive alice/planner?")
			b.waitText(notice, "alice/planner is archived")
			if a, _ := s.hub.Agent(ctx, "alice/planner"); !a.Archived() {
				t.Fatal("confirmed, the agent is not archived")
			}
		})
	}
}

// TestErrorsNameNoCommandLine: what the dashboard says when it refuses —
// a wrong password, a member who is not a contact — names what to do on
// its pages, never a command to type.
func TestErrorsNameNoCommandLine(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	s.hub.CreateUser(ctx, "carol", "")
	stranger := s.browser(t)
	p := stranger.submit(stranger.get("/signin"), "/signin", url.Values{"handle": {"alice"}, "password": {"wrong"}})
	proj, err := s.hub.CreateProject(ctx, mustUser(t, s, "alice"), "Launch", "")
	if err != nil {
		t.Fatal(err)
	}
	q := alice.submit(alice.get("/projects/"+proj.ID), "/projects/"+proj.ID+"/members", url.Values{"handle": {"carol"}})
	for _, msg := range []string{p.errorText(), q.errorText()} {
		if msg == "" || strings.Contains(msg, "palaver ") || strings.Contains(msg, "--") {
			t.Errorf("a refusal on the dashboard: %q; want a message naming no command", msg)
		}
	}
}
