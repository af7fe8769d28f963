package web_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestConversationPages: the list shows alice's agents' conversations,
// paused ones marked; the view labels each message's provenance with the
// session after the byline and how far each session has read; writing
// there is human_interject (alice is no participant) and lifts the pause;
// Resume lifts one too; a close-requested thread is closed by its
// creator's owner.
func TestConversationPages(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	planner, _ := s.agent(t, "alice/planner")
	reviewer, _ := s.agent(t, "alice/reviewer")
	v, err := s.hub.OpenConversation(ctx, planner, []string{"alice/reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	// 100 turns, with a Resume after the 50th: paused again, and more
	// messages than one page shows.
	for i := range 100 {
		from, instance := planner, "laptop"
		if i%2 == 1 {
			from, instance = reviewer, ""
		}
		if _, err := s.hub.SendMessage(ctx, from, hub.SendInput{ConversationID: conv, Body: fmt.Sprintf("turn %d", i+1), Instance: instance}); err != nil {
			t.Fatal(err)
		}
		if i == 49 {
			if _, err := s.hub.Resume(ctx, mustUser(t, s, "alice"), conv); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.hub.ReadMessages(ctx, reviewer, hub.ReadInput{ConversationID: conv, Instance: "desk"}); err != nil {
		t.Fatal(err)
	}

	p := alice.get("/conversations")
	if !strings.Contains(p.text(), "paused") || !strings.Contains(p.text(), "alice/planner, alice/reviewer") {
		t.Fatalf("the list: %s", p.text())
	}
	// The Bridge names the paused conversation, in its box and its row.
	p = alice.get("/")
	for _, want := range []string{"alice/planner, alice/reviewer paused", "Read alice/planner, alice/reviewer, then resume"} {
		if !strings.Contains(p.text(), want) {
			t.Fatalf("the Bridge lacks %q: %s", want, p.text())
		}
	}
	p = alice.get("/conversations/" + conv)
	text := p.text()
	for _, want := range []string{"Paused.", "agents traded 50 turns", "alice/planner · laptop AI agent for @alice", "turn 100", "Read by", "alice/reviewer · desk: up to #"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the conversation lacks %q: %s", want, text)
		}
	}
	p = alice.submit(p, "/conversations/"+conv+"/resume", nil)
	if !strings.Contains(p.notice(), "Resumed") || strings.Contains(p.text(), "Paused.") {
		t.Fatalf("resume: %q, %s", p.notice(), p.text())
	}
	if _, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv, Body: "back to work"}); err != nil {
		t.Fatalf("a send after Resume: %v", err)
	}
	p = alice.submit(p, "/conversations/"+conv+"/messages", url.Values{"body": {"Keep it **short**."}, "format": {"markdown"}})
	if !strings.Contains(p.notice(), "human_interject") {
		t.Fatalf("post: %q %q", p.notice(), p.errorText())
	}
	last := findAll(p.doc, "article")
	body := last[len(last)-1]
	if !strings.Contains(text2(body), "@alice") || !strings.Contains(text2(body), "human_interject") || len(findAll(body, "strong")) < 2 {
		t.Fatalf("alice's post as shown: %s", text2(body))
	}
	if strings.Contains(p.text(), "turn 1 ") || !strings.Contains(p.actionsAndLinks(), "?before=") {
		t.Fatal("with 102 messages the page shows the oldest, or no link to them; want the latest page")
	}
	if p = alice.submit(p, "/conversations/"+conv+"/messages", url.Values{"body": {""}}); p.errorText() == "" {
		t.Fatal("an empty post was taken")
	}
	if p = alice.get("/conversations/" + conv + "?after=0"); !strings.Contains(p.text(), "turn 1 ") || !strings.Contains(p.text(), "Newer messages") {
		t.Fatalf("the first page from the start: %s", p.actionsAndLinks())
	}

	// A thread of the planner's asks to close; alice confirms.
	th, err := s.hub.CreateThread(ctx, planner, hub.ThreadSpec{Title: "Release notes", Participants: []string{"alice/reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.RequestClose(ctx, planner, th.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	p = alice.get("/conversations/" + th.Conversation.ID)
	if !strings.Contains(p.text(), "Close requested") {
		t.Fatalf("a close-requested thread: %s", p.text())
	}
	p = alice.submit(p, "/conversations/"+th.Conversation.ID+"/close", nil)
	if p.path() != "/conversations" || !strings.Contains(p.notice(), "Closed") || strings.Contains(p.text(), "Release notes") {
		t.Fatalf("close: at %s %q %s", p.path(), p.notice(), p.text())
	}

	// Someone else sees none of it.
	bob := s.person(t, "bob")
	if p := bob.get("/conversations/" + conv); p.status != 404 {
		t.Fatalf("bob opens alice's agents' conversation: %d", p.status)
	}
	if p := bob.post("/conversations/"+conv+"/messages", url.Values{"body": {"hi"}}); !strings.Contains(p.errorText(), "no conversation") {
		t.Fatalf("bob writes into it: %q", p.errorText())
	}
}

func text2(n *html.Node) string { return strings.Join(strings.Fields(text(n)), " ") }

// actionsAndLinks lists the page's hrefs, for paging checks.
func (p *page) actionsAndLinks() string {
	var out []string
	for _, a := range p.all("a") {
		out = append(out, attr(a, "href"))
	}
	return strings.Join(out, " ")
}

// TestBodiesShownAsText: words others wrote — a script, an image with
// onerror, a javascript: link, in plain text and in markdown — show as
// text on every page that shows them: conversations, a held message on
// Approvals, a question, an agent's description.
func TestBodiesShownAsText(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	hostile := `<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) <a href="javascript:alert(4)">x</a>`
	if _, err := s.hub.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/planner", Description: hostile}); err != nil {
		t.Fatal(err)
	}
	_, secret, _ := s.hub.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: "planner"})
	planner := s.reauth(t, secret)
	s.agent(t, "alice/reviewer")
	v, err := s.hub.CreateThread(ctx, planner, hub.ThreadSpec{Title: hostile, Participants: []string{"alice/reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	for _, format := range []string{hub.FormatText, hub.FormatMarkdown} {
		if _, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv, Body: hostile, Format: format}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.hub.AskOwner(ctx, planner, hostile, "", conv, []string{hostile}); err != nil {
		t.Fatal(err)
	}
	s.hub.SetAgentMode(ctx, "alice/planner", hub.ModeReview)
	if _, err := s.hub.SendMessage(ctx, s.reauth(t, secret), hub.SendInput{ConversationID: conv, Body: hostile + " (held)", Format: hub.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/conversations", "/conversations/" + conv, "/approvals", "/agents", "/agents/planner"} {
		p := alice.get(path)
		if p.status != 200 {
			t.Fatalf("%s: %d", path, p.status)
		}
		if !strings.Contains(p.raw, "&lt;script&gt;") && !strings.Contains(p.raw, "&lt;img") {
			t.Fatalf("%s does not show the words at all", path)
		}
		walk(p.doc, func(n *html.Node) {
			for _, a := range n.Attr {
				url := a.Key == "href" || a.Key == "src" || a.Key == "action" || a.Key == "formaction"
				if strings.HasPrefix(a.Key, "on") || (url && !strings.HasPrefix(a.Val, "/") && !strings.HasPrefix(a.Val, "#")) {
					t.Fatalf("%s: <%s %s=%q> from someone's words", path, n.Data, a.Key, a.Val)
				}
			}
			if n.Data == "script" && attr(n, "src") == "" {
				t.Fatalf("%s: an inline <script> element", path)
			}
			if n.Data == "img" {
				t.Fatalf("%s: an <img> from someone's words", path)
			}
		})
	}
}

// TestRoomPage: a room says it is one, shows whom each message is for and
// an event post's type, and a person's message there must mention someone
// (§10.5): without a mention it is refused with how to give one, with
// @handle it is work for that agent.
func TestRoomPage(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	planner, _ := s.agent(t, "alice/planner")
	reviewer, _ := s.agent(t, "alice/reviewer")
	v, err := s.hub.CreateRoomAsPerson(ctx, mustUser(t, s, "alice"), hub.RoomSpec{Title: "Launch room"})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	for _, a := range []string{"alice/planner", "alice/reviewer"} {
		if _, err := s.hub.AddParticipantAsPerson(ctx, mustUser(t, s, "alice"), conv, a, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv, Body: "checking the build", Kind: "thought"}); err != nil {
		t.Fatal(err)
	}
	if p := alice.get("/conversations"); !strings.Contains(p.text(), "Launch room room") {
		t.Errorf("the list does not mark the room: %s", p.text())
	}
	p := alice.get("/conversations/" + conv)
	if text := p.text(); !strings.Contains(text, "room ·") || !strings.Contains(text, "thought") || !strings.Contains(text, "mention whom it is for with @handle") {
		t.Fatalf("the room's page: %s", text)
	}
	if p = alice.submit(p, "/conversations/"+conv+"/messages", url.Values{"body": {"status?"}}); !strings.Contains(p.errorText(), "mention whom it is for, like @alice/") {
		t.Fatalf("a post mentioning nobody: %q, want a refusal saying to write @handle", p.errorText())
	}
	p = alice.submit(p, "/conversations/"+conv+"/messages", url.Values{"body": {"@reviewer status?"}})
	if !strings.Contains(p.text(), "for alice/reviewer") {
		t.Fatalf("the post as shown: %s", p.text())
	}
	if r, err := s.hub.Inbox(ctx, reviewer, 0, ""); err != nil || r.Total != 1 {
		t.Errorf("the reviewer's inbox: %+v %v, want alice's message", r, err)
	}
	if r, err := s.hub.Inbox(ctx, planner, 0, ""); err != nil || r.Total != 0 {
		t.Errorf("the planner's inbox: %+v %v, want nothing: it was not mentioned", r, err)
	}
}

// TestEditedWordsOnlyForTheEditor: on a thread's page, the agent's own
// words of a message its owner edited are shown to that owner ("The agent’s
// words before your edit") and to no one else: bob, a member of the
// project, sees the words that went out, labelled owner_edited (§7).
func TestEditedWordsOnlyForTheEditor(t *testing.T) {
	s := newSite(t)
	alice, bob := s.person(t, "alice"), s.person(t, "bob")
	_, plannerToken := s.agent(t, "alice/planner")
	a, b := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	if _, err := s.reach.RequestContact(ctx, a, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.reach.RequestContact(ctx, b, "alice", ""); err != nil {
		t.Fatal(err)
	}
	p, err := s.hub.CreateProject(ctx, a, "Launch", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.AddMember(ctx, a, p.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SetProjectAgent(ctx, a, p.ID, "planner", hub.AccessSpeak, true); err != nil {
		t.Fatal(err)
	}
	planner := s.reauth(t, plannerToken) // its project access changed
	th, err := s.hub.OpenThread(ctx, planner, p.ID, "Plan", "")
	if err != nil {
		t.Fatal(err)
	}
	held, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: th.Conversation.ID, Body: "draft: ship it now"})
	if err != nil || held.Message.Status != hub.MessageHeld {
		t.Fatalf("the planner's send in review: %+v, %v", held, err)
	}
	if _, err := s.hub.DecideHeld(ctx, a, held.Message.ID, hub.Decision{Approve: true, Body: "ship it on Friday"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		who  *browser
		sees bool
	}{{"alice", alice, true}, {"bob", bob, false}} {
		page := c.who.get("/conversations/" + th.Conversation.ID)
		text := page.text()
		if page.status != 200 || !strings.Contains(text, "ship it on Friday") || !strings.Contains(text, "owner_edited") {
			t.Fatalf("%s: %d, the page lacks the approved words or owner_edited: %s", c.name, page.status, text)
		}
		for _, draft := range []string{"The agent’s words before your edit", "draft: ship it now"} {
			if strings.Contains(text, draft) != c.sees {
				t.Errorf("%s: the page shows %q: %v; want %v", c.name, draft, !c.sees, c.sees)
			}
		}
	}
}

// longConversation is n messages of about 190 characters that alice
// wrote in a conversation with her planner: more than one page's words,
// so each page is cut by its size.
func longConversation(t *testing.T, s *site, n int) string {
	t.Helper()
	planner, _ := s.agent(t, "alice/planner")
	v, err := s.hub.OpenConversation(ctx, planner, []string{"alice"})
	if err != nil {
		t.Fatal(err)
	}
	alice := mustUser(t, s, "alice")
	for i := 1; i <= n; i++ {
		if _, err := s.hub.PostAsPerson(ctx, alice, v.Conversation.ID, fmt.Sprintf("message %04d %s", i, strings.Repeat("x", 176)), ""); err != nil {
			t.Fatal(err)
		}
	}
	return v.Conversation.ID
}

// onceEach checks that pages showed the messages #1…#n each once; pages
// lists the articles' ids (seq-N) page by page.
func onceEach(t *testing.T, pages [][]string, n int) {
	t.Helper()
	seen := map[string]int{}
	total := 0
	for _, page := range pages {
		for _, id := range page {
			seen[id]++
			total++
		}
	}
	for i := 1; i <= n; i++ {
		if id := fmt.Sprintf("seq-%d", i); seen[id] != 1 {
			t.Fatalf("walking Older through %d messages: #%d shown %d times (%d shown in %d pages)", n, i, seen[id], total, len(pages))
		}
	}
	if total != n {
		t.Fatalf("walking Older: %d shown, want %d", total, n)
	}
}

// TestOlderContinuesWherePagesStop: the conversation page opens at the
// newest messages, cut by size, with the box to write in after them; its
// Older link, and each older page's, starts exactly where the page stops,
// so walking Older through 1,000 messages shows each once. Each older page
// links Newer back to where it ends.
func TestOlderContinuesWherePagesStop(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	const n = 1000
	conv := longConversation(t, s, n)

	p := alice.get("/conversations/" + conv)
	var pages [][]string
	for {
		var ids []string
		for _, a := range p.all("article") {
			if id := attr(a, "id"); strings.HasPrefix(id, "seq-") {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 || len(ids) >= hub.MessagesPage.Max && len(pages) == 0 {
			t.Fatalf("a page of %d messages; want one cut by size", len(ids))
		}
		pages = append(pages, ids)
		if len(pages) == 1 {
			if ids[len(ids)-1] != fmt.Sprintf("seq-%d", n) || !strings.Contains(p.raw, `id="write"`) || !strings.Contains(p.raw, "data-latest") {
				t.Fatalf("the conversation opens at %s…%s; want the newest, #%d, then the box to write in (#write)", ids[0], ids[len(ids)-1], n)
			}
		}
		older := ""
		for _, a := range p.all("a") {
			if strings.Contains(text(a), "Older messages") {
				older = attr(a, "href")
			}
		}
		if older == "" {
			break
		}
		if len(pages) > n {
			t.Fatal("Older never ends")
		}
		first := strings.TrimPrefix(ids[0], "seq-")
		if want := "/conversations/" + conv + "?before=" + first + "#write"; older != want {
			t.Fatalf("Older links to %s; want %s, where this page starts", older, want)
		}
		path, _, _ := strings.Cut(older, "#")
		p = alice.get(path)
		if p.status != 200 {
			t.Fatalf("%s: %d %s", path, p.status, p.errorText())
		}
		last := ""
		if arts := p.all("article"); len(arts) > 0 {
			last = strings.TrimPrefix(attr(arts[len(arts)-1], "id"), "seq-")
		}
		if !strings.Contains(p.actionsAndLinks(), "/conversations/"+conv+"?after="+last) || strings.Contains(p.raw, "data-latest") {
			t.Fatalf("the page before #%s ends at #%s and links %s; want Newer after #%s", first, last, p.actionsAndLinks(), last)
		}
	}
	onceEach(t, pages, n)

	if p := alice.get("/conversations/" + conv + "?before=x"); p.status != 400 || !strings.Contains(p.errorText(), "before must be an integer") {
		t.Fatalf("?before=x: %d %q", p.status, p.errorText())
	}
}

// inView is a script telling whether the element with this id is wholly
// within the browser's viewport (to the pixel: its edges may fall between
// two).
func inView(id string) string {
	return `(function () { var e = document.getElementById("` + id + `"); if (!e) return false;
		var r = e.getBoundingClientRect(); return r.top >= -1 && r.bottom <= window.innerHeight + 1; })()`
}

// until waits, within 20 s, for the script to be true, across a page
// load: a poll that the load cut short asks again on the new page.
func (b *tab) until(script string) {
	b.t.Helper()
	c, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	for {
		_, err := chromedp.Run(c, chromedp.Poll[chromedp.Void](script))
		if err == nil {
			return
		}
		if c.Err() != nil {
			b.t.Fatalf("in the browser: waiting for %s: %v (at %s)", script, err, b.location())
		}
	}
}

// viewport saves what the browser shows (not the whole page) as NAME.png
// under the test's artifacts.
func (b *tab) viewport(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, b.shot+name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// TestBrowserLongConversation, in Chromium with JavaScript on and off: a
// conversation of 1,000 messages opened from the list shows its newest
// message and the box to write in, not its first message 20,000 px above
// them; with JavaScript on it does so opened by its plain address too.
// Writing there comes back to the newest message, with the notice in
// view. Pressing Older until there is none shows every message exactly once.
func TestBrowserLongConversation(t *testing.T) {
	chromium(t)
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "javascript", false: "no-javascript"}[js], func(t *testing.T) {
			s := newSite(t)
			s.hub.CreateUser(ctx, "alice", "")
			s.accounts.SetPassword(ctx, "alice", "correct horse battery")
			const n = 1000
			conv := longConversation(t, s, n)
			b := newTab(t, s, js)
			b.open("/signin", "signin")
			b.do(chromedp.SendKeys(chromedp.CSS(`input[name=handle]`), "alice"),
				chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "correct horse battery"),
				chromedp.Click(chromedp.CSS(`form[action="/signin"] button`)),
				b.at("home"))

			b.open("/conversations", "conversations")
			b.do(chromedp.Click(chromedp.CSS(`a[href^="/conversations/`+conv+`"]`)), b.at("conversation"),
				chromedp.WaitVisible(chromedp.ID("write")))
			last := fmt.Sprintf("seq-%d", n)
			b.within(5*time.Second, "the newest message and the box to write in in view",
				chromedp.Poll[chromedp.Void](inView("write")+" && "+inView(last)))
			b.viewport("conversation-long")
			if js {
				// Its plain address, typed or reloaded, opens there too.
				b.open("/conversations/"+conv, "conversation")
				b.within(5*time.Second, "the box to write in in view at the plain address", chromedp.Poll[chromedp.Void](inView("write")))
			}

			// Writing there comes back to the same place, with the new
			// message, the box and the notice in view.
			b.do(chromedp.SendKeys(chromedp.CSS(`#write textarea`), "the last word"),
				chromedp.Click(chromedp.CSS(`#write button`)))
			b.waitText(notice, "Sent")
			b.within(5*time.Second, "the new message, the box to write in and the notice in view after sending",
				chromedp.Poll[chromedp.Void](inView("write")+" && "+inView(fmt.Sprintf("seq-%d", n+1))+
					` && document.querySelector(".notice").getBoundingClientRect().top >= 0`))
			b.viewport("conversation-sent")

			var pages [][]string
			for {
				ids := evaluate[[]string](b, `Array.from(document.querySelectorAll("#messages article")).map(function (a) { return a.id; })`)
				if len(ids) == 0 {
					t.Fatalf("a page with no messages at %s", b.location())
				}
				pages = append(pages, ids)
				if !evaluate[bool](b, `document.querySelector("a[href*='?before=']") !== null`) {
					break
				}
				if len(pages) > n {
					t.Fatal("Older never ends")
				}
				b.do(chromedp.Click(chromedp.Search(`//a[contains(., 'Older messages')]`)))
				b.until(`(function () { var a = document.querySelector("#messages article"); return a && a.id !== "` + ids[0] + `"; })()`)
				if len(pages) == 1 {
					b.viewport("conversation-older")
				}
			}
			onceEach(t, pages, n+1)
		})
	}
}
