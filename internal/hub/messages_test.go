package hub_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/rooms"
)

func TestReach(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		name    string
		handles []string
		want    string
	}{
		{"sibling", []string{"alice/reviewer"}, ""},
		{"own owner", []string{"alice"}, ""},
		{"case-folded", []string{" Alice/Reviewer "}, ""},
		{"itself", []string{"alice/planner"}, "denied:self"},
		{"another owner's agent", []string{"bob/helper"}, "denied:contact"},
		{"another person", []string{"bob"}, "denied:contact"},
		{"unknown", []string{"alice/ghost"}, "not_found"},
		{"not a handle", []string{"a/b/c"}, "invalid_argument"},
		{"none", nil, "invalid_argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.Hub.OpenConversation(ctx, w.Planner, tc.handles)
			if code(err) != tc.want {
				t.Fatalf("open %v: %v, want %q", tc.handles, err, tc.want)
			}
		})
	}
}

func TestOpenConversationFindsTheSameSet(t *testing.T) {
	w := newWorld(t)
	a := w.Direct(t, w.Planner, "alice/reviewer")
	b := w.Direct(t, w.Reviewer, "alice/planner")
	c := w.Direct(t, w.Planner, "alice/reviewer", "alice")
	if a != b {
		t.Errorf("the same pair opened two conversations: %s and %s", a, b)
	}
	if c == a {
		t.Errorf("a different set found the pair's conversation")
	}
}

func TestSendLimits(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	summary := "Please review"
	for _, tc := range []struct {
		name string
		in   hub.SendInput
		want string
	}{
		{"10,000 CJK characters", hub.SendInput{Body: strings.Repeat("漢", 10000), Summary: summary}, ""},
		{"10,001 CJK characters", hub.SendInput{Body: strings.Repeat("漢", 10001), Summary: summary}, "too_long"},
		{"emoji count as one", hub.SendInput{Body: strings.Repeat("🙂", 200)}, ""},
		{"200 characters need no summary", hub.SendInput{Body: strings.Repeat("a", 200)}, ""},
		{"201 characters need a summary", hub.SendInput{Body: strings.Repeat("a", 201)}, "summary_required"},
		{"summary of 200", hub.SendInput{Body: strings.Repeat("a", 201), Summary: strings.Repeat("s", 200)}, ""},
		{"summary of 201", hub.SendInput{Body: "hi", Summary: strings.Repeat("s", 201)}, "too_long"},
		{"empty body", hub.SendInput{Body: ""}, "invalid_argument"},
		{"white space only", hub.SendInput{Body: " \n\t\u00a0\u3000"}, "invalid_argument"},
		{"NUL only", hub.SendInput{Body: "\x00\x00"}, "invalid_argument"},
		{"zero-width spaces only", hub.SendInput{Body: "\u200b\u200c\u200d"}, "invalid_argument"},
		{"word joiner, BOM and soft hyphen only", hub.SendInput{Body: "\u2060 \ufeff\u00ad"}, "invalid_argument"},
		{"Hangul filler and a variation selector only", hub.SendInput{Body: "\u3164\ufe0f"}, "invalid_argument"},
		{"one letter among invisible ones", hub.SendInput{Body: "\u200bk\u200b"}, ""},
		{"an invisible summary is none", hub.SendInput{Body: strings.Repeat("a", 201), Summary: "\u200b\u2060"}, "summary_required"},
		{"summary with a NUL", hub.SendInput{Body: "hi", Summary: "please\x00 review"}, ""},
		{"client_msg_id with a NUL", hub.SendInput{Body: "hi", ClientMsgID: "job\x001"}, ""},
		{"client_msg_id of a space", hub.SendInput{Body: "hi", ClientMsgID: " "}, "invalid_argument"},
		{"client_msg_id of a zero-width space", hub.SendInput{Body: "hi", ClientMsgID: "\u200b"}, "invalid_argument"},
		{"bad format", hub.SendInput{Body: "hi", Format: "html"}, "invalid_argument"},
		{"bad kind", hub.SendInput{Body: "hi", Kind: "shout"}, "invalid_argument"},
		{"metadata not an object", hub.SendInput{Body: "hi", Kind: "task", Metadata: json.RawMessage(`[1]`)}, "invalid_argument"},
		{"metadata over 16 KiB", hub.SendInput{Body: "hi", Kind: "task", Metadata: json.RawMessage(`{"a":"` + strings.Repeat("x", 16<<10) + `"}`)}, "too_long"},
		{"client_msg_id of 101", hub.SendInput{Body: "hi", ClientMsgID: strings.Repeat("c", 101)}, "too_long"},
		{"bad instance", hub.SendInput{Body: "hi", Instance: "x"}, "invalid_argument"},
		{"reply to a future seq", hub.SendInput{Body: "hi", ReplyToSeq: 99}, "invalid_argument"},
		{"mention of a stranger", hub.SendInput{Body: "hi", Mentions: []string{"bob"}}, "invalid_argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.ConversationID = conv
			before, _ := w.Hub.ReadMessages(ctx, w.Planner, hub.ReadInput{ConversationID: conv, MarkRead: new(false)})
			_, err := w.Hub.SendMessage(ctx, w.Planner, tc.in)
			if code(err) != tc.want {
				t.Fatalf("send: %v, want %q", err, tc.want)
			}
			after, _ := w.Hub.ReadMessages(ctx, w.Planner, hub.ReadInput{ConversationID: conv, MarkRead: new(false)})
			if grew := len(after.Messages) - len(before.Messages); (tc.want == "") != (grew == 1) {
				t.Fatalf("messages grew by %d", grew)
			}
		})
	}
}

