package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
)

// TestAgentPageLayout: an agent's page opens with its summary — mode,
// presence, sessions, tokens in use — and a menu of its sections, each
// link leading to a section on the page; the site's menu names the Bridge
// and sits in a disclosure a phone opens without JavaScript.
func TestAgentPageLayout(t *testing.T) {
	s := newSite(t)
	b := s.person(t, "alice")
	s.agent(t, "alice/planner") // one token
	if _, _, err := s.hub.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: "planner", Name: "ci"}); err != nil {
		t.Fatal(err)
	}
	p := b.get("/agents/planner")
	if got := p.byClass("summary"); !strings.Contains(got, "Mode active") || !strings.Contains(got, "Tokens in use 2") || !strings.Contains(got, "Sessions 0") || !strings.Contains(got, "Presence") {
		t.Errorf("the summary: %q", got)
	}
	ids := map[string]bool{}
	walk(p.doc, func(n *html.Node) {
		if id := attr(n, "id"); id != "" {
			ids[id] = true
		}
	})
	var sections []string
	for _, nav := range p.all("nav") {
		if attr(nav, "aria-label") != "On this page" {
			continue
		}
		for _, a := range findAll(nav, "a") {
			href := attr(a, "href")
			sections = append(sections, href)
			if !ids[strings.TrimPrefix(href, "#")] {
				t.Errorf("the section link %s leads nowhere on the page", href)
			}
		}
	}
	if len(sections) < 8 {
		t.Errorf("the section menu: %v", sections)
	}
	var menu string
	for _, d := range p.all("details") {
		if strings.Contains(attr(d, "class"), "menu-toggle") {
			menu = strings.Join(strings.Fields(text(d)), " ")
		}
	}
	if !strings.HasPrefix(menu, "Menu Bridge Approvals") || !strings.Contains(menu, "Sign out @alice") {
		t.Errorf("the menu's disclosure: %q", menu)
	}
}

// TestBrowserLayout: at 1280 × 900 an agent with two sessions, three
// tokens, a webhook and A2A on shows its summary and its section menu on
// the first screen; at 390 px the site's menu is one line, "Menu", that
// opens (JavaScript or not) to the links and Sign out.
func TestBrowserLayout(t *testing.T) {
	chromium(t)
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "javascript", false: "no-javascript"}[js], func(t *testing.T) {
			s := newSite(t)
			s.hub.CreateUser(ctx, "alice", "")
			s.accounts.SetPassword(ctx, "alice", "correct horse battery")
			planner, _ := s.agent(t, "alice/planner")
			for _, name := range []string{"laptop", "ci"} {
				if _, _, err := s.hub.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: "planner", Name: name}); err != nil {
					t.Fatal(err)
				}
			}
			for _, in := range []string{"laptop", "desk"} {
				if _, err := s.hub.Whoami(ctx, planner, in, ""); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.tasks.SetExposure(ctx, mustUser(t, s, "alice"), "planner", tasks.Setting{Exposed: true}); err != nil {
				t.Fatal(err)
			}
			b := newTab(t, s, js)
			b.do(chromedp.EmulateViewport(1280, 900))
			b.signIn("alice")
			b.open("/agents/planner", "agent")
			bottoms := evaluate[[]float64](b, `[document.querySelector('#summary').getBoundingClientRect().bottom, document.querySelector('nav.sections').getBoundingClientRect().bottom]`)
			t.Logf("at 1280 × 900 the summary ends at %.0f px, the section menu at %.0f px", bottoms[0], bottoms[1])
			if len(bottoms) != 2 || bottoms[0] > 900 || bottoms[1] > 900 {
				t.Errorf("the summary and section menu end at %v px; want both within the first 900", bottoms)
			}
			b.screenshot("agent-1280")
			b.do(chromedp.EmulateViewport(390, 844))
			b.open("/agents/planner", "agent")
			h := evaluate[float64](b, `document.querySelector('header nav').getBoundingClientRect().height`)
			signOut := evaluate[bool](b, `document.querySelector('form[action="/signout"] button').checkVisibility()`)
			t.Logf("at 390 px the closed menu is %.0f px high", h)
			if h > 70 || signOut {
				t.Errorf("at 390 px the header is %.0f px high, Sign out shown %v; want one line with Sign out in the closed menu", h, signOut)
			}
			b.screenshot("agent-phone")
			b.do(chromedp.Click(chromedp.CSS(`.menu-toggle > summary`)),
				chromedp.WaitVisible(chromedp.CSS(`form[action="/signout"] button`)),
				chromedp.Click(chromedp.CSS(`.menu-toggle a[href="/"]`)), b.at("home"))
		})
	}
}
