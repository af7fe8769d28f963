package export_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/export"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/projects"
)

var ctx = context.Background()

// world is a hubtest world (the backend PALAVER_TEST_STORE names, alice
// with agents planner and reviewer, and bob) whose clock moves a second at
// every reading, so times in the export are all different, with alice and
// bob by their display names.
type world struct {
	*hubtest.World
	exports    *export.Exporter
	projects   *projects.Projects
	alice, bob *hub.User
}

func newWorld(t *testing.T) *world {
	t.Helper()
	hw := hubtest.Open(t, hub.DefaultSettings())
	hw.Clock.Tick(time.Second)
	w := &world{World: hw, exports: export.New(hw.Hub, hw.Store), projects: projects.New(hw.Hub, hw.Store)}
	for handle, name := range map[string]string{"alice": "Alice", "bob": "Bob"} {
		id := hw.Person(t, handle).ID
		if err := hw.Store.Update(ctx, func(tx hub.Tx) error { return tx.SetUserName(ctx, id, name) }); err != nil {
			t.Fatal(err)
		}
	}
	w.alice, w.bob = hw.Person(t, "alice"), hw.Person(t, "bob")
	return w
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// pngData is a small PNG image, in base64.
func pngData(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// launch makes alice's project "Launch" with the planner and the reviewer
// (its sends held for review there) in it; a thread "Plan" with a markdown
// post showing an uploaded image, alice's words, an event post, and the
// reviewer's held message that alice edited before letting it go; an
// item, moved to doing, with a thread of its own; and places read.
func (w *world) launch(t *testing.T) (projectID string, img *hub.Image) {
	t.Helper()
	p := must(w.Hub.CreateProject(ctx, w.alice, "Launch <v1>", "ship *v1*\nby Friday"))
	must(w.Hub.SetProjectAgent(ctx, w.alice, p.ID, "planner", hub.AccessSpeak, false))
	must(w.Hub.SetProjectAgent(ctx, w.alice, p.ID, "reviewer", hub.AccessSpeak, true))
	plan := must(w.Hub.OpenThread(ctx, w.Planner, p.ID, "Plan", "")).Conversation.ID
	img, snippet, err := w.projects.UploadImage(ctx, w.Planner, p.ID, projects.ImageUpload{DataBase64: pngData(t), Filename: "shot.png", Alt: "the screen", Instance: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	must(w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: plan, Format: hub.FormatMarkdown, Instance: "desk",
		Body: "# The plan\n\n1. **ship** it <script>alert(1)</script>\n\n" + snippet, ClientMsgID: "plan-1"}))
	must(w.Hub.PostAsPerson(ctx, w.alice, plan, "Looks good.\n# not a heading", hub.FormatText))
	must(w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: plan, Kind: "tool_call", Metadata: json.RawMessage(`{"tool":"go test","args":["./..."]}`),
		Body: "ran the tests", Mentions: []string{"alice/reviewer"}, ReplyToSeq: 2}))
	held := must(w.Hub.SendMessage(ctx, w.Reviewer, hub.SendInput{ConversationID: plan, Body: "LGTM, ship it now", Summary: "ship it"}))
	if held.Message.Status != hub.MessageHeld {
		t.Fatalf("the reviewer's send in a project where it is in review: %s", held.Message.Status)
	}
	must(w.Hub.DecideHeld(ctx, w.alice, held.Message.ID, hub.Decision{Approve: true, Body: "LGTM, ship it on Friday"}))
	rejected := must(w.Hub.SendMessage(ctx, w.Reviewer, hub.SendInput{ConversationID: plan, Body: "never sent"}))
	must(w.Hub.DecideHeld(ctx, w.alice, rejected.Message.ID, hub.Decision{}))
	must(w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: plan, Instance: "bench"}))

	item := must(w.projects.AddItem(ctx, w.Planner, p.ID, projects.ItemSpec{Title: "Write the notes", Note: "see _NOTES.md_", URL: "https://a.example/notes", Instance: "desk"}))
	must(w.projects.UpdateItem(ctx, w.Planner, p.ID, item.Item.ID, projects.ItemEdit{Status: new("doing")}))
	notes := must(w.Hub.OpenThread(ctx, w.Planner, p.ID, "", item.Item.ID)).Conversation.ID
	must(w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: notes, Body: "drafting"}))
	return p.ID, img
}

