package web_test

import (
	"context"
	_ "embed"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
	"github.com/palaverhq/palaver/internal/permissions"
	"github.com/palaverhq/palaver/internal/projects"
)

// axe is axe-core (testdata/axe-core, from the npm registry), injected
// into each page the accessibility test looks at.
//
//go:embed testdata/axe-core/axe.min.js
var axe string

// violation is one of axe's findings, as the test reports it.
type violation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// scheme makes the tab prefer a light or dark colour scheme.
func (b *tab) scheme(name string) {
	b.t.Helper()
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: name}}})
		return err
	}))
	// Colours change with a transition: look once they have (those
	// shown: a closed disclosure's content is not drawn, so its
	// transitions wait until it opens).
	c, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Evaluate[any](`Promise.all(document.getAnimations().filter(function (a) { var e = a.effect && a.effect.target; return !e || e.checkVisibility(); }).map(function (a) { return a.finished; })).then(function () {})`, chromedp.EvalAwaitPromise)); err != nil {
		b.t.Fatal(err)
	}
}

// axeCheck runs axe-core on the page and returns its violations of any
// impact, minor included.
func (b *tab) axeCheck() []violation {
	b.t.Helper()
	if !evaluate[bool](b, `typeof window.axe === "object"`) {
		evaluate[any](b, axe+"\n;undefined")
	}
	c, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	vs, err := chromedp.Run(c, chromedp.Evaluate[[]violation](`axe.run(document, {resultTypes: ["violations"]}).then(function (r) {
		return r.violations.map(function (v) {
			return {id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map(function (n) { return n.target.join(" ") + " — " + (n.failureSummary || "").replace(/\s+/g, " "); })};
		});
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("axe on %s: %v", b.location(), err)
	}
	return vs
}

// keyboardReaches presses Tab through the page, from its top, and checks
// that focus lands on each of want: an element's id, href, aria-label, or
// a button's text.
func (b *tab) keyboardReaches(want ...string) {
	b.t.Helper()
	reached := map[string]bool{}
	first := ""
	for range 200 {
		b.do(chromedp.KeyEvent("\t"))
		at := evaluate[string](b, `(function (e) { return e.id + "|" + (e.getAttribute("href") || "") + "|" + (e.getAttribute("aria-label") || "") + "|" + (e.tagName === "BUTTON" ? e.textContent.trim() : ""); })(document.activeElement)`)
		if at == first {
			break // round the page once
		}
		if first == "" {
			first = at
		}
		for _, part := range strings.Split(at, "|") {
			reached[part] = true
		}
	}
	for _, w := range want {
		if !reached[w] {
			b.t.Errorf("%s: the keyboard does not reach %q", b.location(), w)
		}
	}
}

// TestBrowserAccessibility opens every page of the dashboard in real
// Chromium, in the light and the dark colour scheme, and has axe-core
// check it: no violation of any impact anywhere, minor included. Each page is saved
// as a screenshot in both schemes (NAME.png and NAME-dark.png), the
// pictures of docs/dashboard.md.
func TestBrowserAccessibility(t *testing.T) {
	chromium(t)
	s := newSite(t)
	b := newTab(t, s, true)
	check := func(name string) {
		t.Helper()
		for _, scheme := range []string{"light", "dark"} {
			b.scheme(scheme)
			for _, v := range b.axeCheck() {
				t.Errorf("%s (%s): %s %s: %s\n\t%s", name, scheme, v.Impact, v.ID, v.Help, strings.Join(v.Targets, "\n\t"))
			}
			shot := name
			if scheme == "dark" {
				shot += "-dark"
			}
			b.screenshot(shot)
		}
		b.scheme("light")
	}

	b.open("/", "setup")
	check("setup")
	b.do(chromedp.SendKeys(chromedp.CSS(`input[name=handle]`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "Alice"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`form[action="/setup"] button`)),
		b.at("agents"))

	// A world to show: agents, a conversation with a held message and a
	// markdown post, a question, a contact request, a project with an
	// item, an image and a proposal waiting.
	planner, plannerToken := s.agent(t, "alice/planner")
	reviewer, _ := s.agent(t, "alice/reviewer")
	conv, err := s.hub.OpenConversation(ctx, planner, []string{"alice/reviewer", "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv.Conversation.ID, Format: hub.FormatMarkdown, Instance: "laptop",
		Body: "## Release plan\n\n1. Notes\n2. Tag\n\n> **Tip:** tag after the notes are merged.\n\n`go test ./...` passes."}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: conv.Conversation.ID, Body: "Looks right to me.", Instance: "desk"}); err != nil {
		t.Fatal(err)
	}
	q, err := s.hub.AskOwner(ctx, planner, "Tag v2.0 or v2.0.0?", "laptop", "", []string{"v2.0", "v2.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	s.hub.SetAgentMode(ctx, "alice/planner", hub.ModeReview)
	planner = s.reauth(t, plannerToken)
	held, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv.Conversation.ID, Body: "Shall I ship it?"})
	if err != nil {
		t.Fatal(err)
	}
	s.hub.CreateUser(ctx, "bob", "Bob")
	if _, err := s.reach.RequestContact(ctx, mustUser(t, s, "bob"), "alice", ""); err != nil {
		t.Fatal(err)
	}
	alice := mustUser(t, s, "alice")
	p, err := s.hub.CreateProject(ctx, alice, "Release 2.0", "Everything for the 2.0 release")
	if err != nil {
		t.Fatal(err)
	}
	s.hub.SetProjectAgent(ctx, alice, p.ID, "reviewer", hub.AccessSpeak, false)
	item, err := s.projects.AddItem(ctx, reviewer, p.ID, projects.ItemSpec{Title: "Write the release notes", Instance: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.projects.UploadImage(ctx, reviewer, p.ID, projects.ImageUpload{DataBase64: pngOf(t), Filename: "chart.png", Alt: "Burn-down chart"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.projects.ProposeProject(ctx, planner, "Docs site", "", "The docs need a home", "laptop"); err != nil {
		t.Fatal(err)
	}
	// The reviewer's session listens (a channel's wait) and asks to use a
	// tool.
	listening, stopListening := context.WithCancel(ctx)
	defer stopListening()
	go s.hub.Wait(listening, reviewer, hub.WaitInput{Timeout: 55 * time.Second, Instance: "desk"})
	perm, err := permissions.New(s.hub, s.store).Request(ctx, reviewer, permissions.Input{RequestID: "tbxkq", ToolName: "Bash",
		Description: "Run the release script", InputPreview: `{"command":"./scripts/release.sh v2.0"}`, Instance: "desk"})
	if err != nil {
		t.Fatal(err)
	}

	pages := []struct{ path, page, name string }{
		{"/", "home", "bridge"},
		{"/approvals", "approvals", "approvals"},
		{"/conversations", "conversations", "conversations"},
		{"/conversations/" + conv.Conversation.ID, "conversation", "conversation"},
		{"/search?q=release+notes", "search", "search"},
		{"/agents", "agents", "agents"},
		{"/agents/planner", "agent", "agent"},
		{"/contacts", "contacts", "contacts"},
		{"/projects", "projects", "projects"},
		{"/projects/" + p.ID, "project", "project"},
		{"/projects/" + p.ID + "/items/" + item.Item.ID, "item", "item"},
		{"/settings", "settings", "settings"},
		{"/no/such/page", "error", "error"},
		{consentPath(t, s), "consent", "consent"},
	}
	for _, pg := range pages {
		b.open(pg.path, pg.page)
		check(pg.name)
	}
	// The keyboard alone reaches everything: on the Bridge, the feed and
	// each row's link to act; on a project, each item's Move.
	b.open("/", "home")
	b.keyboardReaches("/approvals", "/projects", "Activity of your agents, newest first", "/approvals#"+perm.ID, "/approvals#"+held.Message.ID, "/approvals#"+q.ID,
		"/conversations/"+conv.Conversation.ID+"#write", "/agents/planner", "Sign out @alice")
	b.open("/projects/"+p.ID, "project")
	b.keyboardReaches("#board", "status-"+item.Item.ID, "Move", "/projects/"+p.ID+"/items/"+item.Item.ID, "Bring it in", "Set the cap")
	// The page a new token is shown on, once.
	b.open("/agents/planner", "agent")
	b.do(chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "laptop"),
		chromedp.Click(chromedp.CSS(`form[action="/agents/planner/tokens"] button`)), b.at("token"))
	check("token")
	// On a phone.
	b.do(chromedp.EmulateViewport(360, 780))
	for _, pg := range []struct{ path, page, name string }{{"/", "home", "bridge-phone"}, {"/projects/" + p.ID, "project", "project-phone"}, {"/conversations/" + conv.Conversation.ID, "conversation", "conversation-phone"},
		{"/agents/planner", "agent", "agent-phone"}, {"/conversations", "conversations", "conversations-phone"}} {
		b.open(pg.path, pg.page)
		check(pg.name)
	}
	b.do(chromedp.EmulateViewport(1100, 800))
	b.do(chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)), b.at("signin"))
	check("signin")
}

// consentPath is the consent page of a client that asks to act as one of
// the person's agents, as /authorize sends the browser there.
func consentPath(t *testing.T, s *site) string {
	t.Helper()
	c, err := s.auth.RegisterClient(context.Background(), oauth.ClientSpec{Name: "Claude Code", RedirectURIs: []string{"http://127.0.0.1:33418/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {"http://127.0.0.1:33418/callback"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"},
		"state": {"af0ifjsldkj"}, "scope": {"msg:read msg:write"}, "resource": {s.url + "/mcp/"}}
	return "/consent?" + q.Encode()
}
