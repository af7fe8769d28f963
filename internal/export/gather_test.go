package export_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/reach"
)

var code = hubtest.Code

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

// TestExportSeesWhatThePersonSees: a person exports a conversation they
// take part in or one of their agents does, and a project they are a
// member of, with its threads; anyone else's is not_found, as is a closed
// conversation; held messages are not in it, and exporting moves no place
// (§18).
func TestExportSeesWhatThePersonSees(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.alice, w.bob
	conv := must(w.Hub.OpenConversation(ctx, w.Planner, []string{"alice/reviewer"})).Conversation.ID
	must(w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "first"}))
	if _, err := w.Hub.PostAsPerson(ctx, alice, conv, "I am here too", "text"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SetAgentMode(ctx, "alice/reviewer", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	// A caller carries its agent as it was when it authenticated.
	_, secret := must2(w.Hub.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: "reviewer"}))
	if _, err := w.Hub.SendMessage(ctx, must(w.Hub.Authenticate(ctx, secret)), hub.SendInput{ConversationID: conv, Body: "held"}); err != nil {
		t.Fatal(err)
	}
	before, err := w.Store.Reads(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}

	e, err := w.exports.Conversation(ctx, alice, conv)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Conversations) != 1 || e.Project != nil || e.By.ID != alice.ID {
		t.Fatalf("export of a conversation: %+v", e)
	}
	c := e.Conversations[0]
	var got []string
	for _, m := range c.Messages {
		got = append(got, m.Body+" "+m.Authority)
	}
	if d := cmp.Diff([]string{"first agent", "I am here too human_interject"}, got); d != "" {
		t.Errorf("messages exported (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{alice.ID: "alice", w.Planner.Agent.ID: "alice/planner", w.Reviewer.Agent.ID: "alice/reviewer"}, e.Names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	after, err := w.Store.Reads(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("exporting moved places (-before +after):\n%s", d)
	}
	if _, err := w.exports.Conversation(ctx, bob, conv); code(err) != "not_found" {
		t.Errorf("bob exporting alice's agents' conversation: %v, want not_found", err)
	}
	if _, err := w.exports.Conversation(ctx, alice, "conv_nope"); code(err) != "not_found" {
		t.Errorf("exporting a conversation that does not exist: %v, want not_found", err)
	}
	room := must(w.Hub.CreateRoom(ctx, w.Planner, hub.RoomSpec{})).Conversation.ID
	if _, err := w.Hub.AddParticipantAs(ctx, w.Planner, room, "alice/reviewer", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.CloseConversation(ctx, room); err != nil {
		t.Fatal(err)
	}
	if _, err := w.exports.Conversation(ctx, alice, room); code(err) != "not_found" {
		t.Errorf("exporting a closed conversation: %v, want not_found", err)
	}

	p := must(w.Hub.CreateProject(ctx, alice, "Launch", ""))
	project := p.ID
	for _, slug := range []string{"planner", "reviewer"} {
		must(w.Hub.SetProjectAgent(ctx, alice, project, slug, hub.AccessSpeak, false))
	}
	thread := must(w.Hub.OpenThread(ctx, w.Planner, project, "Plan", "")).Conversation.ID
	must(w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: thread, Body: "in the thread"}))
	pe, err := w.exports.Project(ctx, alice, project)
	if err != nil {
		t.Fatal(err)
	}
	if pe.Project == nil || pe.Project.Project.ID != project || len(pe.Conversations) != 1 || pe.Conversations[0].Conversation.ID != thread ||
		len(pe.Conversations[0].Messages) != 1 {
		t.Fatalf("export of the project: %+v", pe)
	}
	if _, err := w.exports.Project(ctx, bob, project); code(err) != "not_found" {
		t.Errorf("bob exporting a project he is not in: %v, want not_found", err)
	}
	if _, err := w.exports.Conversation(ctx, bob, thread); code(err) != "not_found" {
		t.Errorf("bob exporting a thread of a project he is not in: %v, want not_found", err)
	}
	// A member sees the project, and its threads.
	if _, err := reach.New(w.Hub, w.Store).RequestContact(ctx, alice, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := reach.New(w.Hub, w.Store).RequestContact(ctx, bob, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AddMember(ctx, alice, project, "bob"); err != nil {
		t.Fatal(err)
	}
	if be, err := w.exports.Project(ctx, bob, project); err != nil || len(be.Conversations) != 1 {
		t.Errorf("bob exporting the project he is in: %+v, %v", be, err)
	}
	if _, err := w.exports.Conversation(ctx, bob, thread); err != nil {
		t.Errorf("bob exporting a thread of the project he is in: %v", err)
	}
}
