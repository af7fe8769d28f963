package hub_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/rooms"
)

// inboxIDs are the ids of the messages waiting for c.
func (w *world) inboxIDs(t *testing.T, c *hub.Caller) []string {
	t.Helper()
	r, err := w.Hub.Inbox(ctx, c, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range r.Items {
		ids = append(ids, it.Message.ID)
	}
	return ids
}

// TestRoomRoutesByMention: in a room a text message is work only for the
// agents it mentions — given, or written as @handle in the body — while
// everyone sees it in the history; one that mentions nobody is refused and
// stores nothing (§10.5).
func TestRoomRoutesByMention(t *testing.T) {
	w := newWorld(t)
	scout := w.Agent(t, "alice/scout")
	conv := w.Room(t, w.Planner, "alice/reviewer", "alice/scout")

	_, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "anyone?"})
	if code(err) != "mention_required" || !strings.Contains(err.Error(), "like @alice/reviewer in the message") {
		t.Fatalf("a text message mentioning nobody: %v, want mention_required saying how to mention", err)
	}
	toReviewer, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "please review", Mentions: []string{"reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	if toReviewer.Message.Seq != 1 {
		t.Errorf("the first stored message has seq %d: the refused one took a seq", toReviewer.Message.Seq)
	}
	toScout := w.Send(t, w.Planner, conv, "@alice/scout please look around")
	if !slices.Equal(toScout.Message.Mentions, []string{"alice/scout"}) {
		t.Errorf("a body mention: %v, want alice/scout", toScout.Message.Mentions)
	}
	if got := w.inboxIDs(t, w.Reviewer); !slices.Equal(got, []string{toReviewer.Message.ID}) {
		t.Errorf("the reviewer's inbox %v, want the message mentioning it alone", got)
	}
	if got := w.inboxIDs(t, scout); !slices.Equal(got, []string{toScout.Message.ID}) {
		t.Errorf("the scout's inbox %v, want the message mentioning it alone", got)
	}
	history, err := w.Hub.ReadMessages(ctx, scout, hub.ReadInput{ConversationID: conv})
	if err != nil || len(history.Messages) != 2 {
		t.Fatalf("the scout's history: %v %v, want both messages", history, err)
	}
	// In a group that is not a room, every agent gets every text message.
	group, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "plain", Participants: []string{"alice/reviewer", "alice/scout"}})
	if err != nil {
		t.Fatal(err)
	}
	plain := w.Send(t, w.Planner, group.Conversation.ID, "for everyone")
	if got := w.inboxIDs(t, scout); !slices.Contains(got, plain.Message.ID) {
		t.Errorf("a plain group's message is not in the scout's inbox: %v", got)
	}
}

