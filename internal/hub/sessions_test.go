package hub_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// inboxIDs lists the message ids waiting for the session.
func inboxIDs(t *testing.T, w *world, c *hub.Caller, instance string) map[string]hub.InboxItem {
	t.Helper()
	r, err := w.Hub.Inbox(ctx, c, 50, instance)
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != len(r.Items) {
		t.Fatalf("total %d but %d rows listed", r.Total, len(r.Items))
	}
	out := map[string]hub.InboxItem{}
	for _, it := range r.Items {
		out[it.Message.ID] = it
	}
	return out
}

// waitAs hands over the session's events after cursor.
func waitAs(t *testing.T, w *world, c *hub.Caller, instance string, cursor *string) map[string]hub.Addressing {
	t.Helper()
	r, err := w.Hub.Wait(ctx, c, hub.WaitInput{Cursor: cursor, Instance: instance})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]hub.Addressing{}
	for _, e := range r.Events {
		if e.Message != nil {
			out[e.Message.ID] = r.Addressing[e.ID]
		}
	}
	return out
}

// TestSessionsShareAnAgent: two named sessions of the reviewer (desk and
// laptop) and the planner talking to it.
func TestSessionsShareAnAgent(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	start := w.Latest(t, w.Reviewer)
	for _, s := range []string{"desk", "laptop"} {
		if _, err := w.Hub.Whoami(ctx, w.Reviewer, s, "working on "+s); err != nil {
			t.Fatal(err)
		}
	}

	// A message addressed to laptop is for laptop only, and desk reading the
	// conversation does not hide it from laptop.
	toLaptop, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "laptop: run the tests", ToInstance: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: conv, Instance: "desk"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := inboxIDs(t, w, w.Reviewer, "laptop")[toLaptop.Message.ID]; !ok {
		t.Error("the message addressed to laptop does not wait for laptop")
	}
	if _, ok := inboxIDs(t, w, w.Reviewer, "desk")[toLaptop.Message.ID]; ok {
		t.Error("the message addressed to laptop waits for desk")
	}
	if a := waitAs(t, w, w.Reviewer, "laptop", start)[toLaptop.Message.ID]; !a.ForYou || a.FromYou {
		t.Errorf("laptop's event: %+v, want for_you", a)
	}
	if a := waitAs(t, w, w.Reviewer, "desk", start)[toLaptop.Message.ID]; a.ForYou {
		t.Errorf("desk's event: %+v, want not for_you", a)
	}

	// Desk speaks, so desk holds the conversation: it answers what is
	// addressed to nobody, and laptop sees handled_by desk.
	if _, err := w.Hub.SendMessage(ctx, w.Reviewer, hub.SendInput{ConversationID: conv, Body: "on it", Instance: "desk"}); err != nil {
		t.Fatal(err)
	}
	open, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "anyone: what broke?"})
	if err != nil {
		t.Fatal(err)
	}
	if it, ok := inboxIDs(t, w, w.Reviewer, "desk")[open.Message.ID]; !ok || it.HeldBy != "desk" {
		t.Errorf("desk's inbox: %+v (present %v), want the unaddressed message held by desk", it, ok)
	}
	if _, ok := inboxIDs(t, w, w.Reviewer, "laptop")[open.Message.ID]; ok {
		t.Error("the unaddressed message waits for laptop while desk holds the conversation")
	}
	if a := waitAs(t, w, w.Reviewer, "laptop", start)[open.Message.ID]; a.ForYou || a.HeldBy != "desk" {
		t.Errorf("laptop's event: %+v, want for_you false, handled_by desk", a)
	}
	// The agent as a whole still has it waiting: acknowledgement is per agent.
	if _, ok := inboxIDs(t, w, w.Reviewer, "")[open.Message.ID]; !ok {
		t.Error("the agent's inbox lost the message")
	}

	// Six hours without desk: its hold lapses and the conversation is
	// unclaimed, waiting for every session.
	w.Clock.Advance(hub.HoldLapse)
	it, ok := inboxIDs(t, w, w.Reviewer, "laptop")[open.Message.ID]
	if !ok || it.HeldBy != "" {
		t.Errorf("after 6 hours: laptop's row %+v (present %v), want it unclaimed", it, ok)
	}

	// Acknowledging from one session takes it out of every session's inbox.
	if _, err := w.Hub.Acknowledge(ctx, w.Reviewer, open.Message.ID, "", ""); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"desk", "laptop", ""} {
		if _, ok := inboxIDs(t, w, w.Reviewer, s)[open.Message.ID]; ok {
			t.Errorf("session %q still has the acknowledged message", s)
		}
	}
}