// archive writes e and reads the archive back: each file's bytes by name,
// in the archive's order.
func archive(t *testing.T, e *export.Export) (names []string, files map[string][]byte) {
	t.Helper()
	var b bytes.Buffer
	if err := export.Write(ctx, &b, e); err != nil {
		t.Fatal(err)
	}
	z, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	files = map[string][]byte{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, f.Name)
		files[f.Name] = data
	}
	return names, files
}

// The shape of export.json as docs/owners.md describes it, written out
// here again so that the test reads the file as its readers do.
type (
	principal   struct{ ID, Handle string }
	participant struct {
		ID, Handle, Kind, Role string
		Owner                  *principal
		JoinedAt               string `json:"joined_at"`
	}
	message struct {
		MessageID      string `json:"message_id"`
		ConversationID string `json:"conversation_id"`
		Seq            int64
		Sender         struct{ ID, Handle, Kind, Instance string }
		Body, Summary  string
		Format, Kind   string
		Metadata       json.RawMessage
		Mentions       []string
		ReplyToSeq     int64  `json:"reply_to_seq"`
		NoReply        bool   `json:"no_reply"`
		ToInstance     string `json:"to_instance"`
		ClientMsgID    string `json:"client_msg_id"`
		CreatedAt      string `json:"created_at"`
		Provenance     struct {
			Author     string
			AI         bool
			OnBehalfOf principal `json:"on_behalf_of"`
			Authority  string
			AttestedBy string `json:"attested_by"`
		}
		OriginalBody string     `json:"original_body"`
		DecidedBy    *principal `json:"decided_by"`
		DecidedAt    string     `json:"decided_at"`
	}
	read struct {
		Principal   principal
		Instance    string
		LastReadSeq int64 `json:"last_read_seq"`
		At          string
	}
	conversation struct {
		ConversationID string `json:"conversation_id"`
		Kind           string
		Room           bool
		Title, Goal    string
		Status         string
		ProjectID      string `json:"project_id"`
		ItemID         string `json:"item_id"`
		Creator        principal
		CreatedAt      string `json:"created_at"`
		UpdatedAt      string `json:"updated_at"`
		LastSeq        int64  `json:"last_seq"`
		Participants   []participant
		Messages       []message
		Reads          []read
	}
	change struct {
		By       principal
		Instance string
		Changes  map[string]string
		At       string
	}
	item struct {
		ItemID                 string `json:"item_id"`
		Kind, Title, Note, URL string
		Status                 string
		ConversationID         string `json:"conversation_id"`
		CreatedAt              string `json:"created_at"`
		UpdatedAt              string `json:"updated_at"`
		History                []change
	}
	img struct {
		ImageID        string `json:"image_id"`
		File, Filename string
		Alt, MIME      string
		Size           int
		SHA256         string
		UploadedBy     principal `json:"uploaded_by"`
		Instance       string
		CreatedAt      string `json:"created_at"`
	}
	document struct {
		Format     string
		Version    int
		ExportedAt string    `json:"exported_at"`
		ExportedBy principal `json:"exported_by"`
		Untrusted  bool
		Project    *struct {
			ProjectID   string `json:"project_id"`
			Name        string
			Description string
			Owner       principal
			Home        bool
			AgentCap    string `json:"agent_cap"`
			CreatedAt   string `json:"created_at"`
			UpdatedAt   string `json:"updated_at"`
			ArchivedAt  string `json:"archived_at"`
			Members     []struct {
				ID, Handle, Name string
				AddedAt          string `json:"added_at"`
			}
			Agents []struct {
				ID, Handle string
				Owner      principal
				Access     string
				Review     bool
				AddedAt    string `json:"added_at"`
			}
			Items  []item
			Images []img
		}
		Conversations []conversation
	}
)

var at = hub.FormatTime

// handles names principals by id, from the store.
func handleOf(t *testing.T, s hub.Store, id string) string {
	t.Helper()
	if strings.HasPrefix(id, "usr_") {
		return must(s.UserByID(ctx, id)).Handle
	}
	return must(s.AgentByID(ctx, id)).Handle()
}