// TestRoomParticipants: a room's owners and admins manage its
// participants; only an owner makes owners; the last owner stays; anyone
// may leave; one taken out loses what waited for it there (§4, §10.5).
func TestRoomParticipants(t *testing.T) {
	w := newWorld(t)
	scout := w.Agent(t, "alice/scout")
	conv := w.Room(t, w.Planner, "alice/reviewer")

	if _, err := w.Hub.AddParticipantAs(ctx, w.Reviewer, conv, "alice/scout", ""); code(err) != "forbidden" {
		t.Errorf("a member adding: %v, want forbidden", err)
	}
	if _, err := w.Hub.AddParticipantAs(ctx, w.Planner, conv, w.Reviewer.Agent.ID, hub.RoleAdmin); err != nil {
		t.Fatalf("making the reviewer admin by its id: %v", err)
	}
	if _, err := w.Hub.AddParticipantAs(ctx, w.Reviewer, conv, "alice/scout", hub.RoleOwner); code(err) != "forbidden" {
		t.Errorf("an admin making an owner: %v, want forbidden", err)
	}
	v, err := w.Hub.AddParticipantAs(ctx, w.Reviewer, conv, "alice/scout", "")
	if err != nil {
		t.Fatalf("an admin adding: %v", err)
	}
	roles := map[string]string{}
	for _, p := range v.Participants {
		roles[p.Handle] = p.Role
	}
	if roles["alice/planner"] != hub.RoleOwner || roles["alice/reviewer"] != hub.RoleAdmin || roles["alice/scout"] != hub.RoleMember {
		t.Errorf("roles %v", roles)
	}
	if _, err := w.Hub.AddParticipantAs(ctx, w.Planner, conv, "bob/helper", ""); code(err) != "denied:contact" {
		t.Errorf("adding another owner's agent without consent: %v, want denied:contact", err)
	}
	if _, err := w.Hub.AddParticipantAs(ctx, w.Planner, conv, "alice/scout", "chief"); code(err) != "invalid_argument" {
		t.Errorf("an unknown role: %v, want invalid_argument", err)
	}
	if _, err := w.Hub.RemoveParticipant(ctx, w.Planner, conv, "alice/planner"); code(err) != "invalid_argument" {
		t.Errorf("the last owner leaving: %v, want invalid_argument", err)
	}
	if _, err := w.Hub.AddParticipantAs(ctx, w.Reviewer, conv, "alice/planner", hub.RoleMember); code(err) != "forbidden" {
		t.Errorf("an admin demoting the owner: %v, want forbidden", err)
	}

	waiting := w.Send(t, w.Planner, conv, "@scout start here")
	if _, err := w.Hub.RemoveParticipant(ctx, scout, conv, "alice/reviewer"); code(err) != "forbidden" {
		t.Errorf("a member removing another: %v, want forbidden", err)
	}
	if _, err := w.Hub.RemoveParticipant(ctx, w.Reviewer, conv, "scout"); err != nil {
		t.Fatalf("an admin removing a member: %v", err)
	}
	if got := w.inboxIDs(t, scout); slices.Contains(got, waiting.Message.ID) {
		t.Errorf("a removed agent still has the room's message waiting: %v", got)
	}
	if _, err := w.Hub.Room(ctx, scout, conv); code(err) != "not_found" {
		t.Errorf("the room for one removed: %v, want not_found", err)
	}
	if _, err := w.Hub.RemoveParticipant(ctx, w.Reviewer, conv, "alice/reviewer"); err != nil {
		t.Errorf("leaving oneself: %v", err)
	}
}

