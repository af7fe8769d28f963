package api_test

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/render"
)

// events reads (without parking) the agent's events after cursor and
// returns them with the next cursor.
func (s *server) events(t *testing.T, agent, cursor string) ([]map[string]any, string) {
	t.Helper()
	r := s.tool(t, agent, "wait_for_messages", map[string]any{"cursor": cursor, "timeout_s": 0})
	var out []map[string]any
	evs, _ := r["events"].([]any)
	for _, e := range evs {
		out = append(out, e.(map[string]any))
	}
	return out, r["cursor"].(string)
}

func eventOf(evs []map[string]any, typ string) map[string]any {
	for _, e := range evs {
		if e["type"] == typ {
			return e
		}
	}
	return nil
}

// TestProjectScenario walks §8 through MCP (agents) and REST (people): a
// proposal approved, an agent brought in to listen and then to speak, and
// agents of two owners talking in a thread with no grant between them —
// and still no direct conversation without one.
func TestProjectScenario(t *testing.T) {
	s := newServer(t)
	if _, err := s.hub.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/writer"}); err != nil {
		t.Fatal(err)
	}
	var err error
	if _, s.agents["alice/writer"], err = s.hub.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: "writer"}); err != nil {
		t.Fatal(err)
	}
	cursor := s.tool(t, "alice/planner", "whoami", nil)["latest_cursor"].(string)

	// The planner proposes; alice approves it under approvals.
	proposed := s.tool(t, "alice/planner", "create_project", map[string]any{"name": "Launch", "description": "ship v1", "reason": "we need a place for the launch"})
	if proposed["status"] != "pending_approval" || proposed["request_id"] == nil {
		t.Fatalf("create_project: %v, want pending_approval with a request_id", proposed)
	}
	if got := s.tool(t, "alice/planner", "list_projects", nil); len(got["projects"].([]any)) != 1 {
		t.Fatalf("before approval the planner is in %v, want only the home project", got["projects"])
	}
	_, approvals := s.rest(t, "alice", "GET", "/approvals", nil)
	items := approvals["approvals"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["kind"] != "project_proposal" || items[0].(map[string]any)["name"] != "Launch" {
		t.Fatalf("alice's approvals: %v, want the proposal", items)
	}
	code, decided := s.rest(t, "alice", "POST", "/approvals/"+proposed["request_id"].(string)+"/approve", nil)
	project, _ := decided["project_id"].(string)
	if code != 200 || decided["status"] != "approved" || !strings.HasPrefix(project, "proj_") {
		t.Fatalf("approve: %d %v", code, decided)
	}
	evs, _ := s.events(t, "alice/planner", cursor)
	if e := eventOf(evs, hub.EventProjectApproved); e == nil || e["data"].(map[string]any)["project_id"] != project {
		t.Fatalf("the planner heard %v, want project.approved for %s", evs, project)
	}

	// The planner starts a thread; the writer, brought in to listen, may
	// read it but not send, until alice sets it to speak.
	thread := s.tool(t, "alice/planner", "open_thread", map[string]any{"project_id": project, "title": "Release plan"})["conversation_id"].(string)
	if again := s.tool(t, "alice/planner", "open_thread", map[string]any{"project_id": project, "title": "  release PLAN "}); again["conversation_id"] != thread {
		t.Fatalf("the same title in another case: %v, want %s", again, thread)
	}
	if code, got := s.rest(t, "alice", "PUT", "/projects/"+project+"/agents/writer", map[string]any{"access": "listen"}); code != 200 || got["access"] != "listen" {
		t.Fatalf("bringing the writer in to listen: %d %v", code, got)
	}
	if got := s.tool(t, "alice/writer", "send_message", map[string]any{"conversation_id": thread, "body": "I have ideas"}); got["status"] != "denied" || reason(got) != "listen" {
		t.Fatalf("a listening agent's send: %v, want denied with listen", got)
	}
	if got := s.tool(t, "alice/writer", "read_messages", map[string]any{"conversation_id": thread}); got["error"] != nil {
		t.Fatalf("a listening agent reading the thread: %v", got)
	}
	if code, _ := s.rest(t, "alice", "PUT", "/projects/"+project+"/agents/writer", map[string]any{"access": "speak"}); code != 200 {
		t.Fatalf("setting speak: %d", code)
	}
	if got := s.tool(t, "alice/writer", "send_message", map[string]any{"conversation_id": thread, "body": "I have ideas"}); got["status"] != "sent" {
		t.Fatalf("the writer's send with speak: %v", got)
	}

	// Bob becomes alice's contact and a member; he brings his helper in.
	if code, _ := s.rest(t, "alice", "PUT", "/projects/"+project+"/members/bob", nil); code != 400 {
		t.Fatalf("adding bob before he is a contact: %d, want 400", code)
	}
	s.rest(t, "alice", "POST", "/contacts", map[string]any{"handle": "bob"})
	_, bobs := s.rest(t, "bob", "GET", "/approvals", nil)
	req := bobs["approvals"].([]any)[0].(map[string]any)
	if req["kind"] != "contact_request" || req["from"] != "alice" {
		t.Fatalf("bob's approvals: %v, want alice's contact request", bobs)
	}
	if code, got := s.rest(t, "bob", "POST", "/approvals/"+req["id"].(string)+"/approve", nil); code != 200 || got["status"] != "accepted" {
		t.Fatalf("bob accepting through approvals: %d %v", code, got)
	}
	if code, _ := s.rest(t, "alice", "PUT", "/projects/"+project+"/members/bob", nil); code != 200 {
		t.Fatalf("adding bob: %d", code)
	}
	if code, got := s.rest(t, "bob", "PUT", "/projects/"+project+"/agents/planner", nil); code != 404 {
		t.Fatalf("bob bringing in alice's agent: %d %v, want 404", code, got)
	}
	if code, _ := s.rest(t, "bob", "PUT", "/projects/"+project+"/agents/helper", nil); code != 200 {
		t.Fatalf("bob bringing his helper in: %d", code)
	}
	if got := s.tool(t, "bob/helper", "send_message", map[string]any{"conversation_id": thread, "body": "hello from bob's helper"}); got["status"] != "sent" {
		t.Fatalf("bob's helper in the thread, with no grant: %v", got)
	}
	if got := s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": thread, "body": "welcome, helper"}); got["status"] != "sent" {
		t.Fatalf("alice's planner answering in the thread: %v", got)
	}
	if got := s.tool(t, "alice/planner", "open_conversation", map[string]any{"handles": []string{"bob/helper"}}); got["status"] != "denied" || reason(got) != "grant" {
		t.Fatalf("a direct conversation outside the project: %v, want denied with grant", got)
	}

	// get_project shows who is in it; bob sees the thread as a person.
	got := s.tool(t, "bob/helper", "get_project", map[string]any{"project_id": project})
	if len(got["members"].([]any)) != 2 || len(got["agents"].([]any)) != 3 || len(got["threads"].([]any)) != 1 {
		t.Fatalf("get_project: %v", got)
	}
	if code, msgs := s.rest(t, "bob", "GET", "/conversations/"+thread+"/messages", nil); code != 200 || len(msgs["messages"].([]any)) != 3 {
		t.Fatalf("bob reading the thread: %d %v", code, msgs)
	}
	// Removing bob takes his helper out of the project with him.
	if code, _ := s.rest(t, "alice", "DELETE", "/projects/"+project+"/members/bob", nil); code != 200 {
		t.Fatalf("removing bob: %d", code)
	}
	if got := s.tool(t, "bob/helper", "send_message", map[string]any{"conversation_id": thread, "body": "still here?"}); got["error"] == nil {
		t.Fatalf("bob's helper after bob left: %v, want not_found", got)
	}
	if code, _ := s.rest(t, "bob", "GET", "/conversations/"+thread+"/messages", nil); code != 404 {
		t.Fatalf("bob reading the thread after he left: %d, want 404", code)
	}
}

