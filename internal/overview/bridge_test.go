package overview_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/overview"
)

// row is what a Bridge test compares of an activity row.
type row struct {
	Kind, Agent, Instance, Conversation, Text, Brake string
}

func rows(as []overview.Activity) []row {
	var out []row
	for _, a := range as {
		out = append(out, row{a.Kind, a.Agent, a.Instance, a.Conversation, a.Text, a.Brake})
	}
	return out
}

// TestBridge: the owner's Bridge shows what its agents do — sends in
// conversations the owner is not in, held messages, brakes tripped with
// their word, questions and claims — newest first; what comes after its
// cursor is the same rows, live; bob's agent's words are not alice's
// activity; sessions seen in the last hour are listed with what each last
// did.
func TestBridge(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	names := "alice/planner, alice/reviewer"
	if got := w.SendAs(t, w.Planner, conv, "Please review the retry logic", "laptop"); got != "" {
		t.Fatalf("first send: %s", got)
	}
	w.SendAs(t, w.Planner, conv, "Please review the retry logic", "laptop")
	if got := w.SendAs(t, w.Planner, conv, "Please review the retry logic", "laptop"); got != "duplicate" {
		t.Fatalf("third identical send: %q, want duplicate", got)
	}
	if _, err := w.Hub.AskOwner(ctx, w.Reviewer, "Merge it now?", "desk", "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.ClaimConversation(ctx, w.Reviewer, conv, "desk", false); err != nil {
		t.Fatal(err)
	}
	// Claiming again what the session holds is no news.
	if _, err := w.Hub.ClaimConversation(ctx, w.Reviewer, conv, "desk", false); err != nil {
		t.Fatal(err)
	}
	b, err := w.pages.Bridge(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	want := []row{
		{overview.ActivityClaimed, "alice/reviewer", "desk", names, "", ""},
		{overview.ActivityQuestion, "alice/reviewer", "desk", "", "Merge it now?", ""},
		{overview.ActivityBrake, "alice/planner", "laptop", names, "", "duplicate"},
		{overview.ActivitySent, "alice/planner", "laptop", names, "Please review the retry logic", ""},
		{overview.ActivitySent, "alice/planner", "laptop", names, "Please review the retry logic", ""},
	}
	got := rows(b.Activity)
	got[2].Text = "" // the brake's whole reason is checked below
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the Bridge's rows (-want +got):\n%s", diff)
	}
	if r := b.Activity[2].Text; r[:len("duplicate: ")] != "duplicate: " {
		t.Errorf("the brake's reason: %q", r)
	}
	if diff := cmp.Diff([]overview.WaitingCount{{Kind: hub.ApprovalQuestion, Count: 1}}, b.Waiting); diff != "" {
		t.Errorf("waiting (-want +got):\n%s", diff)
	}
	sessions := map[string][]string{}
	for _, a := range b.Agents {
		for _, in := range a.Instances {
			last := ""
			if in.Last != nil {
				last = in.Last.Kind
			}
			sessions[a.Agent.Handle()] = append(sessions[a.Agent.Handle()], in.Name+":"+last)
		}
	}
	if diff := cmp.Diff(map[string][]string{"alice/planner": {"laptop:brake"}, "alice/reviewer": {"desk:claimed"}}, sessions); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}

	// After the cursor: a held message and bob's agent's words in a
	// conversation alice is in come to her stream; only the first is her
	// agents' activity.
	if _, err := w.Hub.SetAgentMode(ctx, "alice/planner", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	w.Planner = w.Agent(t, "alice/planner")
	w.SendAs(t, w.Planner, conv, "Held for alice", "")
	res, err := w.Hub.WaitPerson(ctx, alice, b.Cursor, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	live, err := w.pages.BridgeActivity(ctx, alice, res.Events)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]row{{overview.ActivityHeld, "alice/planner", "", names, "Held for alice", ""}}, rows(live)); diff != "" {
		t.Errorf("live rows (-want +got):\n%s", diff)
	}
	// An hour later the sessions are no longer listed.
	w.Clock.Advance(overview.InstanceWindow + time.Minute)
	if b, err = w.pages.Bridge(ctx, alice); err != nil {
		t.Fatal(err)
	}
	for _, a := range b.Agents {
		if len(a.Instances) != 0 {
			t.Errorf("%s: sessions %v an hour after they were seen", a.Agent.Handle(), a.Instances)
		}
	}
	if bob := w.Person(t, "bob"); bob != nil {
		bb, err := w.pages.Bridge(ctx, bob)
		if err != nil {
			t.Fatal(err)
		}
		if len(bb.Activity) != 0 {
			t.Errorf("bob sees alice's agents: %v", rows(bb.Activity))
		}
	}
}