// wantConversation is a conversation as export.json must hold it for
// viewer, read from the store: with the agent's own words of a message its
// owner edited only when viewer is that owner.
func wantConversation(t *testing.T, s hub.Store, id string, viewer *hub.User) conversation {
	t.Helper()
	c := must(s.Conversation(ctx, id))
	want := conversation{ConversationID: c.ID, Kind: c.Kind, Room: c.ByMention, Title: c.Title, Goal: c.Goal, Status: c.State(),
		ProjectID: c.ProjectID, ItemID: c.ItemID, Creator: principal{c.CreatorID, handleOf(t, s, c.CreatorID)},
		CreatedAt: at(c.CreatedAt), UpdatedAt: at(c.UpdatedAt), LastSeq: c.LastSeq, Participants: []participant{}, Messages: []message{}, Reads: []read{}}
	for _, p := range must(s.Participants(ctx, id)) {
		pp := participant{ID: p.PrincipalID, Handle: p.Handle, Kind: p.Kind, Role: p.Role, JoinedAt: at(p.JoinedAt)}
		if p.Kind == hub.PrincipalAgent {
			pp.Owner = &principal{p.OwnerID, handleOf(t, s, p.OwnerID)}
		}
		want.Participants = append(want.Participants, pp)
	}
	msgs := must(s.Messages(ctx, id, 0, 1000))
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	originals := must(s.OriginalBodies(ctx, ids))
	for _, m := range msgs {
		if m.OwnerID == viewer.ID {
			m.OriginalBody = originals[m.ID]
		}
		wm := message{MessageID: m.ID, ConversationID: m.ConversationID, Seq: m.Seq, Body: m.Body, Summary: m.Summary, Format: m.Format,
			Kind: m.Kind, Metadata: m.Metadata, Mentions: append([]string{}, m.Mentions...), ReplyToSeq: m.ReplyToSeq, NoReply: m.NoReply,
			ToInstance: m.ToInstance, ClientMsgID: m.ClientMsgID, CreatedAt: at(m.CreatedAt), OriginalBody: m.OriginalBody, DecidedAt: at(m.DecidedAt)}
		wm.Sender.ID, wm.Sender.Handle, wm.Sender.Kind, wm.Sender.Instance = m.SenderID, m.SenderHandle, m.SenderKind, m.SenderInstance
		wm.Provenance.Author, wm.Provenance.AI, wm.Provenance.Authority, wm.Provenance.AttestedBy = m.Author, m.Author == "agent", m.Authority, "server"
		wm.Provenance.OnBehalfOf = principal{m.OwnerID, m.OwnerHandle}
		if m.DecidedBy != "" {
			wm.DecidedBy = &principal{m.DecidedBy, handleOf(t, s, m.DecidedBy)}
		}
		want.Messages = append(want.Messages, wm)
	}
	for _, r := range must(s.Reads(ctx, id)) {
		want.Reads = append(want.Reads, read{Principal: principal{r.PrincipalID, r.Handle}, Instance: r.Instance, LastReadSeq: r.LastReadSeq, At: at(r.UpdatedAt)})
	}
	return want
}

// readDocument parses export.json, its metadata compacted as stored.
func readDocument(t *testing.T, data []byte) document {
	t.Helper()
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Conversations {
		for i, m := range c.Messages {
			if len(m.Metadata) > 0 {
				var b bytes.Buffer
				if err := json.Compact(&b, m.Metadata); err != nil {
					t.Fatal(err)
				}
				c.Messages[i].Metadata = b.Bytes()
			}
		}
	}
	return doc
}