func TestOwnWordsAndSiblingWords(t *testing.T) {
	w := newWorld(t)
	v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "Refactor", Participants: []string{"alice/reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	start := w.Latest(t, w.Planner)
	// Session "two" was seen before; a session that appears later does not
	// inherit the words its siblings wrote before it.
	if _, err := w.Hub.Whoami(ctx, w.Planner, "two", ""); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(time.Second)
	mine, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "I take the store", Instance: "one"})
	if err != nil {
		t.Fatal(err)
	}
	if a := waitAs(t, w, w.Planner, "one", start)[mine.Message.ID]; !a.FromYou || a.ForYou {
		t.Errorf("the session's own words came back as %+v, want from_you", a)
	}
	if _, ok := inboxIDs(t, w, w.Planner, "one")[mine.Message.ID]; ok {
		t.Error("a session's own words wait in its own inbox")
	}
	// The sibling session "two" hears them, and they wait for it past its
	// place, until it reads past them.
	if a := waitAs(t, w, w.Planner, "two", start)[mine.Message.ID]; a.FromYou || !a.ForYou {
		t.Errorf("the sibling session's event: %+v, want for_you", a)
	}
	it, ok := inboxIDs(t, w, w.Planner, "two")[mine.Message.ID]
	if !ok || !it.Sibling {
		t.Fatalf("the sibling session's inbox: %+v (present %v)", it, ok)
	}
	w.Clock.Advance(time.Second)
	if _, ok := inboxIDs(t, w, w.Planner, "three")[mine.Message.ID]; ok {
		t.Error("a session first seen after the words were written finds them waiting")
	}
	if _, err := w.Hub.ReadMessages(ctx, w.Planner, hub.ReadInput{ConversationID: conv, Instance: "two"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := inboxIDs(t, w, w.Planner, "two")[mine.Message.ID]; ok {
		t.Error("the sibling's words still wait after the session read past them")
	}
	// mark_unread moves the place back: they wait again.
	if place, err := w.Hub.MarkUnread(ctx, w.Planner, conv, mine.Message.Seq, "two"); err != nil || place != mine.Message.Seq-1 {
		t.Fatalf("mark_unread: place %d, %v", place, err)
	}
	if _, ok := inboxIDs(t, w, w.Planner, "two")[mine.Message.ID]; !ok {
		t.Error("mark_unread did not bring the message back")
	}
	if _, err := w.Hub.MarkUnread(ctx, w.Planner, conv, 99, "two"); code(err) != "invalid_argument" {
		t.Errorf("mark_unread past the last seq: %v", err)
	}
}

func TestClaimsAreRaceFree(t *testing.T) {
	w := newWorld(t)
	for round := range 200 {
		v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: fmt.Sprintf("round %d", round), Participants: []string{"alice/reviewer"}})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, s := range []string{"east", "west"} {
			wg.Go(func() { _, errs[i] = w.Hub.ClaimConversation(ctx, w.Reviewer, v.Conversation.ID, s, false) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch code(err) {
			case "":
				won++
			case "held_by_other:held_by_other":
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d sessions won the claim, want exactly one (%v)", round, won, errs)
		}
	}
	v, _ := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "takeover", Participants: []string{"alice/reviewer"}})
	if _, err := w.Hub.ClaimConversation(ctx, w.Reviewer, v.Conversation.ID, "east", false); err != nil {
		t.Fatal(err)
	}
	cl, err := w.Hub.ClaimConversation(ctx, w.Reviewer, v.Conversation.ID, "west", true)
	if err != nil || cl.Previous != "east" {
		t.Fatalf("takeover: %+v, %v", cl, err)
	}
	if _, err := w.Hub.ClaimConversation(ctx, w.Reviewer, v.Conversation.ID, "", false); code(err) != "invalid_argument" {
		t.Fatalf("claim without a session name: %v", err)
	}
	// A lapsed holder lets go: after 6 hours unseen, east claims freely.
	w.Clock.Advance(hub.HoldLapse + time.Minute)
	if _, err := w.Hub.ClaimConversation(ctx, w.Reviewer, v.Conversation.ID, "east", false); err != nil {
		t.Fatalf("claim after the holder lapsed: %v", err)
	}
}

