package hub_test

import (
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestDecideDispatchesOnTheIdsKind: one entry point decides every kind of
// approval (§9), takes only the verdicts each kind has, and answers an id
// that names nothing waiting — another owner's included — with not_found.
func TestDecideDispatchesOnTheIdsKind(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.owner(t), w.person(t, "bob")
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	if _, err := w.Hub.SetAgentMode(ctx, "alice/planner", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	planner, _ := w.Hub.Authenticate(ctx, w.Tokens["alice/planner"])
	held := w.Send(t, planner, conv, "draft words").Message
	q, err := w.Hub.AskOwner(ctx, w.Reviewer, "Ship today?", "", "", []string{"yes", "no"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.reach.RequestContact(ctx, alice, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideContact(ctx, bob, "alice", true); err != nil {
		t.Fatal(err)
	}
	gr, err := w.Hub.RequestGrant(ctx, w.Reviewer, "bob", true, false, "to ask bob about the release")
	if err != nil {
		t.Fatal(err)
	}

	refusals := []struct {
		name string
		user *hub.User
		id   string
		v    hub.Verdict
		want string
	}{
		{"no such kind", alice, "zz_1", hub.Verdict{Action: hub.VerdictApprove}, "not_found"},
		{"no such message", alice, "msg_00000000000000000000000000", hub.Verdict{Action: hub.VerdictApprove}, "not_found"},
		{"another owner's held message", bob, held.ID, hub.Verdict{Action: hub.VerdictApprove}, "not_found"},
		{"another owner's question", bob, q.ID, hub.Verdict{Action: hub.VerdictAnswer, Answer: "yes"}, "not_found"},
		{"an unknown verdict", alice, held.ID, hub.Verdict{Action: "maybe"}, "invalid_argument"},
		{"rejecting a question", alice, q.ID, hub.Verdict{Action: hub.VerdictReject}, "invalid_argument"},
		{"answering a held message", alice, held.ID, hub.Verdict{Action: hub.VerdictAnswer, Answer: "yes"}, "invalid_argument"},
		{"editing a grant request", alice, gr.ID, hub.Verdict{Action: hub.VerdictApprove, Body: "more"}, "invalid_argument"},
		{"rejecting with new words", alice, held.ID, hub.Verdict{Action: hub.VerdictReject, Body: "other words"}, "invalid_argument"},
		{"approving with an answer", alice, gr.ID, hub.Verdict{Action: hub.VerdictApprove, Answer: "yes"}, "invalid_argument"},
		{"an answer not among the options", alice, q.ID, hub.Verdict{Action: hub.VerdictAnswer, Answer: "tomorrow"}, "invalid_argument"},
	}
	for _, tc := range refusals {
		if _, err := w.Hub.Decide(ctx, tc.user, tc.id, tc.v); code(err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
	if left, _ := w.Hub.Approvals(ctx, alice); len(left) != 3 {
		t.Fatalf("after the refusals alice has %d approvals, want all 3 still waiting", len(left))
	}

	d, err := w.Hub.Decide(ctx, alice, held.ID, hub.Verdict{Action: hub.VerdictApprove, Body: "better words"})
	if err != nil || d.Kind != hub.ApprovalHeldMessage || d.Message.Authority != hub.AuthorityEdited || d.Message.Seq != 1 {
		t.Fatalf("approving the held message edited: %+v, %v", d, err)
	}
	if d, err = w.Hub.Decide(ctx, alice, q.ID, hub.Verdict{Action: hub.VerdictAnswer, Answer: "YES"}); err != nil || d.Question.Answer != "yes" {
		t.Fatalf("answering: %+v, %v", d, err)
	}
	if d, err = w.Hub.Decide(ctx, alice, gr.ID, hub.Verdict{Action: hub.VerdictReject}); err != nil || d.Grant.Status != "rejected" {
		t.Fatalf("rejecting the grant request: %+v, %v", d, err)
	}
	if left, _ := w.Hub.Approvals(ctx, alice); len(left) != 0 {
		t.Fatalf("after deciding, alice has %+v waiting", left)
	}
}
