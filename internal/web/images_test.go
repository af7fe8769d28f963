package web_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/projects"
)

// TestThreadImages: a markdown post in a project thread shows the
// project's own image; its member's browser fetches it, with no sniffing
// and no scripts; another person's is not found.
func TestThreadImages(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	bob := s.person(t, "bob")
	planner, _ := s.agent(t, "alice/planner")
	w, err := s.hub.Whoami(ctx, planner, "", "")
	if err != nil {
		t.Fatal(err)
	}
	home := w.Home.Project.ID
	pic := image.NewRGBA(image.Rect(0, 0, 4, 4))
	pic.Set(1, 1, color.RGBA{R: 200, A: 255})
	var data bytes.Buffer
	png.Encode(&data, pic)
	img, snippet, err := s.projects.UploadImage(ctx, planner, home, projects.ImageUpload{DataBase64: base64.StdEncoding.EncodeToString(data.Bytes()), Alt: "a red dot"})
	if err != nil {
		t.Fatal(err)
	}
	th, err := s.hub.OpenThread(ctx, planner, home, "Design", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: th.Conversation.ID, Body: "The mock-up: " + snippet, Format: hub.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	p := alice.get("/conversations/" + th.Conversation.ID)
	imgs := p.all("img")
	if len(imgs) != 1 || attr(imgs[0], "src") != projects.ImagePath(home, img.ID) || attr(imgs[0], "alt") != "a red dot" {
		t.Fatalf("the post's images: %d %v", len(imgs), imgs)
	}
	get := func(b *browser) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", s.url+projects.ImagePath(home, img.ID), nil)
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	resp, body := get(alice)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
		resp.Header.Get("Content-Security-Policy") != "default-src 'none'; sandbox" || !bytes.Equal(body, data.Bytes()) {
		t.Fatalf("alice's image: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := get(bob); resp.StatusCode != 404 {
		t.Fatalf("bob fetches alice's image: %d", resp.StatusCode)
	}
}
