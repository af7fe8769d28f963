package hub_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/overview"
)

func TestInboxWaitingMeansUnacknowledged(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	sent := w.Send(t, w.Planner, conv, "please review PR 7")

	inbox := func() *hub.InboxResult {
		t.Helper()
		r, err := w.Hub.Inbox(ctx, w.Reviewer, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := inbox()
	if r.Total != 1 || r.Items[0].Message.ID != sent.Message.ID || !r.Items[0].Delivery.FetchedAt.IsZero() {
		t.Fatalf("after the send: %+v, want one waiting, not fetched", r)
	}
	if again := inbox(); !again.Items[0].Delivery.FetchedAt.IsZero() {
		t.Fatal("listing marked the message read")
	}
	if _, err := w.Hub.ReadMessage(ctx, w.Reviewer, sent.Message.ID, ""); err != nil {
		t.Fatal(err)
	}
	if r := inbox(); r.Total != 1 || r.Items[0].Delivery.FetchedAt.IsZero() {
		t.Fatalf("after reading: %+v, want still waiting and fetched", r)
	}
	d, err := w.Hub.Acknowledge(ctx, w.Reviewer, sent.Message.ID, "failed", "CI was down")
	if err != nil || d.State != hub.DeliveryFailed || d.Attempts != 1 {
		t.Fatalf("acknowledge failed: %+v, %v", d, err)
	}
	if r := inbox(); r.Total != 1 || r.Items[0].Delivery.Error != "CI was down" {
		t.Fatalf("after a failed attempt: %+v, want still waiting with the error", r)
	}
	if _, err := w.Hub.Acknowledge(ctx, w.Reviewer, sent.Message.ID, "", ""); err != nil {
		t.Fatal(err)
	}
	if r := inbox(); r.Total != 0 {
		t.Fatalf("after acknowledging: %+v, want none waiting", r)
	}
	if _, err := w.Hub.Acknowledge(ctx, w.Reviewer, sent.Message.ID, "done", ""); err != nil {
		t.Fatalf("acknowledging twice: %v", err)
	}
	// The sender has no delivery of its own message; a stranger cannot see it.
	if _, err := w.Hub.Acknowledge(ctx, w.Planner, sent.Message.ID, "", ""); code(err) != "invalid_argument" {
		t.Fatalf("sender acknowledging its own message: %v, want invalid_argument saying why", err)
	}
	if _, err := w.Hub.ReadMessage(ctx, w.Helper, sent.Message.ID, ""); code(err) != "not_found" {
		t.Fatalf("stranger reading: %v, want not_found", err)
	}
	if _, err := w.Hub.Acknowledge(ctx, w.Reviewer, sent.Message.ID, "maybe", ""); code(err) != "invalid_argument" {
		t.Fatalf("bad outcome: %v", err)
	}
}

func TestInboxOldestFirstNeverCollapsed(t *testing.T) {
	w := newWorld(t)
	a := w.Direct(t, w.Planner, "alice/reviewer")
	ops := w.Agent(t, "alice/ops")
	b := w.Direct(t, ops, "alice/reviewer")
	var want []string
	for i := range 5 {
		conv, from := a, w.Planner
		if i%2 == 1 {
			conv, from = b, ops
		}
		want = append(want, w.Send(t, from, conv, fmt.Sprintf("ask %d", i)).Message.ID)
	}
	r, err := w.Hub.Inbox(ctx, w.Reviewer, 3, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 5 || r.More != 2 || len(r.Items) != 3 {
		t.Fatalf("total %d more %d items %d, want 5, 2, 3", r.Total, r.More, len(r.Items))
	}
	for i, it := range r.Items {
		if it.Message.ID != want[i] {
			t.Errorf("item %d = %s, want %s (oldest first)", i, it.Message.ID, want[i])
		}
	}
	if _, err := w.Hub.Inbox(ctx, w.Reviewer, 51, ""); code(err) != "invalid_argument" {
		t.Fatalf("limit 51: %v", err)
	}
}

func TestReadMessagesPagesAndPlaces(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	for i := range 5 {
		w.Send(t, w.Planner, conv, fmt.Sprintf("m%d", i+1))
	}
	p, err := w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: conv, Limit: 2})
	if err != nil || len(p.Messages) != 2 || !p.HasMore || p.NextAfterSeq != 2 {
		t.Fatalf("first page: %+v, %v", p, err)
	}
	p, err = w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: conv, AfterSeq: p.NextAfterSeq, Limit: 3, Instance: "desk"})
	if err != nil || len(p.Messages) != 3 || p.HasMore || p.NextAfterSeq != 5 {
		t.Fatalf("second page: %+v, %v", p, err)
	}
	places := map[string]int64{}
	for _, r := range p.Reads {
		places[r.Handle+"/"+r.Instance] = r.LastReadSeq
	}
	if places["alice/reviewer/"] != 2 || places["alice/reviewer/desk"] != 5 {
		t.Fatalf("reads = %+v, want the agent's place at 2 and session desk's at 5", p.Reads)
	}
	// Reading with mark_read records the fetch; listing the inbox shows it.
	in, _ := w.Hub.Inbox(ctx, w.Reviewer, 0, "")
	for _, it := range in.Items {
		if it.Delivery.FetchedAt.IsZero() {
			t.Errorf("message %d read with mark_read is not marked fetched", it.Message.Seq)
		}
	}
	page, err := w.Hub.ListConversations(ctx, w.Reviewer, "", 0)
	ls := page.Conversations
	if err != nil || len(ls) != 1 || ls[0].Unread != 3 || ls[0].Last.Body != "m5" {
		t.Fatalf("list_conversations: %+v, %v; want unread 3 past the agent's place", ls, err)
	}
}