// TestBlankTitles: the rule that refuses a blank body refuses a blank
// title too (§4).
func TestBlankTitles(t *testing.T) {
	w := newWorld(t)
	for _, title := range []string{"\x00", "\u200b", " \ufeff\u2060 "} {
		_, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: title})
		if code(err) != "invalid_argument" || !strings.Contains(err.Error(), "title is blank") {
			t.Errorf("create_thread with title %q: %v; want invalid_argument, title is blank", title, err)
		}
	}
	if _, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "\u200bPlan"}); err != nil {
		t.Errorf("a title with a word: %v", err)
	}
}

func TestSendStoresWhatWasSent(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	body := "bad \xff byte, a NUL \x00, emoji 🙂 stays"
	r, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: body, Instance: " Repo Main ", ToInstance: "Desk", Mentions: []string{"@Alice/Reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.Hub.ReadMessage(ctx, w.Reviewer, r.Message.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"body": m.Body, "seq": m.Seq, "instance": m.SenderInstance, "to": m.ToInstance, "mentions": m.Mentions,
		"author": m.Author, "authority": m.Authority, "on_behalf_of": m.OwnerHandle, "recipients": r.Recipients}
	want := map[string]any{"body": "bad \uFFFD byte, a NUL \uFFFD, emoji 🙂 stays", "seq": int64(1), "instance": "repo-main", "to": "desk",
		"mentions": []string{"alice/reviewer"}, "author": "agent", "authority": "agent", "on_behalf_of": "alice", "recipients": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored message (-want +got):\n%s", diff)
	}
}

func TestClientMsgID(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	in := hub.SendInput{ConversationID: conv, Body: "deploy now", ClientMsgID: "job-1"}
	var wg sync.WaitGroup
	results := make([]*hub.SendResult, 10)
	errs := make([]error, 10)
	for i := range 10 {
		wg.Go(func() { results[i], errs[i] = w.Hub.SendMessage(ctx, w.Planner, in) })
	}
	wg.Wait()
	ids := map[string]bool{}
	for i := range 10 {
		if errs[i] != nil {
			t.Fatalf("send %d: %v", i, errs[i])
		}
		ids[results[i].Message.ID] = true
		if results[i].Message.Seq != 1 {
			t.Errorf("send %d: seq %d, want 1", i, results[i].Message.Seq)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("10 identical sends stored %d messages", len(ids))
	}
	page, _ := w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: conv})
	if len(page.Messages) != 1 {
		t.Fatalf("conversation holds %d messages, want 1", len(page.Messages))
	}
	in.Body = "deploy later"
	if _, err := w.Hub.SendMessage(ctx, w.Planner, in); code(err) != "conflict" {
		t.Fatalf("same id, different body: %v, want conflict", err)
	}
}

func TestSendRefusals(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	notice, err := w.Hub.SendMessage(ctx, w.Reviewer, hub.SendInput{ConversationID: conv, Body: "got it", NoReply: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "thanks!", ReplyToSeq: notice.Message.Seq})
	if code(err) != "denied:notice" {
		t.Fatalf("reply to a no_reply message: %v, want denied:notice", err)
	}

	// Only the creator may request a close; then nobody may send.
	v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "Release 2.0", Participants: []string{"alice/reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	thread := v.Conversation.ID
	if _, err := w.Hub.RequestClose(ctx, w.Reviewer, thread); code(err) != "forbidden" {
		t.Fatalf("request_close by a member: %v, want forbidden", err)
	}
	if _, err := w.Hub.RequestClose(ctx, w.Planner, conv); code(err) != "invalid_argument" {
		t.Fatalf("request_close of a direct conversation: %v, want invalid_argument", err)
	}
	if c, err := w.Hub.RequestClose(ctx, w.Planner, thread); err != nil || c.Status != hub.StatusCloseRequested {
		t.Fatalf("request_close: %v, %v", c, err)
	}
	if _, err := w.Hub.SendMessage(ctx, w.Reviewer, hub.SendInput{ConversationID: thread, Body: "one more"}); code(err) != "denied:closing" {
		t.Fatalf("send while closing: %v, want denied:closing", err)
	}

	// Strangers get not_found, never forbidden.
	if _, err := w.Hub.SendMessage(ctx, w.Helper, hub.SendInput{ConversationID: conv, Body: "hi"}); code(err) != "not_found" {
		t.Fatalf("send by a stranger: %v, want not_found", err)
	}

	// Once every other participant is archived, sends reach nobody.
	if _, err := w.Hub.ArchiveAgent(ctx, "alice/reviewer"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "anyone?"}); code(err) != "no_recipients" {
		t.Fatalf("send with every other participant archived: %v, want no_recipients", err)
	}
}

