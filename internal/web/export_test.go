package web_test

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/projects"
)

// TestExportButtons: a conversation's page and a project's page have an
// Export button that downloads the archive — export.md, export.json and
// the project's images — for the person, and not for anyone else (§18).
func TestExportButtons(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	bob := s.person(t, "bob")
	planner, _ := s.agent(t, "alice/planner")
	home := must(s.hub.Whoami(ctx, planner, "", "")).Home.Project.ID
	img, snippet, err := s.projects.UploadImage(ctx, planner, home, projects.ImageUpload{DataBase64: pngOf(t), Filename: "mock.png"})
	if err != nil {
		t.Fatal(err)
	}
	thread := must(s.hub.OpenThread(ctx, planner, home, "Design", "")).Conversation.ID
	if _, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: thread, Body: "The mock-up: " + snippet, Format: hub.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		page, export string
		files        []string
	}{
		{"/conversations/" + thread, "/conversations/" + thread + "/export", []string{"export.md", "export.json"}},
		{"/projects/" + home, "/projects/" + home + "/export", []string{"export.md", "export.json", "images/" + img.ID + ".png"}},
	} {
		p := alice.get(tc.page)
		found := false
		for _, a := range p.all("a") {
			if attr(a, "href") == tc.export && hasAttr(a, "download") && strings.TrimSpace(text(a)) == "Export" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s has no Export button for %s: %s", tc.page, tc.export, p.actionsAndLinks())
		}
		d := alice.get(tc.export)
		if d.status != 200 || d.header.Get("Content-Type") != "application/zip" || !strings.HasPrefix(d.header.Get("Content-Disposition"), "attachment; filename=palaver-") {
			t.Fatalf("GET %s: %d %v", tc.export, d.status, d.header)
		}
		z, err := zip.NewReader(bytes.NewReader([]byte(d.raw)), int64(len(d.raw)))
		if err != nil {
			t.Fatalf("GET %s: not a zip: %v", tc.export, err)
		}
		var names []string
		for _, f := range z.File {
			names = append(names, f.Name)
		}
		if strings.Join(names, " ") != strings.Join(tc.files, " ") {
			t.Errorf("GET %s: files %v, want %v", tc.export, names, tc.files)
		}
		if p := bob.get(tc.export); p.status != 404 || p.header.Get("Content-Type") == "application/zip" {
			t.Errorf("bob GET %s: %d %s", tc.export, p.status, p.header.Get("Content-Type"))
		}
		if p := s.browser(t).get(tc.export); p.header.Get("Content-Type") == "application/zip" {
			t.Errorf("GET %s signed out: %d, an archive", tc.export, p.status)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
