package hub_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/overview"
)

// owner is alice, for person actions.
func (w *world) owner(t *testing.T) *hub.User { return w.Person(t, "alice") }

func TestPausedBrake(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer", "alice")
	heard, _ := w.Hub.LatestCursor(ctx, w.owner(t).ID)
	// 50 turns between the two agents are sent; the 50th pauses the
	// conversation for every agent.
	for i := range 50 {
		from := []*hub.Caller{w.Planner, w.Reviewer}[i%2]
		if word := w.SendAs(t, from, conv, fmt.Sprintf("turn %d", i+1), ""); word != "" {
			t.Fatalf("turn %d refused: %s", i+1, word)
		}
	}
	for _, c := range []*hub.Caller{w.Planner, w.Reviewer} {
		if word := w.SendAs(t, c, conv, "one more", ""); word != "paused" {
			t.Fatalf("%s after 50 turns: %q, want paused", c.Agent.Handle(), word)
		}
	}
	// The listings show it paused with its reason, and its people hear it
	// once — alice takes part and owns both agents.
	page, err := w.Hub.ListConversations(ctx, w.Planner, "", 0)
	ls := page.Conversations
	if err != nil || len(ls) != 1 || ls[0].Conversation.State() != hub.StatusPaused || !strings.HasPrefix(ls[0].Conversation.PausedReason, "agents traded 50 turns") {
		t.Fatalf("listed: %+v, %v; want paused with its reason", ls, err)
	}
	page, err = w.Hub.PersonConversations(ctx, w.owner(t), "", 0)
	if err != nil || len(page.Conversations) != 1 || page.Conversations[0].Conversation.State() != hub.StatusPaused {
		t.Fatalf("alice's conversations: %+v, %v; want it paused", page, err)
	}
	told, err := w.Hub.WaitPerson(ctx, w.owner(t), heard, 0)
	var pauses []string
	for _, e := range told.Events {
		if e.Type == hub.EventConversationPaused {
			pauses = append(pauses, e.ConversationID)
		}
	}
	if err != nil || len(pauses) != 1 || pauses[0] != conv {
		t.Fatalf("alice heard pauses %v (%v); want one for %s", pauses, err, conv)
	}
	// Alice's Bridge shows the pause once, naming the conversation: the
	// sends it refused after are that same pause, not rows of their own.
	b, err := w.bridge(w.owner(t))
	if err != nil {
		t.Fatal(err)
	}
	var stops []string
	for _, a := range b.Activity {
		if a.Kind == overview.ActivityPaused || a.Kind == overview.ActivityBrake {
			stops = append(stops, a.Kind+" "+a.Brake+" "+a.Conversation)
		}
	}
	if want := []string{"paused  alice/planner, alice, alice/reviewer"}; !slices.Equal(stops, want) {
		t.Errorf("the Bridge's rows for the pause: %q, want %q", stops, want)
	}
	// Resume lifts it and tells the agents.
	cursor := w.Latest(t, w.Planner)
	if _, err := w.Hub.Resume(ctx, w.owner(t), conv); err != nil {
		t.Fatal(err)
	}
	r, err := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: cursor})
	if err != nil || len(r.Events) != 1 || r.Events[0].Type != hub.EventConversationResume {
		t.Fatalf("after Resume: %+v, %v; want conversation.resumed", r, err)
	}
	if ls, _ := w.Hub.ListConversations(ctx, w.Planner, "", 0); ls.Conversations[0].Conversation.State() != hub.StatusOpen {
		t.Fatalf("after Resume it reads %s", ls.Conversations[0].Conversation.State())
	}
	if word := w.SendAs(t, w.Planner, conv, "back at it", ""); word != "" {
		t.Fatalf("after Resume: %q", word)
	}
	// A person writing lifts it too.
	for i := range 49 {
		w.SendAs(t, []*hub.Caller{w.Reviewer, w.Planner}[i%2], conv, fmt.Sprintf("again %d", i), "")
	}
	if word := w.SendAs(t, w.Planner, conv, "over the top", ""); word != "paused" {
		t.Fatalf("after 50 more turns: %q, want paused", word)
	}
	if _, err := w.Hub.PostAsPerson(ctx, w.owner(t), conv, "carry on", ""); err != nil {
		t.Fatalf("a person is never slowed: %v", err)
	}
	if word := w.SendAs(t, w.Planner, conv, "over the top", ""); word != "" {
		t.Fatalf("after the person wrote: %q", word)
	}
}