// pngOf encodes a small real PNG.
func pngOf(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bilevelPNG is a whole PNG of w × h black pixels, one bit each: a few
// kilobytes however many pixels it stands for.
func bilevelPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(kind string, data []byte) {
		binary.Write(&out, binary.BigEndian, uint32(len(data)))
		body := append([]byte(kind), data...)
		out.Write(body)
		binary.Write(&out, binary.BigEndian, crc32.ChecksumIEEE(body))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 1, 0 // bit depth 1, greyscale
	chunk("IHDR", ihdr)
	var idat bytes.Buffer
	z := zlib.NewWriter(&idat)
	row := make([]byte, 1+(w+7)/8) // filter none, then the row's bits
	for range h {
		z.Write(row)
	}
	z.Close()
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

// TestUploadImagePixels: an image is at most projects.MaxImagePixels (25
// megapixels) wide × high, read from its header: a 50-megapixel picture
// in a few kilobytes is refused naming the limit, and nothing is stored;
// one of exactly 25 megapixels is taken.
func TestUploadImagePixels(t *testing.T) {
	s := newServer(t)
	home := s.tool(t, "alice/planner", "whoami", nil)["home_project"].(map[string]any)["id"].(string)
	for _, tc := range []struct {
		w, h int
		want string
	}{{10000, 5000, "too_large"}, {5000, 5001, "too_large"}, {25_000_001, 1, "too_large"}, {5000, 5000, ""}} {
		data := bilevelPNG(t, tc.w, tc.h)
		got := s.tool(t, "alice/planner", "upload_image", map[string]any{"project_id": home, "data_base64": base64.StdEncoding.EncodeToString(data)})
		e, _ := got["error"].(map[string]any)
		switch {
		case tc.want == "" && e != nil:
			t.Errorf("%d × %d (%d bytes): %v; want it stored", tc.w, tc.h, len(data), got)
		case tc.want != "" && (e == nil || e["code"] != tc.want || !strings.Contains(e["message"].(string), "the limit is 25 megapixels") ||
			!strings.Contains(e["message"].(string), fmt.Sprintf("%d × %d pixels", tc.w, tc.h))):
			t.Errorf("%d × %d (%d bytes): %v; want %s naming the size and the limit", tc.w, tc.h, len(data), got, tc.want)
		}
	}
	alice, _ := s.hub.User(ctx, "alice")
	if b, err := s.Overview.ProjectBoard(ctx, alice, home); err != nil || len(b.Images) != 1 {
		t.Errorf("the project's images: %+v, %v; want the one taken", b, err)
	}
}

// TestUploadImage: a real PNG is stored and its snippet renders as the
// project's image; a member fetches it, anyone else gets 404; an image
// over 2 MB and a text file named .png are refused with the reason.
func TestUploadImage(t *testing.T) {
	s := newServer(t)
	home := s.tool(t, "alice/planner", "whoami", nil)["home_project"].(map[string]any)["id"].(string)
	data := pngOf(t)
	up := s.tool(t, "alice/planner", "upload_image", map[string]any{"project_id": home, "data_base64": base64.StdEncoding.EncodeToString(data),
		"filename": "dot.png", "alt": "a red dot"})
	imageID, _ := up["image_id"].(string)
	if up["mime"] != "image/png" || !strings.HasPrefix(imageID, "img_") || up["markdown"] != "![a red dot]("+projects.ImagePath(home, imageID)+")" {
		t.Fatalf("upload_image: %v", up)
	}
	again := s.tool(t, "alice/planner", "upload_image", map[string]any{"project_id": home, "data_base64": base64.StdEncoding.EncodeToString(data)})
	if again["image_id"] != imageID {
		t.Fatalf("the same bytes again: %v, want the same image %s", again, imageID)
	}
	html := string(render.Markdown("Here: "+up["markdown"].(string), render.Options{Image: projects.ImageSource(home)}))
	if !strings.Contains(html, `<img src="`+projects.ImagePath(home, imageID)+`" alt="a red dot">`) {
		t.Fatalf("the snippet renders as %s", html)
	}
	if other := string(render.Markdown(up["markdown"].(string), render.Options{Image: projects.ImageSource("proj_other")})); strings.Contains(other, "<img") {
		t.Fatalf("another project's post shows the image: %s", other)
	}

	fetch := func(person string) (int, []byte, string) {
		req, _ := http.NewRequest("GET", s.url+"/api/v1/projects/"+home+"/images/"+imageID, nil)
		req.Header.Set("Authorization", "Bearer "+s.people[person])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, resp.Header.Get("Content-Type")
	}
	if code, b, typ := fetch("alice"); code != 200 || !bytes.Equal(b, data) || typ != "image/png" {
		t.Fatalf("alice fetching the image: %d %s, %d bytes", code, typ, len(b))
	}
	if code, _, _ := fetch("bob"); code != 404 {
		t.Fatalf("bob, not a member, fetching it: %d, want 404", code)
	}

	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"2 MB and one byte", append(append([]byte{}, data...), make([]byte, projects.MaxImageBytes+1-len(data))...), "too_large"},
		{"a text file named .png", []byte("just some text, not a picture"), "not_an_image"},
	} {
		got := s.tool(t, "alice/planner", "upload_image", map[string]any{"project_id": home, "data_base64": base64.StdEncoding.EncodeToString(tc.data), "filename": "x.png"})
		e, _ := got["error"].(map[string]any)
		if e == nil || e["code"] != tc.want || !strings.Contains(e["message"].(string), "PNG") && tc.want == "not_an_image" {
			t.Errorf("%s: %v, want %s", tc.name, got, tc.want)
		}
	}
	exact := append(append([]byte{}, data...), make([]byte, projects.MaxImageBytes-len(data))...)
	if got := s.tool(t, "alice/planner", "upload_image", map[string]any{"project_id": home, "data_base64": base64.StdEncoding.EncodeToString(exact)}); got["error"] != nil {
		t.Fatalf("exactly 2 MB: %v", got)
	}
}
