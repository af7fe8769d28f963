package reach_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/reach"
)

// TestAgentContactRequestGoesToItsOwner: an agent's contact request is a
// request to its own owner (§10.5): approved at once for whom it may reach
// already, a grant request for the owner otherwise — allow_human for a
// person, allow_agents for an agent — decided under Approvals.
func TestAgentContactRequestGoesToItsOwner(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")

	for _, handle := range []string{"alice", "@alice/reviewer"} {
		got, err := w.reach.AgentContactRequest(ctx, w.Planner, handle, "")
		want := &reach.AgentContact{Handle: strings.TrimPrefix(handle, "@"), Status: "approved", Reason: "you may reach " + strings.TrimPrefix(handle, "@") + " already"}
		if diff := cmp.Diff(want, got); err != nil || diff != "" {
			t.Errorf("the planner asking for %s: %v (-want +got):\n%s", handle, err, diff)
		}
	}
	if _, err := w.reach.AgentContactRequest(ctx, w.Planner, "alice/planner", ""); code(err) != "invalid_argument" {
		t.Errorf("asking for itself: %v, want invalid_argument", err)
	}
	if _, err := w.reach.AgentContactRequest(ctx, w.Planner, "nobody", ""); code(err) != "not_found" {
		t.Errorf("asking for an unknown handle: %v, want not_found", err)
	}
	if _, err := w.reach.AgentContactRequest(ctx, w.Planner, "bob", strings.Repeat("x", hub.MaxContactMessage+1)); code(err) != "too_long" {
		t.Errorf("a message over 500: %v, want too_long", err)
	}

	start, _ := w.Hub.LatestCursor(ctx, alice.ID)
	got, err := w.reach.AgentContactRequest(ctx, w.Planner, "@bob", "to plan the release with bob")
	if err != nil || got.Status != "pending" || !strings.HasPrefix(got.RequestID, "gr_") || got.Handle != "bob" {
		t.Fatalf("the planner asking for bob: %+v, %v", got, err)
	}
	if !strings.Contains(got.Reason, "alice decides this under Approvals") || !strings.Contains(got.Reason, "alice and bob are not contacts yet") {
		t.Errorf("the reason: %q", got.Reason)
	}
	r, _ := w.Hub.WaitPerson(ctx, alice, start, 0)
	if len(r.Events) != 1 || r.Events[0].Type != hub.EventGrantRequest {
		t.Errorf("alice heard %+v, want one grant.request", r.Events)
	}
	if again, err := w.reach.AgentContactRequest(ctx, w.Planner, "bob", "once more"); err != nil || again.RequestID != got.RequestID {
		t.Errorf("asking again while it waits: %+v, %v; want the same request %s", again, err, got.RequestID)
	}
	w.Clock.Advance(time.Second) // listed oldest first
	toAgents, err := w.reach.AgentContactRequest(ctx, w.Planner, "bob/helper", "")
	if err != nil || toAgents.Status != "pending" || toAgents.RequestID == got.RequestID {
		t.Fatalf("the planner asking for bob/helper: %+v, %v; want a second request", toAgents, err)
	}
	approvals, err := w.Hub.Approvals(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	for _, a := range approvals {
		asked = append(asked, a.Kind+" "+a.ID+" "+a.Contact+" "+a.Grant.Reason)
		if a.Grant.AllowHuman == a.Grant.AllowAgents || a.Grant.AllowHuman != (a.ID == got.RequestID) {
			t.Errorf("%s asks allow_human %v, allow_agents %v", a.ID, a.Grant.AllowHuman, a.Grant.AllowAgents)
		}
	}
	if diff := cmp.Diff([]string{
		"grant_request " + got.RequestID + " bob to plan the release with bob",
		"grant_request " + toAgents.RequestID + " bob alice/planner asks to be in contact with bob/helper",
	}, asked); diff != "" {
		t.Errorf("alice's approvals (-want +got):\n%s", diff)
	}

	// The owner decides as today; with the contact and bob letting the
	// planner in, bob's helper is within reach.
	if _, err := w.Hub.Decide(ctx, alice, toAgents.RequestID, hub.Verdict{Action: hub.VerdictApprove}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.Decide(ctx, alice, got.RequestID, hub.Verdict{Action: hub.VerdictReject}); err != nil {
		t.Fatal(err)
	}
	w.reach.RequestContact(ctx, alice, "bob", "")
	w.reach.RequestContact(ctx, bob, "alice", "")
	if p, err := w.reach.AgentContactRequest(ctx, w.Planner, "bob/helper", ""); err != nil || p.Status != "pending" || p.RequestID != "" ||
		!strings.Contains(p.Reason, "bob has not let you in yet") {
		t.Errorf("granted but not let in: %+v, %v; want pending with no request", p, err)
	}
	if _, err := w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/helper"}); code(err) != "pending_approval:pending_approval" {
		t.Fatalf("open: %v", err)
	}
	asks, _ := w.Hub.Approvals(ctx, bob)
	if _, err := w.Hub.DecideInbound(ctx, bob, asks[0].ID, true); err != nil {
		t.Fatal(err)
	}
	if ok, err := w.reach.AgentContactRequest(ctx, w.Planner, "bob/helper", ""); err != nil || ok.Status != "approved" || ok.RequestID != "" {
		t.Errorf("once let in: %+v, %v; want approved", ok, err)
	}
	// bob's helper may answer the planner, so it is approved for it too.
	if ok, err := w.reach.AgentContactRequest(ctx, w.Helper, "alice/planner", ""); err != nil || ok.Status != "approved" {
		t.Errorf("the helper asking for the planner that reaches it: %+v, %v; want approved", ok, err)
	}
	if _, err := w.Hub.DecideInbound(ctx, bob, asks[0].ID, false); err != nil {
		t.Fatal(err)
	}
	if no, err := w.reach.AgentContactRequest(ctx, w.Planner, "bob/helper", ""); err != nil || no.Status != "rejected" || no.RequestID != "" {
		t.Errorf("once bob declined: %+v, %v; want rejected", no, err)
	}

	// Listed by status, in the rooms profile's words.
	list := func(status string) string {
		t.Helper()
		rs, err := w.reach.AgentContactRequests(ctx, w.Planner, status)
		if err != nil {
			t.Fatalf("%q: %v", status, err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.ID+" "+r.ContactHandle+" "+r.Status)
		}
		return strings.Join(out, "; ")
	}
	for status, want := range map[string]string{
		"":         got.RequestID + " bob rejected; " + toAgents.RequestID + " bob approved",
		"all":      got.RequestID + " bob rejected; " + toAgents.RequestID + " bob approved",
		"approved": toAgents.RequestID + " bob approved",
		"rejected": got.RequestID + " bob rejected",
		"pending":  "",
	} {
		if got := list(status); got != want {
			t.Errorf("status %q: %q, want %q", status, got, want)
		}
	}
	if _, err := w.reach.AgentContactRequests(ctx, w.Planner, "accepted"); code(err) != "invalid_argument" ||
		!strings.Contains(err.Error(), "pending, approved, rejected, cancelled or all") {
		t.Errorf("an unknown status: %v", err)
	}
	if other := list(""); other == "" {
		t.Fatal("the planner has no requests")
	}
	if rs, _ := w.reach.AgentContactRequests(ctx, w.Reviewer, ""); len(rs) != 0 {
		t.Errorf("the reviewer lists its sibling's requests: %+v", rs)
	}
}

// TestCancelledAgentContactRequestLeavesApprovals: an agent withdraws its
// own pending request, by id or by handle; it leaves its owner's Approvals
// at once (the owner hears approval.decided), cannot be decided after,
// and another agent's request is not_found like an unknown one.
func TestCancelledAgentContactRequestLeavesApprovals(t *testing.T) {
	w := newWorld(t)
	alice := w.Person(t, "alice")
	first, err := w.reach.AgentContactRequest(ctx, w.Planner, "bob", "")
	if err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(time.Second)
	second, err := w.reach.AgentContactRequest(ctx, w.Planner, "bob/helper", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		c         *hub.Caller
		id, hdl   string
		code, msg string
	}{
		{"neither", w.Planner, "", "", "invalid_argument", "give the request's id"},
		{"a sibling's request", w.Reviewer, first.RequestID, "", "not_found", "alice/reviewer has no contact request"},
		{"an unknown id", w.Planner, "gr_00000000000000000000000000", "", "not_found", "alice/planner has no contact request"},
		{"a handle with none", w.Reviewer, "", "bob", "not_found", "no pending contact request about"},
		{"a bad handle", w.Planner, "", "b", "invalid_argument", "is not a handle"},
	} {
		_, err := w.reach.CancelAgentContactRequest(ctx, tc.c, tc.id, tc.hdl)
		if code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %s saying %q", tc.name, err, tc.code, tc.msg)
		}
	}

	start, _ := w.Hub.LatestCursor(ctx, alice.ID)
	r, err := w.reach.CancelAgentContactRequest(ctx, w.Planner, first.RequestID, "bob/helper")
	if err != nil || r.ID != first.RequestID || r.Status != hub.GrantCancelled {
		t.Fatalf("cancelling by id: %+v, %v", r, err)
	}
	approvals, _ := w.Hub.Approvals(ctx, alice)
	if len(approvals) != 1 || approvals[0].ID != second.RequestID {
		t.Fatalf("alice's approvals after the cancel: %+v; want only %s", approvals, second.RequestID)
	}
	ev, _ := w.Hub.WaitPerson(ctx, alice, start, 0)
	if len(ev.Events) != 1 || ev.Events[0].Type != hub.EventApprovalDecided || !strings.Contains(string(ev.Events[0].Data), `"decision":"cancelled"`) {
		t.Errorf("alice heard %+v, want approval.decided cancelled", ev.Events)
	}
	for _, action := range []string{hub.VerdictApprove, hub.VerdictReject} {
		if _, err := w.Hub.Decide(ctx, alice, first.RequestID, hub.Verdict{Action: action}); code(err) != "conflict" || !strings.Contains(err.Error(), "withdrawn") {
			t.Errorf("alice deciding (%s) the cancelled request: %v, want conflict", action, err)
		}
	}
	if again, err := w.reach.CancelAgentContactRequest(ctx, w.Planner, first.RequestID, ""); err != nil || again.Status != hub.GrantCancelled {
		t.Errorf("cancelling again: %+v, %v; want it as it is", again, err)
	}

	// By handle: the request about bob's agents.
	if r, err := w.reach.CancelAgentContactRequest(ctx, w.Planner, "", "@bob/helper"); err != nil || r.ID != second.RequestID || r.Status != hub.GrantCancelled {
		t.Fatalf("cancelling by handle: %+v, %v", r, err)
	}
	if a, _ := w.Hub.Approvals(ctx, alice); len(a) != 0 {
		t.Errorf("alice's approvals: %+v, want none", a)
	}
	if rs, _ := w.reach.AgentContactRequests(ctx, w.Planner, "cancelled"); len(rs) != 2 {
		t.Errorf("the planner's cancelled requests: %+v, want both", rs)
	}
	if p, _ := w.Hub.Whoami(ctx, w.Planner, "", ""); len(p.PendingGrants) != 0 {
		t.Errorf("whoami's pending grants: %+v", p.PendingGrants)
	}

	// A decided request is the owner's to change.
	third, _ := w.reach.AgentContactRequest(ctx, w.Planner, "bob", "")
	if _, err := w.Hub.Decide(ctx, alice, third.RequestID, hub.Verdict{Action: hub.VerdictApprove}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.reach.CancelAgentContactRequest(ctx, w.Planner, third.RequestID, ""); code(err) != "conflict" || !strings.Contains(err.Error(), "alice already approved this request") {
		t.Errorf("cancelling an approved request: %v, want conflict", err)
	}
}

// TestAgentsDoNotDecideContacts: an agent cannot approve or reject a
// contact request, and the refusal names its owner and where they decide;
// ending a contact asks its owner, pending under Approvals (§10.5).
func TestAgentsDoNotDecideContacts(t *testing.T) {
	w := newWorld(t)
	way := func(a hub.Action) string {
		if a.Name == hub.ActionListApprovals && a.Args["user"] == "alice" {
			return "under Approvals"
		}
		return ""
	}
	e := hub.AsError(w.reach.AgentDecideContact(ctx, w.Planner))
	if want := "contact requests are your owner @alice's to approve or reject; an agent cannot; they decide them under Approvals"; e.Kind != hub.KindForbidden || e.Text(nil, way) != want {
		t.Errorf("deciding: %v %q, want forbidden %q", e.Kind, e.Text(nil, way), want)
	}

	bob := w.Person(t, "bob")
	if _, _, err := w.reach.AgentRemoveContact(ctx, w.Helper, "", "alice/planner"); code(err) != "not_found" {
		t.Errorf("an agent not reached: %v, want not_found", err)
	}
	w.Consent(t, w.Helper, w.Person(t, "alice"), "alice/planner")
	q, p, err := w.reach.AgentRemoveContact(ctx, w.Helper, "", "@alice/planner")
	if err != nil || p.Handle != "alice/planner" || q.AgentID != w.Helper.Agent.ID || q.OwnerID != bob.ID || !strings.Contains(q.Question, "end its reach to alice/planner") {
		t.Fatalf("asking to end the contact: %+v %+v, %v", q, p, err)
	}
	as, _ := w.Hub.Approvals(ctx, bob)
	if len(as) != 1 || as[0].Question == nil || as[0].Question.ID != q.ID {
		t.Errorf("bob's approvals: %+v, want the ask", as)
	}
	if _, _, err := w.reach.AgentRemoveContact(ctx, w.Planner, "", "alice/reviewer"); code(err) != "invalid_argument" {
		t.Errorf("a sibling: %v, want invalid_argument (no contact to end)", err)
	}
	if _, _, err := w.reach.AgentRemoveContact(ctx, w.Planner, "", ""); code(err) != "invalid_argument" {
		t.Errorf("neither id nor handle: %v, want invalid_argument", err)
	}
}