// holder is the session holding the conversation for the agent ("" for
// none), as stored.
func holder(t *testing.T, w *world, c *hub.Caller, conv string) string {
	t.Helper()
	hd, err := w.Store.Hold(ctx, c.Agent.ID, conv)
	if errors.Is(err, hub.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return hd.Instance
}

// TestSpeakingDoesNotTakeALiveClaim: a session that lapsed (unseen for
// HoldLapse) and speaks again once another session claimed the
// conversation does not take it back; only claim_conversation with
// takeover moves a live claim. Speaking in a conversation nobody holds,
// one you hold, or one whose holder lapsed, makes you the holder.
func TestSpeakingDoesNotTakeALiveClaim(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	say := func(instance, body string) {
		t.Helper()
		if _, err := w.Hub.SendMessage(ctx, w.Reviewer, hub.SendInput{ConversationID: conv, Body: body, Instance: instance}); err != nil {
			t.Fatal(err)
		}
	}
	say("desk", "on it")
	if got := holder(t, w, w.Reviewer, conv); got != "desk" {
		t.Fatalf("after desk spoke the holder is %q, want desk", got)
	}
	w.Clock.Advance(hub.HoldLapse + time.Minute)
	claim, err := w.Hub.ClaimConversation(ctx, w.Reviewer, conv, "laptop", false)
	if err != nil || claim.Previous != "" {
		t.Fatalf("laptop claiming once desk lapsed: %+v, %v", claim, err)
	}
	say("desk", "back again") // desk is seen again, and laptop is live
	if got := holder(t, w, w.Reviewer, conv); got != "laptop" {
		t.Fatalf("after the lapsed desk spoke again the holder is %q, want laptop, which claimed it", got)
	}
	open, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "anyone: what broke?"})
	if err != nil {
		t.Fatal(err)
	}
	if it, ok := inboxIDs(t, w, w.Reviewer, "laptop")[open.Message.ID]; !ok || it.HeldBy != "laptop" {
		t.Errorf("laptop's inbox: %+v (present %v), want the unaddressed message, held by laptop", it, ok)
	}
	if _, ok := inboxIDs(t, w, w.Reviewer, "desk")[open.Message.ID]; ok {
		t.Error("the unaddressed message waits for desk while laptop holds the conversation")
	}
	if _, err := w.Hub.ClaimConversation(ctx, w.Reviewer, conv, "desk", false); code(err) != "held_by_other:held_by_other" {
		t.Fatalf("desk claiming without takeover: %v, want held_by_other", err)
	}
	if claim, err := w.Hub.ClaimConversation(ctx, w.Reviewer, conv, "desk", true); err != nil || claim.Previous != "laptop" {
		t.Fatalf("desk taking over: %+v, %v", claim, err)
	}
	say("laptop", "fine, yours") // laptop is live, but desk holds it now
	if got := holder(t, w, w.Reviewer, conv); got != "desk" {
		t.Fatalf("after laptop spoke in desk's conversation the holder is %q, want desk", got)
	}
	say("desk", "thanks") // one's own stays one's own
	if got := holder(t, w, w.Reviewer, conv); got != "desk" {
		t.Fatalf("after desk spoke again the holder is %q, want desk", got)
	}
	w.Clock.Advance(hub.HoldLapse + time.Minute)
	say("laptop", "desk went quiet") // a lapsed holder lets go
	if got := holder(t, w, w.Reviewer, conv); got != "laptop" {
		t.Fatalf("after laptop spoke once desk lapsed the holder is %q, want laptop", got)
	}

	// A conversation nobody holds goes to whoever speaks first.
	other := w.Direct(t, w.Reviewer, "alice")
	if _, err := w.Hub.SendMessage(ctx, w.Reviewer, hub.SendInput{ConversationID: other, Body: "hello", Instance: "desk"}); err != nil {
		t.Fatal(err)
	}
	if got := holder(t, w, w.Reviewer, other); got != "desk" {
		t.Fatalf("after desk spoke in a conversation nobody held the holder is %q, want desk", got)
	}
}