// TestProjectRoundTrip: a project with threads, items, an image, an edited
// message and event posts exports to Markdown and JSON, and the JSON read
// back is what the database holds (§18).
func TestProjectRoundTrip(t *testing.T) {
	w := newWorld(t)
	projectID, image := w.launch(t)
	e, err := w.exports.Project(ctx, w.alice, projectID)
	if err != nil {
		t.Fatal(err)
	}
	names, files := archive(t, e)
	imageFile := "images/" + image.ID + ".png"
	if d := cmp.Diff([]string{"export.md", "export.json", imageFile}, names); d != "" {
		t.Fatalf("the archive's files (-want +got):\n%s", d)
	}
	if export.Filename(e) != "palaver-"+projectID+".zip" {
		t.Errorf("filename %q", export.Filename(e))
	}
	doc := readDocument(t, files["export.json"])

	s := w.Store
	p := must(s.Project(ctx, projectID))
	if doc.Format != "palaver-export" || doc.Version != 1 || !doc.Untrusted || doc.ExportedBy != (principal{w.alice.ID, "alice"}) || doc.ExportedAt != at(e.At) {
		t.Errorf("the document's head: %+v", doc)
	}
	dp := doc.Project
	if dp == nil {
		t.Fatal("no project in the document")
	}
	if dp.ProjectID != p.ID || dp.Name != p.Name || dp.Description != p.Description || dp.Owner != (principal{w.alice.ID, "alice"}) ||
		dp.Home || dp.AgentCap != "" || dp.CreatedAt != at(p.CreatedAt) || dp.UpdatedAt != at(p.UpdatedAt) || dp.ArchivedAt != "" {
		t.Errorf("the project: %+v, the store's %+v", dp, p)
	}
	var members, agents []string
	for _, m := range dp.Members {
		members = append(members, m.ID+" "+m.Handle+" "+m.Name+" "+m.AddedAt)
	}
	var wantMembers, wantAgents []string
	for _, m := range must(s.ProjectMembers(ctx, projectID)) {
		wantMembers = append(wantMembers, m.UserID+" "+m.Handle+" "+m.Name+" "+at(m.AddedAt))
	}
	for _, a := range dp.Agents {
		agents = append(agents, a.ID+" "+a.Handle+" "+a.Owner.Handle+" "+a.Access+" "+map[bool]string{true: "review", false: "-"}[a.Review]+" "+a.AddedAt)
	}
	for _, a := range must(s.ProjectAgents(ctx, projectID)) {
		wantAgents = append(wantAgents, a.AgentID+" "+a.Handle+" alice "+a.Access+" "+map[bool]string{true: "review", false: "-"}[a.Review]+" "+at(a.AddedAt))
	}
	if d := cmp.Diff(wantMembers, members); d != "" {
		t.Errorf("members (-store +export):\n%s", d)
	}
	if d := cmp.Diff(wantAgents, agents); d != "" {
		t.Errorf("agents (-store +export):\n%s", d)
	}

	threads := map[string]string{} // item → its thread
	for _, c := range must(s.Threads(ctx, projectID)) {
		threads[c.ItemID] = c.ID
	}
	var wantItems []item
	for _, it := range must(s.Items(ctx, projectID)) {
		wi := item{ItemID: it.ID, Kind: it.Kind, Title: it.Title, Note: it.Note, URL: it.URL, Status: it.Status, ConversationID: threads[it.ID],
			CreatedAt: at(it.CreatedAt), UpdatedAt: at(it.UpdatedAt), History: []change{}}
		for _, c := range must(s.ItemChanges(ctx, it.ID)) {
			wi.History = append(wi.History, change{By: principal{c.ByID, c.ByHandle}, Instance: c.Instance, Changes: c.Changes, At: at(c.At)})
		}
		wantItems = append(wantItems, wi)
	}
	if d := cmp.Diff(wantItems, dp.Items); d != "" {
		t.Errorf("items (-store +export):\n%s", d)
	}
	if len(dp.Items) != 1 || len(dp.Items[0].History) != 2 || dp.Items[0].History[1].Changes["status"] != "doing" || dp.Items[0].ConversationID == "" {
		t.Errorf("the item, its history and thread: %+v", dp.Items)
	}

	var wantImages []img
	for _, im := range must(s.Images(ctx, projectID)) {
		wantImages = append(wantImages, img{ImageID: im.ID, File: "images/" + im.ID + ".png", Filename: im.Filename, Alt: im.Alt, MIME: im.MIME,
			Size: im.Size, SHA256: im.SHA256, UploadedBy: principal{im.UploadedBy, "alice/planner"}, Instance: im.Instance, CreatedAt: at(im.CreatedAt)})
	}
	if d := cmp.Diff(wantImages, dp.Images); d != "" {
		t.Errorf("images (-store +export):\n%s", d)
	}
	sum := sha256.Sum256(files[imageFile])
	if stored := must(s.ImageData(ctx, image.SHA256)); !bytes.Equal(stored, files[imageFile]) || hex.EncodeToString(sum[:]) != dp.Images[0].SHA256 {
		t.Errorf("the image's file is not the stored bytes")
	}

	// Every thread, oldest first, with its whole history as stored.
	var ids []string
	for _, c := range must(s.Threads(ctx, projectID)) {
		ids = append(ids, c.ID)
	}
	slices.Reverse(ids) // the store lists the most recently active first; each thread here was active after the one before
	var want []conversation
	for _, id := range ids {
		want = append(want, wantConversation(t, s, id, w.alice))
	}
	if d := cmp.Diff(want, doc.Conversations); d != "" {
		t.Errorf("threads (-store +export):\n%s", d)
	}

	// What the scenario made is there, as the rules made it.
	plan := doc.Conversations[0]
	var got []string
	for _, m := range plan.Messages {
		got = append(got, m.Sender.Handle+" "+m.Provenance.Authority+" "+m.Kind)
	}
	if d := cmp.Diff([]string{"alice/planner agent text", "alice human text", "alice/planner agent tool_call", "alice/reviewer owner_edited text"}, got); d != "" {
		t.Errorf("the plan's messages (-want +got):\n%s", d)
	}
	edited := plan.Messages[3]
	if edited.Body != "LGTM, ship it on Friday" || edited.OriginalBody != "LGTM, ship it now" || edited.DecidedBy == nil || edited.DecidedBy.Handle != "alice" || edited.Summary != "" {
		t.Errorf("the edited message: %+v", edited)
	}
	if len(plan.Reads) == 0 {
		t.Error("no places read in the plan")
	}

	md := string(files["export.md"])
	for _, want := range []string{
		"# Project: Launch \\<v1>\n",
		"ship \\*v1\\*\\\nby Friday",
		"\n## Threads\n",
		"\n### Thread: Plan\n",
		"\n##### #1 · alice/planner (session desk) · AI agent for @alice · 2026-11-01 ",
		"> # The plan\n>\n> 1. **ship** it &lt;script>alert(1)&lt;/script>\n",
		"](" + imageFile + ")",
		"\n##### #2 · @alice · 2026-11-01 ",
		"> Looks good.\\\n> \\# not a heading\n",
		"`tool_call` · reply to #2 · for alice/reviewer",
		"```json\n{\"args\":[\"./...\"],\"tool\":\"go test\"}\n```",
		"\n##### #4 · alice/reviewer · AI agent for @alice · ",
		"`owner_edited` · let go by @alice on 2026-11-01 ",
		"> LGTM, ship it on Friday\n\nThe agent's own words, before @alice edited them:\n\n> LGTM, ship it now\n",
		"- alice/reviewer (session bench): up to #4, 2026-11-01 ",
		"### [doing] task: Write the notes\n",
		"- 2026-11-01 ",
		"alice/planner (session desk): kind \"task\", title \"Write the notes\", status \"open\", note \"see \\_NOTES.md\\_\", url \"https://a.example/notes\"",
		"- ![the screen](" + imageFile + ") shot.png — image/png, ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("export.md lacks %q:\n%s", want, md)
		}
	}
	for _, never := range []string{"<script>", "never sent", "/projects/" + projectID + "/images/"} {
		if strings.Contains(md, never) {
			t.Errorf("export.md has %q", never)
		}
	}
}