func TestEventPostsReachOnlyMentioned(t *testing.T) {
	w := newWorld(t)
	ops := w.Agent(t, "alice/ops")
	v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "Build", Participants: []string{"alice/reviewer", "alice/ops"}})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "ran tests", Kind: "tool_result",
		Metadata: json.RawMessage(`{"passed": 12}`), Mentions: []string{"alice/ops"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who  *hub.Caller
		want int
	}{{w.Reviewer, 0}, {ops, 1}} {
		in, err := w.Hub.Inbox(ctx, tc.who, 0, "")
		if err != nil || in.Total != tc.want {
			t.Errorf("%s inbox total = %v (%v), want %d", tc.who.Agent.Handle(), in, err, tc.want)
		}
	}
}

func TestAddParticipantSeesHistory(t *testing.T) {
	w := newWorld(t)
	v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "Plan", Goal: "agree on a plan"})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "draft 1"}); code(err) != "no_recipients" {
		t.Fatalf("send alone: %v, want no_recipients", err)
	}
	if _, err := w.Hub.AddParticipant(ctx, w.Planner, conv, "bob/helper"); code(err) != "denied:contact" {
		t.Fatalf("add a stranger: %v, want denied:contact", err)
	}
	if _, err := w.Hub.AddParticipant(ctx, w.Planner, conv, "alice"); err != nil {
		t.Fatal(err)
	}
	w.Send(t, w.Planner, conv, "draft 2")
	if _, err := w.Hub.AddParticipant(ctx, w.Planner, conv, "alice/reviewer"); err != nil {
		t.Fatal(err)
	}
	page, err := w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: conv})
	if err != nil || len(page.Messages) != 1 || page.Messages[0].Body != "draft 2" {
		t.Fatalf("late participant's read: %+v, %v", page, err)
	}
}

func TestMetadataIsStoredClean(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	raw := json.RawMessage("{\"out\": \"a\xffb\", \"s\": \"\\udc00\", \"n\": 12345678901234567890, \"html\": \"<b>\"}")
	r, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "ran", Kind: "tool_result", Metadata: raw, Mentions: []string{"alice/reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.Hub.ReadMessage(ctx, w.Reviewer, r.Message.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"html":"<b>","n":12345678901234567890,"out":"a` + "\uFFFD" + `b","s":"` + "\uFFFD" + `"}`
	if string(m.Metadata) != want {
		t.Fatalf("stored metadata %s, want %s", m.Metadata, want)
	}
}

func TestPagesStayUnderResultCaps(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	start := w.Latest(t, w.Reviewer)
	for i := range 12 {
		if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: strings.Repeat(string(rune('a'+i)), 10000), Summary: "big"}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: conv})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(page.Messages); n == 0 || n >= 12 || !page.HasMore || page.NextAfterSeq != int64(n) {
		t.Fatalf("page of 12 × 10,000 characters: %d messages, has_more %v, next %d", n, page.HasMore, page.NextAfterSeq)
	}
	// A person reading the same conversation gets the same page.
	_, own, err := w.Hub.PersonMessages(ctx, w.owner(t), conv, 0, 0)
	if err != nil || len(own.Messages) != len(page.Messages) || !own.HasMore || own.NextAfterSeq != page.NextAfterSeq {
		t.Fatalf("the owner's page: %d messages, has_more %v, next %d, %v; want the agent's %d", len(own.Messages), own.HasMore, own.NextAfterSeq, err, len(page.Messages))
	}
	if _, _, err := w.Hub.PersonMessages(ctx, w.owner(t), conv, -1, 0); code(err) != "invalid_argument" {
		t.Fatalf("after_seq -1 as a person: %v", err)
	}
	// Waits until all twelve are handed over, and no wait after that: with
	// nothing left it would park for its whole timeout.
	got := 0
	cursor := start
	for i := 0; i < 12 && got < 12; i++ {
		r, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if r.TimedOut {
			break
		}
		if len(r.Events) >= 12 {
			t.Fatalf("one wait handed over %d big messages", len(r.Events))
		}
		got += len(r.Events)
		cursor = &r.Cursor
	}
	if got != 12 { // none lost between pages
		t.Fatalf("waits handed over %d events in all, want 12", got)
	}
}