// readFlags is the session's check_inbox as "seq:already_read" for each
// message waiting in conv, oldest first.
func readFlags(t *testing.T, w *world, c *hub.Caller, instance, conv string) string {
	t.Helper()
	r, err := w.Hub.Inbox(ctx, c, 50, instance)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range r.Items {
		if it.Message.ConversationID == conv {
			out = append(out, fmt.Sprintf("%d:%v", it.Message.Seq, it.AlreadyRead()))
		}
	}
	return strings.Join(out, " ")
}

// unread is the conversation's unread count in the agent's
// list_conversations.
func unread(t *testing.T, w *world, c *hub.Caller, conv string) int {
	t.Helper()
	p, err := w.Hub.ListConversations(ctx, c, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Conversations {
		if l.Conversation.ID == conv {
			return l.Unread
		}
	}
	t.Fatalf("%s is not in the list", conv)
	return 0
}

// TestMarkUnreadMakesMessagesNew: after mark_unread to seq N, the messages
// from N on that wait show already_read false in check_inbox, as many as
// list_conversations counts unread; before it and after reading them again
// they show read. With a session name the same holds for that session.
func TestMarkUnreadMakesMessagesNew(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	var ids []string
	for i := 1; i <= 5; i++ {
		ids = append(ids, w.Send(t, w.Planner, conv, fmt.Sprintf("step %d", i)).Message.ID)
	}
	if _, err := w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: conv}); err != nil {
		t.Fatal(err)
	}
	if got, n := readFlags(t, w, w.Reviewer, "", conv), unread(t, w, w.Reviewer, conv); got != "1:true 2:true 3:true 4:true 5:true" || n != 0 {
		t.Fatalf("after reading all: %s, unread %d", got, n)
	}
	if place, err := w.Hub.MarkUnread(ctx, w.Reviewer, conv, 3, ""); err != nil || place != 2 {
		t.Fatalf("mark_unread to 3: place %d, %v", place, err)
	}
	if got, n := readFlags(t, w, w.Reviewer, "", conv), unread(t, w, w.Reviewer, conv); got != "1:true 2:true 3:false 4:false 5:false" || n != 3 {
		t.Fatalf("after mark_unread to 3: %s, unread %d; want 3 to 5 new, 3 unread", got, n)
	}
	// Reading one again, by itself, makes it read again.
	if _, err := w.Hub.ReadMessage(ctx, w.Reviewer, ids[3], ""); err != nil {
		t.Fatal(err)
	}
	if got := readFlags(t, w, w.Reviewer, "", conv); got != "1:true 2:true 3:false 4:true 5:false" {
		t.Fatalf("after read_message of 4: %s", got)
	}
	if _, err := w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: conv, AfterSeq: 2}); err != nil {
		t.Fatal(err)
	}
	if got, n := readFlags(t, w, w.Reviewer, "", conv), unread(t, w, w.Reviewer, conv); got != "1:true 2:true 3:true 4:true 5:true" || n != 0 {
		t.Fatalf("after reading them again: %s, unread %d", got, n)
	}

	// A named session: its place moves, and its inbox shows the same.
	if _, err := w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: conv, Instance: "desk"}); err != nil {
		t.Fatal(err)
	}
	if place, err := w.Hub.MarkUnread(ctx, w.Reviewer, conv, 4, "desk"); err != nil || place != 3 {
		t.Fatalf("desk's mark_unread to 4: place %d, %v", place, err)
	}
	if got := readFlags(t, w, w.Reviewer, "desk", conv); got != "1:true 2:true 3:true 4:false 5:false" {
		t.Fatalf("desk's inbox after its mark_unread to 4: %s", got)
	}
}