// TestConversationRoundTrip: an owner's interjection into a conversation
// of its agents exports with its authority; the JSON is what the database
// holds; the archive has no images folder.
func TestConversationRoundTrip(t *testing.T) {
	w := newWorld(t)
	conv := must(w.Hub.OpenConversation(ctx, w.Planner, []string{"alice/reviewer"})).Conversation.ID
	must(w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "Which branch?", NoReply: false}))
	must(w.Hub.PostAsPerson(ctx, w.alice, conv, "Use *main*.", hub.FormatText))
	must(w.Hub.SendMessage(ctx, w.Reviewer, hub.SendInput{ConversationID: conv, Body: "Noted.", NoReply: true, ToInstance: "desk"}))
	must(w.Hub.ReadMessages(ctx, w.Planner, hub.ReadInput{ConversationID: conv}))

	e, err := w.exports.Conversation(ctx, w.alice, conv)
	if err != nil {
		t.Fatal(err)
	}
	names, files := archive(t, e)
	if d := cmp.Diff([]string{"export.md", "export.json"}, names); d != "" {
		t.Fatalf("the archive's files (-want +got):\n%s", d)
	}
	doc := readDocument(t, files["export.json"])
	if doc.Project != nil {
		t.Errorf("a conversation's export has a project: %+v", doc.Project)
	}
	if d := cmp.Diff([]conversation{wantConversation(t, w.Store, conv, w.alice)}, doc.Conversations); d != "" {
		t.Errorf("the conversation (-store +export):\n%s", d)
	}
	if got := doc.Conversations[0].Messages[1].Provenance; got.Authority != "human_interject" || got.AI || got.OnBehalfOf.Handle != "alice" {
		t.Errorf("alice's interjection: %+v", got)
	}
	md := string(files["export.md"])
	for _, want := range []string{
		"# Direct: alice/planner, alice/reviewer\n",
		"Exported from Palaver by @alice on 2026-11-01 ",
		"- alice/planner — AI agent for @alice — member, since ",
		"\n### #2 · @alice · 2026-11-01 ",
		"`human_interject`\n\n> Use \\*main\\*.\n",
		"to session desk · a notice: no reply",
		"\n## Read by\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("export.md lacks %q:\n%s", want, md)
		}
	}
}