func TestInstanceLimitHoldsEverywhere(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	for i := range hub.MaxInstances {
		if _, err := w.Hub.Whoami(ctx, w.Planner, fmt.Sprintf("s%02d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "hi", Instance: "one-more"}); code(err) != "too_many_instances" {
		t.Fatalf("send as a 51st session: %v, want too_many_instances", err)
	}
	if _, err := w.Hub.Inbox(ctx, w.Planner, 0, "one-more"); code(err) != "too_many_instances" {
		t.Fatalf("check_inbox as a 51st session: %v", err)
	}
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "hi", Instance: "s07"}); err != nil {
		t.Fatalf("send as a known session: %v", err)
	}
	// A week later the names unused since free their places.
	w.Clock.Advance(hub.InstanceForgotten)
	if _, err := w.Hub.Whoami(ctx, w.Planner, "one-more", ""); err != nil {
		t.Fatalf("a new name after a week: %v", err)
	}
}

func TestArchivedAgentsAreListedNowhere(t *testing.T) {
	w := newWorld(t)
	v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "Plan", Participants: []string{"alice/reviewer", "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.ArchiveAgent(ctx, "alice/reviewer"); err != nil {
		t.Fatal(err)
	}
	page, err := w.Hub.ListConversations(ctx, w.Planner, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	ls := page.Conversations
	var handles []string
	for _, p := range ls[0].Listed() {
		handles = append(handles, p.Handle)
	}
	if ls[0].Conversation.ID != v.Conversation.ID || strings.Join(handles, ",") != "alice/planner,alice" {
		t.Fatalf("listed participants %v, want the archived reviewer left out", handles)
	}
	c, err := reach.New(w.Hub, w.Store).ListContacts(ctx, w.Planner)
	if err != nil || len(c.Siblings) != 0 {
		t.Fatalf("siblings after archiving the only one: %+v, %v", c, err)
	}
	r := w.Send(t, w.Planner, v.Conversation.ID, "still here?")
	if r.Recipients != 1 {
		t.Fatalf("recipients = %d, want 1 (the owner; the archived agent left the list)", r.Recipients)
	}
}

// TestNULIsReplacedInEveryText: one rule of input hygiene for every text
// field (§4): a NUL, like an invalid byte, becomes U+FFFD on the way in —
// in a body, a summary, a client_msg_id, a title and goal, a question, a
// contact request's message and a person's name alike — and is stored so.
func TestNULIsReplacedInEveryText(t *testing.T) {
	w := newWorld(t)
	alice := w.person(t, "alice")
	const in, want = "a\x00b\xffc", "a\uFFFDb\uFFFDc"
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	r, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: in, Summary: in, ClientMsgID: in})
	if err != nil {
		t.Fatalf("a send with a NUL in its body, summary and client_msg_id: %v", err)
	}
	m, err := w.Hub.ReadMessage(ctx, w.Reviewer, r.Message.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: in, Summary: in, ClientMsgID: want})
	if err != nil || !again.Duplicate || again.Message.ID != m.ID {
		t.Errorf("the same send with U+FFFD where the NUL was: %+v, %v; want the stored message again", again, err)
	}
	th, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: in, Goal: in})
	if err != nil {
		t.Fatalf("a thread titled with a NUL: %v", err)
	}
	q, err := w.Hub.AskOwner(ctx, w.Planner, in, "", "", []string{in})
	if err != nil {
		t.Fatalf("a question with a NUL: %v", err)
	}
	c, err := w.reach.RequestContact(ctx, alice, "bob", in)
	if err != nil {
		t.Fatalf("a contact request with a NUL: %v", err)
	}
	u, err := rooms.New(w.Hub, w.Store).UpdateUserName(ctx, alice, in)
	if err != nil {
		t.Fatalf("a name with a NUL: %v", err)
	}
	got := map[string]string{"body": m.Body, "summary": m.Summary, "client_msg_id": m.ClientMsgID, "title": th.Conversation.Title,
		"goal": th.Conversation.Goal, "question": q.Question, "option": strings.Join(q.Options, ""), "contact message": c.Message, "name": u.Name}
	for field, v := range got {
		if v != want {
			t.Errorf("%s stored %q; want %q", field, v, want)
		}
	}
}