func TestDuplicateBrake(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer", "alice")
	for i := range 2 {
		if word := w.SendAs(t, w.Planner, conv, "Are you there?", ""); word != "" {
			t.Fatalf("copy %d refused: %s", i+1, word)
		}
	}
	if word := w.SendAs(t, w.Planner, conv, "Are you there?", ""); word != "duplicate" {
		t.Fatalf("third copy: %q, want duplicate", word)
	}
	if word := w.SendAs(t, w.Planner, conv, "Are you there now?", ""); word != "" {
		t.Fatalf("other words: %q", word)
	}
	if _, err := w.Hub.PostAsPerson(ctx, w.owner(t), conv, "I'm here", ""); err != nil {
		t.Fatal(err)
	}
	if word := w.SendAs(t, w.Planner, conv, "Are you there?", ""); word != "" {
		t.Fatalf("after a person took part: %q", word)
	}
}

func TestBudgetBrake(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	for i := range 60 {
		// A person's interjection keeps the pause and duplicate brakes out
		// of the way; the budget counts the hour regardless.
		if i%40 == 39 {
			w.Hub.PostAsPerson(ctx, w.owner(t), conv, "carry on", "")
		}
		if word := w.SendAs(t, w.Planner, conv, fmt.Sprintf("update %d", i+1), ""); word != "" {
			t.Fatalf("send %d refused: %s", i+1, word)
		}
		w.Clock.Advance(30 * time.Second)
	}
	if word := w.SendAs(t, w.Planner, conv, "update 61", ""); word != "budget" {
		t.Fatalf("61st send within the hour: %q, want budget", word)
	}
	if word := w.SendAs(t, w.Reviewer, conv, "my own budget", ""); word != "" {
		t.Fatalf("another agent: %q", word)
	}
	// The first send was 30 minutes ago; it leaves the hour exactly 60
	// minutes after it was sent, and then one more fits.
	w.Clock.Advance(30*time.Minute - time.Millisecond)
	if word := w.SendAs(t, w.Planner, conv, "update 61", ""); word != "budget" {
		t.Fatalf("a millisecond before the oldest leaves the hour: %q, want budget", word)
	}
	w.Clock.Advance(time.Millisecond)
	if word := w.SendAs(t, w.Planner, conv, "update 61", ""); word != "" {
		t.Fatalf("after the oldest left the hour: %q", word)
	}
}

// newThread opens the thread "Plan" of the home project of the agent's
// owner, where every agent of the owner is in with speak (§1, §8).
func newThread(t *testing.T, w *world, by *hub.Caller) string {
	t.Helper()
	me, err := w.Hub.Whoami(ctx, by, "", "")
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.Hub.OpenThread(ctx, by, me.Home.Project.ID, "Plan", "")
	if err != nil {
		t.Fatal(err)
	}
	return v.Conversation.ID
}

