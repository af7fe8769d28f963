package web_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/palaverhq/palaver/internal/projects"
)

// pngOf is a small picture, as base64.
func pngOf(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 6, 4))
	for x := range 6 {
		for y := range 4 {
			img.Set(x, y, color.RGBA{R: uint8(40 * x), G: 120, B: uint8(60 * y), A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// signIn signs the tab in as a person with the tests' password.
func (b *tab) signIn(handle string) {
	b.t.Helper()
	b.open("/signin", "signin")
	b.do(chromedp.SendKeys(chromedp.CSS(`input[name=handle]`), handle),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`form[action="/signin"] button`)),
		b.at("home"))
}

// TestBrowserProjects walks the project pages in real Chromium, with
// JavaScript on and off: approve an agent's proposal in place, bring an
// agent in, let in an agent that asks, move an item across the board and
// see its history, view an image of the gallery, and post in a thread as
// a person. Someone not in the project gets 404 for its pages and images.
func TestBrowserProjects(t *testing.T) {
	chromium(t)
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "javascript", false: "no-javascript"}[js], func(t *testing.T) {
			s := newSite(t)
			s.hub.CreateUser(ctx, "alice", "Alice")
			s.accounts.SetPassword(ctx, "alice", "correct horse battery")
			planner, _ := s.agent(t, "alice/planner")
			s.agent(t, "alice/writer")
			reviewer, _ := s.agent(t, "alice/reviewer")
			if _, err := s.projects.ProposeProject(ctx, planner, "Release 2.0", "Everything for the 2.0 release", "We need one place for the release work", "laptop"); err != nil {
				t.Fatal(err)
			}
			b := newTab(t, s, js)
			b.signIn("alice")

			b.open("/projects", "projects")
			b.waitText(byID("proposals-heading"), "Proposed by your agents")
			b.screenshot("projects")
			b.do(chromedp.Click(chromedp.CSS(`form[action$="/approve"] button`)), b.at("projects"))
			b.waitText(`//table`, "Release 2.0")
			var project string
			ps, _ := s.hub.Projects(ctx, mustUser(t, s, "alice"))
			for _, p := range ps {
				if p.Name == "Release 2.0" {
					project = p.ID
				}
			}
			if project == "" {
				t.Fatal("approving the proposal made no project")
			}

			// The planner, brought in by the approval, fills the project.
			item, err := s.projects.AddItem(ctx, planner, project, projects.ItemSpec{Title: "Write the release notes", Instance: "laptop"})
			if err != nil {
				t.Fatal(err)
			}
			img, _, err := s.projects.UploadImage(ctx, planner, project, projects.ImageUpload{DataBase64: pngOf(t), Filename: "chart.png", Alt: "Burn-down chart"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.projects.RequestProjectAccess(ctx, reviewer, project, "I review every release"); err != nil {
				t.Fatal(err)
			}

			b.open("/projects/"+project, "project")
			b.waitText(byID("project-agents"), "alice/planner")
			// Bring the writer in.
			b.do(chromedp.SetValue(chromedp.CSS(`select[name=slug]`), "writer"),
				chromedp.Click(chromedp.CSS(`form[action="/projects/`+project+`/agents"] button`)), b.at("project"))
			b.waitText(notice, "alice/writer is in the project")
			b.waitText(byID("project-agents"), "alice/writer")
			// Let the reviewer in, in place.
			b.waitText(byID("requests-heading"), "asking to come in")
			b.do(chromedp.Click(chromedp.CSS(`#requests-heading ~ article form[action$="/approve"] button`)), b.at("project"))
			b.waitText(byID("project-agents"), "alice/reviewer")
			// Move the item from open to doing.
			b.waitText(`//section[contains(@class,'column-open')]`, "Write the release notes")
			b.do(chromedp.SetValue(chromedp.ID("status-"+item.Item.ID), "doing"),
				chromedp.Click(chromedp.CSS(`form[action="/projects/`+project+`/items/`+item.Item.ID+`/status"] button`)), b.at("project"))
			b.waitText(`//section[contains(@class,'column-doing')]`, "Write the release notes")
			b.waitText(notice, "is doing now")
			// The image shows in the gallery.
			b.waitText(byID("images"), "chart.png")
			if js {
				loaded := evaluate[bool](b, `(function () { var i = document.querySelector(".gallery img"); return i.complete && i.naturalWidth === 6; })()`)
				if !loaded {
					t.Error("the gallery's image did not load")
				}
			}
			b.screenshot("project")
			b.do(chromedp.EmulateViewport(360, 780))
			b.open("/projects/"+project, "project")
			b.screenshot("project-phone")
			b.do(chromedp.EmulateViewport(1100, 800))

			// The item's history: added by the planner's session, moved by alice.
			b.open("/projects/"+project+"/items/"+item.Item.ID, "item")
			b.waitText(byID("history"), "alice/planner (laptop)")
			b.waitText(byID("history")+`//tr[contains(., 'status: doing')]`, "alice")
			b.screenshot("item")

			// View the image: its own address shows the picture.
			b.open("/projects/"+project, "project")
			b.do(chromedp.Click(chromedp.CSS(`.gallery a`)),
				chromedp.WaitNotPresent(chromedp.CSS(`main`)))
			if loc := b.location(); loc != s.url+projects.ImagePath(project, img.ID) {
				t.Errorf("viewing the image went to %s", loc)
			}

			// A member posts in a thread as a person.
			b.open("/projects/"+project, "project")
			b.do(chromedp.SendKeys(chromedp.CSS(`form[action="/projects/`+project+`/threads"] input[name=title]`), "Release plan"),
				chromedp.Click(chromedp.CSS(`form[action="/projects/`+project+`/threads"] button`)), b.at("conversation"))
			b.do(chromedp.SendKeys(chromedp.CSS(`textarea[name=body]`), "Notes first, then the tag."),
				chromedp.Click(chromedp.CSS(`form.post button`)), b.at("conversation"))
			b.waitText(byID("messages"), "Notes first, then the tag.")
			b.open("/projects/"+project, "project")
			b.waitText(byID("threads"), "Release plan")

			// Bob is not in the project: its pages and images are not there.
			if _, err := s.hub.CreateUser(ctx, "bob", ""); err != nil {
				t.Fatal(err)
			}
			s.accounts.SetPassword(ctx, "bob", "correct horse battery")
			bob := s.browser(t)
			bob.submit(bob.get("/signin"), "/signin", url.Values{"handle": {"bob"}, "password": {"correct horse battery"}})
			for _, path := range []string{"/projects/" + project, "/projects/" + project + "/items/" + item.Item.ID, projects.ImagePath(project, img.ID)} {
				if p := bob.get(path); p.status != 404 {
					t.Errorf("bob at %s: %d, want 404", path, p.status)
				}
			}
		})
	}
}
