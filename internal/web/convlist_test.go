package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/palaverhq/palaver/internal/hub"
)

// convList is alice with a direct conversation between her planner and
// bob's helper, and a thread of hers and her agents' with a long title
// and a message she has not read.
func convList(t *testing.T, s *site) (direct, long string) {
	t.Helper()
	helper := contacts(t, s)
	v, err := s.hub.OpenConversation(ctx, helper, []string{"alice/planner"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SendMessage(ctx, helper, hub.SendInput{ConversationID: v.Conversation.ID, Body: "Is the release on for Friday?"}); err != nil {
		t.Fatal(err)
	}
	_, secret, err := s.hub.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: "planner"})
	if err != nil {
		t.Fatal(err)
	}
	planner, err := s.hub.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	reviewer, _ := s.agent(t, "alice/reviewer")
	title := "The release checklist for 2.0, with every step from tagging to the announcement and the follow-up fixes"
	w, err := s.hub.CreateThread(ctx, planner, hub.ThreadSpec{Title: title, Participants: []string{"alice/reviewer", "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: w.Conversation.ID, Body: "Step one is done."}); err != nil {
		t.Fatal(err)
	}
	return v.Conversation.ID, w.Conversation.ID
}

// TestConversationListTitles: on alice's list a direct conversation is
// titled by the other party (bob's helper), not by everyone the Who
// column names; each title's link carries the whole title to show on
// hover; an unread conversation's row says so.
func TestConversationListTitles(t *testing.T) {
	s := newSite(t)
	alice, _ := s.person(t, "alice"), s.person(t, "bob")
	direct, long := convList(t, s)
	p := alice.get("/conversations")
	links := map[string]string{}
	for _, a := range p.all("a") {
		links[attr(a, "href")] = strings.TrimSpace(text(a)) + " | " + attr(a, "title")
	}
	if got := links["/conversations/"+direct+"#write"]; got != "bob/helper | bob/helper" {
		t.Errorf("the direct conversation's title: %q, want bob/helper", got)
	}
	if got := links["/conversations/"+long+"#write"]; !strings.HasSuffix(got, "the follow-up fixes") || !strings.Contains(got, " | The release checklist") {
		t.Errorf("the long title: %q", got)
	}
	var rows []string
	for _, tr := range p.all("tr") {
		rows = append(rows, attr(tr, "class"))
	}
	if !strings.Contains(strings.Join(rows, " "), "conv-unread") {
		t.Errorf("no row marked unread: %v", rows)
	}
}

// TestBrowserConversationList: at 1280 and 390 px the long title is cut
// on one line, its time never wraps, and the unread count is a filled
// badge.
func TestBrowserConversationList(t *testing.T) {
	chromium(t)
	s := newSite(t)
	for _, h := range []string{"alice", "bob"} {
		s.hub.CreateUser(ctx, h, "")
		s.accounts.SetPassword(ctx, h, "correct horse battery")
	}
	_, long := convList(t, s)
	b := newTab(t, s, true)
	b.signIn("alice")
	for _, width := range []int64{1280, 390} {
		b.do(chromedp.EmulateViewport(width, 900))
		b.open("/conversations", "conversations")
		link := `document.querySelector('a[href="/conversations/` + long + `#write"]')`
		cut := evaluate[bool](b, link+`.scrollWidth > `+link+`.clientWidth`)
		lines := evaluate[[]float64](b, `[...document.querySelectorAll('table.conversations td.when time')].map(function (t) { return t.getClientRects().length; })`)
		unread := evaluate[string](b, `getComputedStyle(document.querySelector('.badge-unread')).backgroundColor`)
		t.Logf("at %d px: title cut %v, times on %v lines, unread badge %s", width, cut, lines, unread)
		if !cut {
			t.Errorf("at %d px the long title is not cut", width)
		}
		for _, n := range lines {
			if n != 1 {
				t.Errorf("at %d px a time wraps onto %v lines", width, n)
			}
		}
		if unread == "rgba(0, 0, 0, 0)" || unread == "" {
			t.Errorf("at %d px the unread badge has no fill", width)
		}
		b.screenshot("conversations-" + map[int64]string{1280: "desktop", 390: "phone"}[width])
	}
}