func TestLoopBrake(t *testing.T) {
	t.Run("two sessions of one agent answering each other", func(t *testing.T) {
		w := newWorld(t)
		thread := newThread(t, w, w.Planner)
		for i := range 30 {
			if word := w.SendAs(t, w.Planner, thread, fmt.Sprintf("turn %d", i+1), []string{"east", "west"}[i%2]); word != "" {
				t.Fatalf("turn %d refused: %s", i+1, word)
			}
		}
		if word := w.SendAs(t, w.Planner, thread, "turn 31", "east"); word != "loop" {
			t.Fatalf("after 30 turns between its own sessions: %q, want loop", word)
		}
		if word := w.SendAs(t, w.Reviewer, thread, "I can still talk", ""); word != "" {
			t.Fatalf("another agent in the thread: %q", word)
		}
		// Time lifts it: after two hours the window is empty.
		w.Clock.Advance(2*time.Hour + time.Second)
		if word := w.SendAs(t, w.Planner, thread, "turn 31", "east"); word != "" {
			t.Fatalf("two hours later: %q", word)
		}
	})
	t.Run("a person taking part lifts it", func(t *testing.T) {
		w := newWorld(t)
		thread := newThread(t, w, w.Planner)
		for i := range 30 {
			w.SendAs(t, w.Planner, thread, fmt.Sprintf("turn %d", i+1), []string{"east", "west"}[i%2])
		}
		if word := w.SendAs(t, w.Planner, thread, "turn 31", "east"); word != "loop" {
			t.Fatalf("%q, want loop", word)
		}
		if _, err := w.Hub.PostAsPerson(ctx, w.owner(t), thread, "stop and summarize", ""); err != nil {
			t.Fatal(err)
		}
		if word := w.SendAs(t, w.Planner, thread, "summary", "east"); word != "" {
			t.Fatalf("after the person wrote: %q", word)
		}
	})
	t.Run("many agents posting once", func(t *testing.T) {
		w := newWorld(t)
		var agents []*hub.Caller
		for i := range 40 {
			agents = append(agents, w.Agent(t, fmt.Sprintf("alice/a%02d", i)))
		}
		thread := newThread(t, w, agents[0])
		for i, a := range agents {
			if word := w.SendAs(t, a, thread, "hello, I am here", ""); word != "" {
				t.Fatalf("agent %d refused: %s", i, word)
			}
		}
	})
	t.Run("one agent posting a series alone", func(t *testing.T) {
		w := newWorld(t)
		thread := newThread(t, w, w.Planner)
		for i := range 45 {
			if word := w.SendAs(t, w.Planner, thread, fmt.Sprintf("report part %d", i+1), "east"); word != "" {
				t.Fatalf("part %d refused: %s", i+1, word)
			}
		}
	})
	t.Run("two agents trading turns is not a loop", func(t *testing.T) {
		w := newWorld(t)
		thread := newThread(t, w, w.Planner)
		for i := range 40 {
			if word := w.SendAs(t, []*hub.Caller{w.Planner, w.Reviewer}[i%2], thread, fmt.Sprintf("turn %d", i+1), ""); word != "" {
				t.Fatalf("turn %d refused: %s", i+1, word)
			}
		}
	})
}

func TestListenMode(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	if _, err := w.Hub.SetAgentMode(ctx, "alice/planner", hub.ModeListen); err != nil {
		t.Fatal(err)
	}
	listener, err := w.Hub.Authenticate(ctx, w.Tokens["alice/planner"])
	if err != nil {
		t.Fatal(err)
	}
	if word := w.SendAs(t, listener, conv, "hi", ""); word != "listen" {
		t.Fatalf("send in listen mode: %q", word)
	}
	if _, err := w.Hub.ReadMessages(ctx, listener, hub.ReadInput{ConversationID: conv}); err != nil {
		t.Fatalf("reading in listen mode: %v", err)
	}
	if _, err := w.Hub.SetAgentMode(ctx, "alice/planner", "shout"); code(err) != "invalid_argument" {
		t.Fatalf("bad mode: %v", err)
	}
}

