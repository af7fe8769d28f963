package export_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"

	"github.com/palaverhq/palaver/internal/export"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/reach"
)

// What others' words may carry into an export, and what they may not.

// TestEditedWordsOnlyForTheEditor: the agent's own words of a message its
// owner edited are in that owner's export, in export.md and export.json,
// and in no one else's: bob, a member of the project, gets the words that
// went out, owner_edited, and nothing of the draft (§7, §18).
func TestEditedWordsOnlyForTheEditor(t *testing.T) {
	w := newWorld(t)
	projectID, _ := w.launch(t)
	must(reach.New(w.Hub, w.Store).RequestContact(ctx, w.alice, "bob", ""))
	must(reach.New(w.Hub, w.Store).RequestContact(ctx, w.bob, "alice", ""))
	must(w.Hub.AddMember(ctx, w.alice, projectID, "bob"))
	for _, c := range []struct {
		who  *hub.User
		sees bool
	}{{w.alice, true}, {w.bob, false}} {
		e, err := w.exports.Project(ctx, c.who, projectID)
		if err != nil {
			t.Fatal(err)
		}
		_, files := archive(t, e)
		doc := readDocument(t, files["export.json"])
		edited := doc.Conversations[0].Messages[3]
		if edited.Body != "LGTM, ship it on Friday" || edited.Provenance.Authority != hub.AuthorityEdited {
			t.Errorf("%s: the edited message %+v; want the approved words, owner_edited", c.who.Handle, edited)
		}
		original := ""
		if c.sees {
			original = "LGTM, ship it now"
		}
		if edited.OriginalBody != original {
			t.Errorf("%s: original_body %q; want %q", c.who.Handle, edited.OriginalBody, original)
		}
		if !c.sees && strings.Contains(string(files["export.json"]), "original_body") {
			t.Errorf("%s: export.json names original_body", c.who.Handle)
		}
		md := string(files["export.md"])
		if !strings.Contains(md, "> LGTM, ship it on Friday\n") || !strings.Contains(md, "`owner_edited`") {
			t.Errorf("%s: export.md lacks the approved words or the authority:\n%s", c.who.Handle, md)
		}
		for _, draft := range []string{"ship it now", "The agent's own words"} {
			if strings.Contains(md, draft) != c.sees {
				t.Errorf("%s: export.md has %q: %v; want %v", c.who.Handle, draft, !c.sees, c.sees)
			}
		}
	}
}

// TestMarkdownLinksAreSafe: a markdown post's links to javascript:, data:
// and vbscript: — inline, autolink or by reference, in any case, with a
// character reference or white space in the scheme — are text in
// export.md, and an image from elsewhere is a plain link, so a viewer that
// shows everything it is given (goldmark with raw HTML and every URL
// allowed, as a markdown viewer may be) runs nothing and loads nothing
// when the file is opened; the project's own image still shows, from the
// archive (§18, §11).
func TestMarkdownLinksAreSafe(t *testing.T) {
	w := newWorld(t)
	p := must(w.Hub.CreateProject(ctx, w.alice, "Launch", ""))
	must(w.Hub.SetProjectAgent(ctx, w.alice, p.ID, "planner", hub.AccessSpeak, false))
	plan := must(w.Hub.OpenThread(ctx, w.Planner, p.ID, "Plan", "")).Conversation.ID
	img, snippet, err := w.projects.UploadImage(ctx, w.Planner, p.ID, projects.ImageUpload{DataBase64: pngData(t), Alt: "ours"})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Join([]string{
		"[inline](javascript:alert(1)) [angle](< JaVaScRiPt:alert(2)>) [entity](java&#x73;cript:alert(3)) [spaced](   javascript:alert(4) \"t\")",
		"[data](data:text/html;base64,PHNjcmlwdD4=) [vb](VbScRiPt:msgbox(1)) <javascript:alert(5)> <DATA:text/html,x>",
		"[full][js] [js][] [js] ![remote](https://evil.example/track.png) ![remote ref][pic] [fine](https://a.example/docs)",
		snippet,
		"",
		"[pic]: https://evil.example/pixel.gif",
		"[js]: JAVA&#115;CRIPT:alert(6)",
	}, "\n")
	must(w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: plan, Format: hub.FormatMarkdown, Body: body, Summary: "links"}))
	e, err := w.exports.Project(ctx, w.alice, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, files := archive(t, e)
	md := files["export.md"]
	var page bytes.Buffer
	viewer := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := viewer.Convert(md, &page); err != nil {
		t.Fatal(err)
	}
	var hrefs, srcs []string
	for _, m := range regexp.MustCompile(`(href|src)="([^"]*)"`).FindAllStringSubmatch(page.String(), -1) {
		if m[1] == "src" {
			srcs = append(srcs, m[2])
		} else {
			hrefs = append(hrefs, m[2])
		}
	}
	own := export.ImageFile(img)
	if d := cmp.Diff([]string{own, own}, srcs); d != "" { // in the post, and in the list of images
		t.Errorf("images shown by export.md (-want +got):\n%s\n%s", d, md)
	}
	if d := cmp.Diff([]string{"https://evil.example/track.png", "https://evil.example/pixel.gif", "https://a.example/docs"}, hrefs); d != "" {
		t.Errorf("links in export.md (-want +got):\n%s\n%s", d, md)
	}
	for _, words := range []string{"inline", "angle", "entity", "spaced", "data", "vb", "remote", "fine"} {
		if !strings.Contains(page.String(), words) {
			t.Errorf("export.md lost the words %q:\n%s", words, page.String())
		}
	}
}