// TestRoomsOfPeople: a person creates a room linked to a task, brings in
// their own agent (not another person's agent), and sends to it by name;
// the message is work for that agent (§10.5).
func TestRoomsOfPeople(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	home, err := w.Hub.Whoami(ctx, w.Planner, "", "")
	if err != nil {
		t.Fatal(err)
	}
	item, err := w.projects.AddItem(ctx, w.Planner, home.Home.Project.ID, projects.ItemSpec{Title: "Ship the release"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.Hub.CreateRoomAsPerson(ctx, alice, hub.RoomSpec{TaskID: item.Item.ID})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	if v.Conversation.Title != "Ship the release" || v.Conversation.ItemID != item.Item.ID || !v.Conversation.ByMention {
		t.Errorf("a room for a task: %+v", v.Conversation)
	}
	if _, err := w.Hub.CreateRoom(ctx, w.Helper, hub.RoomSpec{TaskID: item.Item.ID}); code(err) != "not_found" {
		t.Errorf("another owner's agent linking alice's task: %v, want not_found", err)
	}
	if _, err := w.Hub.AddParticipantAsPerson(ctx, alice, conv, "bob/helper", ""); code(err) == "" {
		t.Error("alice brought bob's agent into her room without any consent")
	}
	if _, err := w.Hub.AddParticipantAsPerson(ctx, alice, conv, "alice/planner", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AddParticipantAsPerson(ctx, alice, conv, "alice", hub.RoleMember); code(err) != "invalid_argument" {
		t.Errorf("the last owner stepping down: %v, want invalid_argument", err)
	}
	if v, err := w.Hub.PersonRoom(ctx, alice, conv); err != nil || len(v.Participants) != 2 {
		t.Errorf("alice's room: %+v %v, want it with her and the planner", v, err)
	}
	if _, err := w.Hub.SendAsPerson(ctx, alice, hub.SendInput{ConversationID: conv, Body: "status?"}); code(err) != "mention_required" {
		t.Errorf("a person's message mentioning nobody: %v, want mention_required", err)
	}
	r, err := w.Hub.SendAsPerson(ctx, alice, hub.SendInput{ConversationID: conv, Body: "status?", Mentions: []string{"planner"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.inboxIDs(t, w.Planner); !slices.Equal(got, []string{r.Message.ID}) {
		t.Errorf("the planner's inbox %v, want alice's message", got)
	}
	got, _, err := rooms.New(w.Hub, w.Store).PersonRooms(ctx, alice, hub.Paging{})
	if err != nil || len(got) != 1 || got[0].Conversation.ID != conv {
		t.Errorf("alice's rooms: %v %v", got, err)
	}
}

// TestRoomMentionsSomeoneElse: in a room a message that mentions only its
// sender is nobody's work and is refused; a send reports as its recipients
// those it mentions; a bare slug names its owner's agent (§10.5).
func TestRoomMentionsSomeoneElse(t *testing.T) {
	w := newWorld(t)
	w.Agent(t, "alice/scout")
	conv := w.Room(t, w.Planner, "reviewer", "scout")
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "note to self", Mentions: []string{"planner"}}); code(err) != "mention_required" || !strings.Contains(err.Error(), "only you") {
		t.Errorf("a message mentioning only its sender: %v, want mention_required saying so", err)
	}
	r := w.Send(t, w.Planner, conv, "@reviewer and @planner, look")
	if r.Recipients != 1 {
		t.Errorf("a message mentioning the reviewer reports %d recipients, want 1", r.Recipients)
	}
	ev, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "thinking", Kind: "thought"})
	if err != nil || ev.Recipients != 0 {
		t.Errorf("an event post mentioning nobody: %+v %v, want 0 recipients", ev, err)
	}
}

// TestPublicAgentMadePrivate: an agent made private again leaves the rooms
// of owners who are not its owner's contacts — with what waited for it
// there — so the room works on for them and its owner no longer looks on;
// archived, an agent's owner no longer looks on either (§1, §3).
func TestPublicAgentMadePrivate(t *testing.T) {
	w := newWorld(t)
	bob, err := w.Hub.User(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SetAgentPublic(ctx, bob, "helper", true); err != nil {
		t.Fatal(err)
	}
	conv := w.Room(t, w.Planner, "reviewer", "bob/helper")
	waiting := w.Send(t, w.Planner, conv, "@helper please look")
	if _, err := w.Hub.PersonRoom(ctx, bob, conv); err != nil {
		t.Fatalf("bob looking on at his public agent's room: %v", err)
	}
	if _, err := w.Hub.SetAgentPublic(ctx, bob, "helper", false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.Room(ctx, w.Helper, conv); code(err) != "not_found" {
		t.Errorf("the room for bob's agent made private: %v, want not_found", err)
	}
	if got := w.inboxIDs(t, w.Helper); slices.Contains(got, waiting.Message.ID) {
		t.Errorf("bob's agent still has the room's message waiting: %v", got)
	}
	if _, err := w.Hub.PersonRoom(ctx, bob, conv); code(err) != "not_found" {
		t.Errorf("bob looking on after his agent left: %v, want not_found", err)
	}
	w.Send(t, w.Planner, conv, "@reviewer carry on")

	// Archived, an agent leaves: its owner no longer looks on.
	if _, err := w.Hub.SetAgentPublic(ctx, bob, "helper", true); err != nil {
		t.Fatal(err)
	}
	again := w.Room(t, w.Planner, "bob/helper")
	if _, err := w.Hub.ArchiveAgent(ctx, "bob/helper"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.PersonRoom(ctx, bob, again); code(err) != "not_found" {
		t.Errorf("bob looking on after his agent was archived: %v, want not_found", err)
	}
	if _, err := w.Hub.SendAsPerson(ctx, bob, hub.SendInput{ConversationID: again, Body: "@planner hi"}); code(err) != "not_found" {
		t.Errorf("bob writing into it: %v, want not_found", err)
	}
}
