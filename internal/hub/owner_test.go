package hub_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestPersonEvents: a person's own stream (§6) wakes a parked wait when
// another person asks to be their contact, and carries their agents' held
// messages and questions; a person holds at most WaitsPerPerson waits.
func TestPersonEvents(t *testing.T) {
	settings := hub.DefaultSettings()
	settings.WaitsPerPerson = 1
	w := newWorldWith(t, settings)
	alice := w.owner(t)
	bob, err := w.Hub.User(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   *hub.WaitResult
		err error
	}
	woke := make(chan result, 1)
	go func() {
		r, err := w.Hub.WaitPerson(ctx, bob, "", 30*time.Second)
		woke <- result{r, err}
	}()
	w.Parked(t, 1)
	if _, err := w.Hub.WaitPerson(ctx, bob, "", time.Second); code(err) != "too_many_waits" {
		t.Fatalf("a second wait with WaitsPerPerson 1: %v", err)
	}
	if _, err := w.reach.RequestContact(ctx, alice, "bob", ""); err != nil {
		t.Fatal(err)
	}
	got := <-woke
	if got.err != nil || len(got.r.Events) != 1 || got.r.Events[0].Type != hub.EventContactRequest {
		t.Fatalf("bob's wait: %+v, %v; want contact.request", got.r, got.err)
	}

	cursor, _ := w.Hub.LatestCursor(ctx, alice.ID)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	if _, err := w.Hub.SetAgentMode(ctx, "alice/planner", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	reviewed, err := w.Hub.Authenticate(ctx, w.Tokens["alice/planner"])
	if err != nil {
		t.Fatal(err)
	}
	held, err := w.Hub.SendMessage(ctx, reviewed, hub.SendInput{ConversationID: conv, Body: "may I?"})
	if err != nil || held.Message.Status != hub.MessageHeld {
		t.Fatalf("a send in review mode: %+v, %v; want it held", held, err)
	}
	if _, err := w.Hub.AskOwner(ctx, reviewed, "which branch?", "", conv, []string{"main", "next"}); err != nil {
		t.Fatal(err)
	}
	r, err := w.Hub.WaitPerson(ctx, alice, cursor, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range r.Events {
		types = append(types, e.Type)
	}
	if fmt.Sprint(types) != "[message.pending question.asked]" {
		t.Fatalf("alice heard %v; want her agent's held message and question", types)
	}
	// Deciding is heard by the person who decided too (their other pages).
	if _, err := w.Hub.Decide(ctx, alice, held.Message.ID, hub.Verdict{Action: hub.VerdictReject}); err != nil {
		t.Fatal(err)
	}
	r, err = w.Hub.WaitPerson(ctx, alice, r.Cursor, 0)
	if err != nil || len(r.Events) != 1 || r.Events[0].Type != hub.EventApprovalDecided || !strings.Contains(string(r.Events[0].Data), held.Message.ID) {
		t.Fatalf("after deciding: %+v, %v; want approval.decided for %s", r, err, held.Message.ID)
	}
	if _, err := w.Hub.WaitPerson(ctx, alice, "", hub.MaxWait+time.Second); code(err) != "invalid_argument" {
		t.Fatalf("a wait past MaxWait: %v", err)
	}
}

// TestPersonHearsOwnInterjection: a person writing into their agents'
// conversation without taking part in it hears their own message, as a
// participant does, so their other pages show it.
func TestPersonHearsOwnInterjection(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	cursor, err := w.Hub.LatestCursor(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := w.Hub.PostAsPerson(ctx, alice, conv, "a word from me", "")
	if err != nil || sent.Message.Authority != hub.AuthorityInterject {
		t.Fatalf("alice writing in: %+v, %v; want an interjection", sent, err)
	}
	r, err := w.Hub.WaitPerson(ctx, alice, cursor, 0)
	if err != nil || len(r.Events) != 1 || r.Events[0].Type != hub.EventMessageNew || r.Events[0].MessageID != sent.Message.ID {
		t.Fatalf("alice heard %+v, %v; want message.new for her own %s", r, err, sent.Message.ID)
	}
}

// TestPersonConversationsPaged: a person's conversations and their agents'
// (§11), most recent activity first, a page at a time; nobody else's.
func TestPersonConversationsPaged(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	convs := []string{w.Direct(t, w.Planner, "alice/reviewer")}
	w.Clock.Advance(time.Second)
	convs = append(convs, consent(t, w, w.Planner, w.person(t, "bob"), "bob/helper"))
	w.Clock.Advance(time.Second)
	convs = append(convs, w.Direct(t, w.Reviewer, "alice"))
	w.Clock.Advance(time.Second)
	w.Send(t, w.Planner, convs[0], "the first is the latest now")
	want := []string{convs[0], convs[2], convs[1]}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		p, err := w.Hub.PersonConversations(ctx, alice, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range p.Conversations {
			got = append(got, l.Conversation.ID)
		}
		if p.Next == "" {
			if pages != 1 {
				t.Fatalf("%d pages of 2 for 3 conversations", pages+1)
			}
			break
		}
		after = p.Next
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("alice's conversations %v, want %v", got, want)
	}
	carol, err := w.Hub.CreateUser(ctx, "carol", "")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := w.Hub.PersonConversations(ctx, carol, "", 0); err != nil || len(p.Conversations) != 0 {
		t.Fatalf("carol sees %+v, %v; want nothing", p, err)
	}
	if _, _, err := w.Hub.PersonRecent(ctx, carol, convs[0], 0); code(err) != "not_found" {
		t.Fatalf("carol opens alice's conversation: %v", err)
	}
	if _, err := w.Hub.PersonConversations(ctx, alice, "conv_nope", 0); code(err) != "invalid_argument" {
		t.Fatalf("a made-up after: %v", err)
	}
}

// TestConfirmClose: the owner of the agent that started a conversation
// closes it (confirming its request or not); another participant's owner
// may not, and sees the same conversation still open; a direct
// conversation is never closed.
func TestConfirmClose(t *testing.T) {
	w := newWorld(t)
	direct := consent(t, w, w.Planner, w.person(t, "bob"), "bob/helper")
	if _, err := w.Hub.ConfirmClose(ctx, w.owner(t), direct); code(err) != "invalid_argument" {
		t.Fatalf("closing a direct conversation: %v", err)
	}
	v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "release", Participants: []string{"bob/helper", "alice/reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	if _, err := w.Hub.RequestClose(ctx, w.Planner, conv); err != nil {
		t.Fatal(err)
	}
	bob := w.person(t, "bob")
	if _, err := w.Hub.ConfirmClose(ctx, bob, conv); code(err) != "forbidden" {
		t.Fatalf("bob closes alice's planner's conversation: %v", err)
	}
	if v, _, err := w.Hub.PersonRecent(ctx, bob, conv, 0); err != nil || v.Conversation.State() != hub.StatusCloseRequested {
		t.Fatalf("bob's view: %+v, %v; want close_requested", v, err)
	}
	c, err := w.Hub.ConfirmClose(ctx, w.owner(t), conv)
	if err != nil || c.Status != hub.StatusClosed {
		t.Fatalf("alice confirms: %+v, %v", c, err)
	}
}

// TestUnarchiveAgent: archiving revokes the agent's tokens; bringing it
// back lists it again, and its old tokens stay dead.
func TestUnarchiveAgent(t *testing.T) {
	w := newWorld(t)
	old := w.Tokens["alice/planner"]
	if _, err := w.Hub.ArchiveAgent(ctx, "alice/planner"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.Authenticate(ctx, old); code(err) != "unauthenticated" {
		t.Fatalf("an archived agent's token: %v", err)
	}
	a, err := w.Hub.UnarchiveAgent(ctx, "alice/planner")
	if err != nil || a.Archived() {
		t.Fatalf("unarchive: %+v, %v", a, err)
	}
	if as, _ := w.Hub.Agents(ctx, "alice", false); len(as) != 2 {
		t.Fatalf("alice's agents after unarchive: %d, want 2", len(as))
	}
	if _, err := w.Hub.Authenticate(ctx, old); code(err) != "unauthenticated" {
		t.Fatalf("an old token after unarchive: %v, want it still dead", err)
	}
	if _, err := w.Hub.UnarchiveAgent(ctx, "alice/planner"); err != nil {
		t.Fatalf("unarchiving again: %v", err)
	}
	fresh := w.Agent(t, "alice/planner")
	if _, err := w.Hub.SendMessage(ctx, fresh, hub.SendInput{ConversationID: w.Direct(t, fresh, "alice/reviewer"), Body: "back"}); err != nil {
		t.Fatalf("a new token after unarchive: %v", err)
	}
}

// TestPersonReading: a person reading a conversation they take part in
// moves their own place (unread goes to 0, reads show them there); an
// owner reading their agents' conversation has no place and no unread.
func TestPersonReading(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	withAlice := w.Direct(t, w.Planner, "alice")
	agentsOnly := w.Direct(t, w.Planner, "alice/reviewer")
	for _, conv := range []string{withAlice, agentsOnly} {
		w.Send(t, w.Planner, conv, "one")
		w.Send(t, w.Planner, conv, "two")
	}
	unread := func() map[string]int {
		p, err := w.Hub.PersonConversations(ctx, alice, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, l := range p.Conversations {
			out[l.Conversation.ID] = l.Unread
		}
		return out
	}
	if got := unread(); got[withAlice] != 2 || got[agentsOnly] != 0 {
		t.Fatalf("unread before reading: %v; want 2 where alice takes part, 0 in her agents' own", got)
	}
	for _, conv := range []string{withAlice, agentsOnly} {
		_, res, err := w.Hub.PersonRecent(ctx, alice, conv, 0)
		if err != nil {
			t.Fatal(err)
		}
		var places []string
		for _, r := range res.Reads {
			places = append(places, fmt.Sprintf("%s@%d", r.Handle, r.LastReadSeq))
		}
		want := "[alice/planner@2]"
		if conv == withAlice {
			want = "[alice@2 alice/planner@2]"
		}
		if fmt.Sprint(places) != want {
			t.Fatalf("reads after alice read %s: %v, want %s", conv, places, want)
		}
	}
	if got := unread(); got[withAlice] != 0 {
		t.Fatalf("unread after reading: %v", got)
	}
}