// TestProcessingLifecycle: waiting → processing (attempt 1) → failed, with
// its error, still waiting → processing (attempt 2) → done; each state shows
// in the agent's inbox and its owner's view of it. An attempt left running
// past StuckAfter comes back first.
func TestProcessingLifecycle(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	first := w.Send(t, w.Planner, conv, "first").Message
	w.Send(t, w.Planner, conv, "second")
	state := func() string {
		t.Helper()
		in, err := w.Hub.Inbox(ctx, w.Reviewer, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		owners, err := overview.New(w.Hub, w.Store).AgentInbox(ctx, w.owner(t), "reviewer", 0)
		if err != nil {
			t.Fatal(err)
		}
		var got, theirs []string
		for _, it := range in.Items {
			got = append(got, fmt.Sprintf("%s:%s/%d%s stuck=%v", it.Message.Body, it.Delivery.State, it.Delivery.Attempts, it.Delivery.Error, w.Hub.Stuck(&it.Delivery)))
		}
		for _, it := range owners.Items {
			theirs = append(theirs, fmt.Sprintf("%s:%s/%d%s stuck=%v", it.Message.Body, it.Delivery.State, it.Delivery.Attempts, it.Delivery.Error, w.Hub.Stuck(&it.Delivery)))
		}
		if strings.Join(got, " ") != strings.Join(theirs, " ") {
			t.Fatalf("the agent sees %v, its owner %v", got, theirs)
		}
		return strings.Join(got, " ")
	}
	step := func(outcome, errText, want string) {
		t.Helper()
		if _, err := w.Hub.Acknowledge(ctx, w.Reviewer, first.ID, outcome, errText); err != nil {
			t.Fatalf("%s: %v", outcome, err)
		}
		if got := state(); got != want {
			t.Fatalf("after %s: %s, want %s", outcome, got, want)
		}
	}
	if got := state(); got != "first:waiting/0 stuck=false second:waiting/0 stuck=false" {
		t.Fatalf("at first: %s", got)
	}
	step(hub.OutcomeProcessing, "", "first:processing/1 stuck=false second:waiting/0 stuck=false")
	step(hub.OutcomeFailed, "the build broke", "first:failed/1the build broke stuck=false second:waiting/0 stuck=false")
	step(hub.OutcomeProcessing, "", "first:processing/2the build broke stuck=false second:waiting/0 stuck=false")
	step(hub.OutcomeDone, "", "second:waiting/0 stuck=false")
	if _, err := w.Hub.Acknowledge(ctx, w.Reviewer, first.ID, hub.OutcomeProcessing, ""); code(err) != "invalid_argument" {
		t.Fatalf("a new attempt at a message done: %v", err)
	}

	// The second message's attempt runs on past StuckAfter: it is stuck,
	// and comes before a message that arrived earlier but waits.
	third := w.Send(t, w.Planner, conv, "third").Message
	if _, err := w.Hub.Acknowledge(ctx, w.Reviewer, third.ID, hub.OutcomeProcessing, ""); err != nil {
		t.Fatal(err)
	}
	if got := state(); got != "second:waiting/0 stuck=false third:processing/1 stuck=false" {
		t.Fatalf("a fresh attempt: %s", got)
	}
	w.Clock.Advance(hub.DefaultSettings().StuckAfter)
	if got := state(); got != "third:processing/1 stuck=true second:waiting/0 stuck=false" {
		t.Fatalf("after StuckAfter: %s, want the stuck attempt first", got)
	}
	if in, err := w.Hub.Inbox(ctx, w.Reviewer, 1, ""); err != nil || len(in.Items) != 1 || in.Items[0].Message.ID != third.ID || in.Total != 2 {
		t.Fatalf("a page of one: %+v, %v; want the stuck attempt, of 2", in, err)
	}
	if _, err := w.Hub.Acknowledge(ctx, w.Reviewer, third.ID, hub.OutcomeProcessing, ""); err != nil {
		t.Fatal(err)
	}
	if got := state(); got != "second:waiting/0 stuck=false third:processing/2 stuck=false" {
		t.Fatalf("taken up again: %s", got)
	}
}
