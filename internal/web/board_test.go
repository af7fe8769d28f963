package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/palaverhq/palaver/internal/hub"
)

// boardProject is alice's project with one thread her planner takes
// part in.
func boardProject(t *testing.T, s *site) (project, thread string, planner *hub.Caller) {
	t.Helper()
	alice := mustUser(t, s, "alice")
	planner, _ = s.agent(t, "alice/planner")
	p, err := s.hub.CreateProject(ctx, alice, "Launch", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SetProjectAgent(ctx, alice, p.ID, "planner", hub.AccessSpeak, false); err != nil {
		t.Fatal(err)
	}
	v, err := s.hub.OpenThreadAsPerson(ctx, alice, p.ID, "Release plan")
	if err != nil {
		t.Fatal(err)
	}
	return p.ID, v.Conversation.ID, planner
}

// TestBoardForms: from the project's page a member adds an item (kind,
// title, note, url) — a bad url adds nothing and says why — changes it on
// its page, and posts in a thread, which the thread's agent reads.
func TestBoardForms(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	project, thread, planner := boardProject(t, s)
	base := "/projects/" + project
	p := alice.get(base)
	if p = alice.submit(p, base+"/items", url.Values{"kind": {"link"}, "title": {"Plan"}, "url": {"ftp://example.com"}}); !strings.Contains(p.errorText(), "url") {
		t.Errorf("a bad url: %q", p.errorText())
	}
	if b, _ := s.pages.ProjectBoard(ctx, mustUser(t, s, "alice"), project); len(b.Columns[0].Items) != 0 {
		t.Fatal("a refused item was added")
	}
	p = alice.submit(alice.get(base), base+"/items", url.Values{"kind": {"link"}, "title": {"The plan"}, "note": {"read it first"}, "url": {"https://example.com/plan"}})
	if !strings.Contains(p.notice(), "Added “The plan” to the board, open.") {
		t.Fatalf("adding: %q %q", p.notice(), p.errorText())
	}
	b, _ := s.pages.ProjectBoard(ctx, mustUser(t, s, "alice"), project)
	it := b.Columns[0].Items[0]
	if it.Kind != "link" || it.Note != "read it first" || it.URL != "https://example.com/plan" {
		t.Errorf("the item added: %+v", it)
	}
	itemPath := base + "/items/" + it.ID
	p = alice.submit(alice.get(itemPath), itemPath, url.Values{"title": {"The plan, final"}, "status": {"doing"}, "note": {""}})
	if !strings.Contains(p.notice(), "Saved “The plan, final”, doing.") || !strings.Contains(p.text(), "alice") || !strings.Contains(p.text(), "title: The plan, final") {
		t.Fatalf("changing: %q %q %s", p.notice(), p.errorText(), p.text())
	}
	v, _ := s.projects.ItemAsPerson(ctx, mustUser(t, s, "alice"), project, it.ID)
	if v.Item.Note != "" || v.Item.URL != "https://example.com/plan" || v.Item.Status != "doing" {
		t.Errorf("the item changed: %+v", v.Item)
	}
	p = alice.submit(alice.get(base), base+"/post", url.Values{"thread": {thread}, "body": {"Start with the notes."}})
	if p.path() != base || !strings.Contains(p.notice(), "Posted in the thread") {
		t.Fatalf("posting: at %s, %q %q", p.path(), p.notice(), p.errorText())
	}
	read, err := s.hub.ReadMessages(ctx, planner, hub.ReadInput{ConversationID: thread})
	if err != nil || len(read.Messages) == 0 || read.Messages[len(read.Messages)-1].Body != "Start with the notes." {
		t.Fatalf("the planner reads %+v, %v", read, err)
	}
}

// TestBrowserBoard: in Chromium, with JavaScript on and off, a member
// adds an item from the project's page and it shows on the board.
func TestBrowserBoard(t *testing.T) {
	chromium(t)
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "javascript", false: "no-javascript"}[js], func(t *testing.T) {
			s := newSite(t)
			s.hub.CreateUser(ctx, "alice", "")
			s.accounts.SetPassword(ctx, "alice", "correct horse battery")
			project, _, _ := boardProject(t, s)
			b := newTab(t, s, js)
			b.signIn("alice")
			b.open("/projects/"+project, "project")
			b.do(chromedp.Click(chromedp.CSS(`#add-item > summary`)),
				chromedp.SetValue(chromedp.CSS(`#add-item select[name=kind]`), "site"),
				chromedp.SendKeys(chromedp.CSS(`#add-item input[name=title]`), "Docs site"),
				chromedp.SendKeys(chromedp.CSS(`#add-item input[name=url]`), "https://docs.example.com"),
				chromedp.Click(chromedp.CSS(`#add-item button`)))
			b.waitText(notice, "Added “Docs site” to the board")
			b.waitText(`//section[@id='board']`, "Docs site")
			b.screenshot("project-item-added")
		})
	}
}