func TestReviewMode(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	w.Send(t, w.Reviewer, conv, "seq 1 from the reviewer")
	if _, err := w.Hub.SetAgentMode(ctx, "alice/planner", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	planner, _ := w.Hub.Authenticate(ctx, w.Tokens["alice/planner"])
	start := w.Latest(t, planner)
	owner := w.owner(t)

	held := 0
	hold := func(body string) *hub.Message {
		t.Helper()
		w.Clock.Advance(time.Millisecond)
		held++
		in := hub.SendInput{ConversationID: conv, Body: body, ClientMsgID: fmt.Sprint("draft-", held)}
		r, err := w.Hub.SendMessage(ctx, planner, in)
		if err != nil || r.Message.Status != hub.MessageHeld || r.Message.Seq != 0 || r.Recipients != 0 {
			t.Fatalf("send in review mode: %+v, %v; want held with no seq, reaching nobody", r, err)
		}
		// A retry finds the held message, which still reaches nobody.
		if again, err := w.Hub.SendMessage(ctx, planner, in); err != nil || !again.Duplicate || again.Message.ID != r.Message.ID || again.Recipients != 0 {
			t.Fatalf("retry in review mode: %+v, %v; want the held message, reaching nobody", again, err)
		}
		return r.Message
	}
	a, b, c := hold("first draft"), hold("second draft"), hold("third draft")

	// Held messages reach nobody.
	if in, _ := w.Hub.Inbox(ctx, w.Reviewer, 0, ""); in.Total != 0 {
		t.Fatalf("the recipient's inbox holds %d held messages, want none", in.Total)
	}
	if _, err := w.Hub.ReadMessage(ctx, w.Reviewer, a.ID, ""); code(err) != "not_found" {
		t.Fatalf("the recipient reading a held message: %v", err)
	}
	approvals, err := w.Hub.Approvals(ctx, owner)
	if err != nil || len(approvals) != 3 || approvals[0].ID != a.ID || approvals[2].ID != c.ID {
		t.Fatalf("approvals: %+v, %v; want the three held messages oldest first", approvals, err)
	}

	approved, err := w.Hub.DecideHeld(ctx, owner, a.ID, hub.Decision{Approve: true})
	if err != nil || approved.Seq != 2 || approved.Authority != hub.AuthorityApproved {
		t.Fatalf("approve: %+v, %v; want seq 2, owner_approved", approved, err)
	}
	edited, err := w.Hub.DecideHeld(ctx, owner, c.ID, hub.Decision{Approve: true, Body: "third draft, tightened"})
	if err != nil || edited.Seq != 3 || edited.Authority != hub.AuthorityEdited || edited.OriginalBody != "third draft" {
		t.Fatalf("edit: %+v, %v; want seq 3, owner_edited, original kept", edited, err)
	}
	if _, err := w.Hub.DecideHeld(ctx, owner, b.ID, hub.Decision{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideHeld(ctx, owner, b.ID, hub.Decision{}); err != nil {
		t.Fatalf("rejecting twice: %v, want the same answer", err)
	}
	if _, err := w.Hub.DecideHeld(ctx, owner, b.ID, hub.Decision{Approve: true}); code(err) != "conflict" {
		t.Fatalf("approving a rejected message: %v, want conflict", err)
	}

	page, err := w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: conv})
	var bodies []string
	for _, m := range page.Messages {
		bodies = append(bodies, fmt.Sprintf("%d:%s:%s", m.Seq, m.Authority, m.Body))
	}
	want := "1:agent:seq 1 from the reviewer|2:owner_approved:first draft|3:owner_edited:third draft, tightened"
	if err != nil || strings.Join(bodies, "|") != want {
		t.Fatalf("the conversation reads %v, want %s", bodies, want)
	}

	r, err := w.Hub.Wait(ctx, planner, hub.WaitInput{Cursor: start})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.Events {
		got = append(got, e.Type+" "+string(e.Data))
	}
	wantEvents := []string{
		"message.pending ", "message.pending ", "message.pending ",
		`message.new `, `pending.decided {"decision":"approved","message_id":"` + a.ID + `","seq":2}`,
		`message.new `, `pending.decided {"decision":"edited","message_id":"` + c.ID + `","seq":3}`,
		`pending.decided {"decision":"rejected","message_id":"` + b.ID + `","seq":0}`,
	}
	if strings.Join(got, "\n") != strings.Join(wantEvents, "\n") {
		t.Fatalf("the sender heard:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantEvents, "\n"))
	}
	// Held messages count toward duplicate.
	hold("same words")
	hold("same words")
	if word := w.SendAs(t, planner, conv, "same words", ""); word != "duplicate" {
		t.Fatalf("third copy while held: %q, want duplicate", word)
	}
}

func TestAskOwner(t *testing.T) {
	w := newWorld(t)
	owner := w.owner(t)
	start := w.Latest(t, w.Planner)
	q, err := w.Hub.AskOwner(ctx, w.Planner, "Ship on Friday?", "desk", "", []string{"Yes", "No"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AnswerQuestion(ctx, owner, q.ID, "maybe"); code(err) != "invalid_argument" {
		t.Fatalf("an answer outside the options: %v", err)
	}
	if a, err := w.Hub.AnswerQuestion(ctx, owner, q.ID, "yes"); err != nil || a.Answer != "Yes" {
		t.Fatalf("answer: %+v, %v", a, err)
	}
	if _, err := w.Hub.AnswerQuestion(ctx, owner, q.ID, "No"); code(err) != "conflict" {
		t.Fatalf("answering twice: %v", err)
	}
	for _, tc := range []struct {
		session string
		forYou  bool
	}{{"desk", true}, {"laptop", false}} {
		r, err := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: start, Instance: tc.session})
		if err != nil || len(r.Events) != 1 || r.Events[0].Type != hub.EventOwnerAnswer || r.Addressing[r.Events[0].ID].ForYou != tc.forYou {
			t.Fatalf("%s: %+v, %v; want owner.answer for_you %v", tc.session, r, err, tc.forYou)
		}
	}
	for _, tc := range []struct {
		session string
		want    int
	}{{"desk", 1}, {"laptop", 0}, {"", 1}} {
		in, err := w.Hub.Inbox(ctx, w.Planner, 0, tc.session)
		if err != nil || len(in.Answers) != tc.want {
			t.Fatalf("session %q answers: %+v, %v; want %d", tc.session, in, err, tc.want)
		}
	}
	if _, err := w.Hub.Acknowledge(ctx, w.Planner, q.ID, "", ""); err != nil {
		t.Fatal(err)
	}
	if in, _ := w.Hub.Inbox(ctx, w.Planner, 0, "desk"); len(in.Answers) != 0 {
		t.Fatalf("answers after acknowledging: %+v", in.Answers)
	}
	if _, err := w.Hub.AnswerQuestion(ctx, &hub.User{ID: "usr_other", Handle: "bob"}, q.ID, "Yes"); code(err) != "not_found" {
		t.Fatalf("another person answering: %v", err)
	}
}

// TestDecisionsReachTheSenderAfterAClose: the sender hears of a decision and
// of an answer even when their conversation closed meanwhile, and an edit
// replaces the agent's summary with the owner's words.
func TestDecisionsReachTheSenderAfterAClose(t *testing.T) {
	w := newWorld(t)
	owner := w.owner(t)
	v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "plan", Participants: []string{"alice/reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	if _, err := w.Hub.SetAgentMode(ctx, "alice/planner", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	planner, _ := w.Hub.Authenticate(ctx, w.Tokens["alice/planner"])
	edited, err := w.Hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv, Body: "the password is hunter2, right?", Summary: "Confirm the password hunter2"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.Hub.DecideHeld(ctx, owner, edited.Message.ID, hub.Decision{Approve: true, Body: "Never mind."})
	if err != nil || m.Summary != "" || m.Body != "Never mind." {
		t.Fatalf("edit: %+v, %v; want the summary gone with the words", m, err)
	}
	if _, err := w.Hub.DecideHeld(ctx, owner, edited.Message.ID, hub.Decision{Approve: true, Body: "Never mind."}); err != nil {
		t.Fatalf("the same decision again: %v", err)
	}
	if _, err := w.Hub.DecideHeld(ctx, owner, edited.Message.ID, hub.Decision{Approve: true, Body: "Other words."}); code(err) != "conflict" {
		t.Fatalf("another edit after approval: %v, want conflict", err)
	}
	held, _ := w.Hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv, Body: "one more"})
	if _, err := w.Hub.DecideHeld(ctx, owner, held.Message.ID, hub.Decision{Approve: true, Body: "  \n "}); code(err) != "invalid_argument" {
		t.Fatalf("a blank edit: %v, want invalid_argument", err)
	}
	q, err := w.Hub.AskOwner(ctx, w.Planner, "Close it?", "", conv, nil)
	if err != nil {
		t.Fatal(err)
	}
	cursor := w.Latest(t, w.Planner)
	if _, err := w.Hub.CloseConversation(ctx, conv); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideHeld(ctx, owner, held.Message.ID, hub.Decision{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AnswerQuestion(ctx, owner, q.ID, "yes"); err != nil {
		t.Fatal(err)
	}
	r, err := w.Hub.Wait(ctx, planner, hub.WaitInput{Cursor: cursor})
	var types []string
	for _, e := range r.Events {
		types = append(types, e.Type)
	}
	if err != nil || strings.Join(types, " ") != "conversation.closed pending.decided owner.answer" {
		t.Fatalf("the sender heard %v, %v", types, err)
	}
	if _, err := w.Hub.Acknowledge(ctx, planner, q.ID, "failed", "no"); code(err) != "invalid_argument" {
		t.Fatalf("acknowledging an answer as failed: %v", err)
	}
}
