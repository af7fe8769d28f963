package hub_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
)

// project makes a project of alice's with the planner and the reviewer in
// it to speak, and a thread "Plan" the planner started.
func (w *world) project(t *testing.T) (project, thread string) {
	t.Helper()
	alice := w.owner(t)
	p, err := w.hub.CreateProject(ctx, alice, "Launch", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{"planner", "reviewer"} {
		if _, err := w.hub.SetProjectAgent(ctx, alice, p.ID, slug, hub.AccessSpeak, false); err != nil {
			t.Fatal(err)
		}
	}
	v, err := w.hub.OpenThread(ctx, w.planner, p.ID, "Plan", "")
	if err != nil {
		t.Fatal(err)
	}
	return p.ID, v.Conversation.ID
}

// TestWithdrawnWhenAccessGoes: an agent taken out of a project while a
// message to it waits in a thread hears message.withdrawn, with no body,
// and the message leaves its inbox.
func TestWithdrawnWhenAccessGoes(t *testing.T) {
	w := newWorld(t)
	project, thread := w.project(t)
	sent := w.send(t, w.planner, thread, "please review the plan").Message
	start := w.latest(t, w.reviewer)
	if in, _ := w.hub.Inbox(ctx, w.reviewer, 0, ""); in.Total != 1 {
		t.Fatalf("the reviewer's inbox holds %d, want the message", in.Total)
	}
	removed, err := w.hub.RemoveProjectAgent(ctx, w.owner(t), project, "reviewer")
	if err != nil || removed.Handle() != "alice/reviewer" {
		t.Fatalf("removing the reviewer: %v, %v", removed, err)
	}
	r, err := w.hub.Wait(ctx, w.reviewer, hub.WaitInput{Cursor: start})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.Events {
		got = append(got, fmt.Sprintf("%s %s %s msg=%v", e.Type, e.ConversationID, e.Data, e.Message != nil))
	}
	want := []string{
		fmt.Sprintf(`message.withdrawn %s {"message_id":"%s"} msg=false`, thread, sent.ID),
		fmt.Sprintf(`project.agents  {"access":"off","change":"removed","name":"Launch","project_id":"%s"} msg=false`, project),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the reviewer heard (-want +got):\n%s", diff)
	}
	if in, _ := w.hub.Inbox(ctx, w.reviewer, 0, ""); in.Total != 0 {
		t.Fatalf("after the removal the reviewer's inbox holds %d, want none", in.Total)
	}
	if _, err := w.hub.ReadMessages(ctx, w.reviewer, hub.ReadInput{ConversationID: thread}); code(err) != "not_found" {
		t.Fatalf("reading the thread after the removal: %v, want not_found", err)
	}
	if _, err := w.hub.GetProject(ctx, w.reviewer, project); code(err) != "not_found" {
		t.Fatalf("get_project after the removal: %v, want not_found", err)
	}
}

// TestProjectAccessAndCap: the project's owner caps every agent at listen
// or off; an agent's owner sets review there, which holds its sends.
func TestProjectAccessAndCap(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	project, thread := w.project(t)
	listen, off, none := hub.AccessListen, hub.AccessOff, ""
	if _, err := w.hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{AgentCap: &listen}); err != nil {
		t.Fatal(err)
	}
	if word := sendAs(t, w, w.planner, thread, "capped", ""); word != "listen" {
		t.Fatalf("a send under the listen cap: %q, want listen", word)
	}
	if _, err := w.hub.OpenThread(ctx, w.planner, project, "Another", ""); code(err) != "denied:listen" {
		t.Fatalf("starting a thread under the listen cap: %v", err)
	}
	if _, err := w.hub.OpenThread(ctx, w.planner, project, "plan", ""); err != nil {
		t.Fatalf("opening an existing thread under the listen cap: %v", err)
	}
	if _, err := w.hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{AgentCap: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.GetProject(ctx, w.planner, project); code(err) != "denied:off" {
		t.Fatalf("get_project with agents off: %v, want denied off", err)
	}
	if _, err := w.hub.ReadMessages(ctx, w.planner, hub.ReadInput{ConversationID: thread}); code(err) != "not_found" {
		t.Fatalf("reading the thread with agents off: %v, want not_found", err)
	}
	ls, err := w.hub.ListProjects(ctx, w.planner)
	if err != nil || len(ls.Projects) != 2 || ls.Projects[1].Access != hub.AccessOff {
		t.Fatalf("list_projects with agents off: %+v, %v; want it listed as off", ls, err)
	}
	if _, err := w.hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{AgentCap: &none}); err != nil {
		t.Fatal(err)
	}
	if word := sendAs(t, w, w.planner, thread, "back", ""); word != "" {
		t.Fatalf("after lifting the cap: %q", word)
	}
	if _, err := w.hub.SetProjectAgent(ctx, alice, project, "planner", hub.AccessSpeak, true); err != nil {
		t.Fatal(err)
	}
	r, err := w.hub.SendMessage(ctx, w.planner, hub.SendInput{ConversationID: thread, Body: "reviewed here"})
	if err != nil || r.Message.Status != hub.MessageHeld {
		t.Fatalf("a send with review in the project: %+v, %v; want held", r, err)
	}
	conv := w.open(t, w.planner, "alice/reviewer")
	if r := w.send(t, w.planner, conv, "not reviewed outside it"); r.Message.Status != hub.MessageSent {
		t.Fatalf("a send outside the project: %s, want sent", r.Message.Status)
	}
}

// TestItemsKeepTheirHistory: every change of an item is recorded with who
// made it and from which session; listen may not change items.
func TestItemsKeepTheirHistory(t *testing.T) {
	w := newWorld(t)
	project, _ := w.project(t)
	it, err := w.hub.AddItem(ctx, w.planner, project, hub.ItemSpec{Title: "Write the docs", Kind: "task", Instance: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	doing, same := "doing", "Write the docs"
	if _, err := w.hub.UpdateItem(ctx, w.reviewer, project, it.Item.ID, hub.ItemEdit{Status: &doing, Title: &same, Instance: "laptop"}); err != nil {
		t.Fatal(err)
	}
	v, err := w.hub.ItemAsPerson(ctx, w.owner(t), project, it.Item.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range v.History {
		got = append(got, fmt.Sprintf("%s/%s %v", ch.ByHandle, ch.Instance, ch.Changes))
	}
	want := []string{"alice/planner/desk map[kind:task status:open title:Write the docs]", "alice/reviewer/laptop map[status:doing]"}
	if diff := cmp.Diff(want, got); diff != "" || v.Item.Status != "doing" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	wrong := "finished"
	for name, f := range map[string]func() error{
		"an unknown kind": func() error {
			_, err := w.hub.AddItem(ctx, w.planner, project, hub.ItemSpec{Title: "x", Kind: "idea"})
			return err
		},
		"a url that is not http": func() error {
			_, err := w.hub.AddItem(ctx, w.planner, project, hub.ItemSpec{Title: "x", URL: "javascript:alert(1)"})
			return err
		},
		"an unknown status": func() error {
			_, err := w.hub.UpdateItem(ctx, w.planner, project, it.Item.ID, hub.ItemEdit{Status: &wrong})
			return err
		},
		"an item of another project": func() error {
			_, err := w.hub.UpdateItem(ctx, w.planner, project, "item_00000000000000000000000000", hub.ItemEdit{Status: &doing})
			return err
		},
	} {
		want := "invalid_argument"
		if name == "an item of another project" {
			want = "not_found"
		}
		if err := f(); code(err) != want {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
	if _, err := w.hub.SetProjectAgent(ctx, w.owner(t), project, "reviewer", hub.AccessListen, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.UpdateItem(ctx, w.reviewer, project, it.Item.ID, hub.ItemEdit{Status: &doing}); code(err) != "denied:listen" {
		t.Fatalf("a listening agent changing an item: %v", err)
	}
	th, err := w.hub.OpenThread(ctx, w.planner, project, "", it.Item.ID)
	if err != nil || th.Conversation.ItemID != it.Item.ID || th.Conversation.Title != "Write the docs" {
		t.Fatalf("the item's thread: %+v, %v", th, err)
	}
	if again, _ := w.hub.OpenThread(ctx, w.reviewer, project, "", it.Item.ID); again.Conversation.ID != th.Conversation.ID {
		t.Fatalf("the item's thread again: %s, want %s", again.Conversation.ID, th.Conversation.ID)
	}
}

// TestHomeProject: every agent of an owner is in the home project with
// speak, agents made later too; whoami names it, and the self refusal
// names the exact open_thread call.
func TestHomeProject(t *testing.T) {
	w := newWorld(t)
	me, err := w.hub.Whoami(ctx, w.planner, "", "")
	if err != nil || me.Home.Project == nil || !me.Home.Project.Home || me.Home.Access != hub.AccessSpeak {
		t.Fatalf("whoami's home: %+v, %v", me.Home, err)
	}
	later := w.agent(t, "alice/later")
	if ls, _ := w.hub.ListProjects(ctx, later); len(ls.Projects) != 1 || ls.Projects[0].Project.ID != me.Home.Project.ID {
		t.Fatalf("an agent made later: %+v, want it in the home project", ls)
	}
	if other, _ := w.hub.Whoami(ctx, w.helper, "", ""); other.Home.Project.ID == me.Home.Project.ID {
		t.Fatalf("bob's home is alice's")
	}
	if _, err := w.hub.GetProject(ctx, w.helper, me.Home.Project.ID); code(err) != "not_found" {
		t.Fatalf("bob's agent reading alice's home project: %v, want not_found", err)
	}
	_, err = w.hub.OpenConversation(ctx, w.planner, []string{"alice/planner"})
	var r *hub.Refusal
	if code(err) != "denied:self" || !errors.As(err, &r) || !strings.Contains(r.Reason, fmt.Sprintf("project_id %q", me.Home.Project.ID)) {
		t.Fatalf("messaging itself: %v, want denied self naming the home project", err)
	}
	archive := true
	if _, err := w.hub.UpdateProject(ctx, w.owner(t), me.Home.Project.ID, hub.ProjectUpdate{Archived: &archive}); code(err) != "invalid_argument" {
		t.Fatalf("archiving the home project: %v", err)
	}
}

// TestProjectRequests: a proposal and an access request are decided by the
// agent's owner through Decide, each once; the agent hears the answer.
func TestProjectRequests(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	p, err := w.hub.CreateProject(ctx, alice, "Docs", "")
	if err != nil {
		t.Fatal(err)
	}
	ls, err := w.hub.ListProjects(ctx, w.planner)
	if err != nil || len(ls.NotJoined) != 1 || ls.NotJoined[0].ID != p.ID {
		t.Fatalf("not_joined: %+v, %v", ls, err)
	}
	if _, err := w.hub.RequestProjectAccess(ctx, w.helper, p.ID, "let me in"); code(err) != "not_found" {
		t.Fatalf("bob's agent asking into alice's project: %v, want not_found", err)
	}
	req, err := w.hub.RequestProjectAccess(ctx, w.planner, p.ID, "to write the docs")
	if err != nil || req.Status != hub.RequestPending {
		t.Fatalf("access request: %+v, %v", req, err)
	}
	if _, err := w.hub.Decide(ctx, w.person(t, "bob"), req.ID, hub.Verdict{Action: hub.VerdictApprove}); code(err) != "not_found" {
		t.Fatalf("bob deciding alice's agent's request: %v", err)
	}
	d, err := w.hub.Decide(ctx, alice, req.ID, hub.Verdict{Action: hub.VerdictApprove})
	if err != nil || d.Kind != hub.ApprovalProjectAccess || d.Project.Status != hub.RequestApproved {
		t.Fatalf("approving the access request: %+v, %v", d, err)
	}
	if _, err := w.hub.Decide(ctx, alice, req.ID, hub.Verdict{Action: hub.VerdictReject}); code(err) != "conflict" {
		t.Fatalf("rejecting it after approving: %v, want conflict", err)
	}
	if g, err := w.hub.GetProject(ctx, w.planner, p.ID); err != nil || g.Access != hub.AccessSpeak {
		t.Fatalf("the planner in the project: %+v, %v", g, err)
	}
	if _, err := w.hub.RequestProjectAccess(ctx, w.planner, p.ID, ""); code(err) != "invalid_argument" {
		t.Fatalf("asking into a project it is in: %v", err)
	}
	prop, err := w.hub.ProposeProject(ctx, w.reviewer, "Website", "the new site", "it needs a home", "")
	if err != nil {
		t.Fatal(err)
	}
	if d, err = w.hub.Decide(ctx, alice, prop.ID, hub.Verdict{Action: hub.VerdictReject}); err != nil || d.Kind != hub.ApprovalProjectProposal || d.Project.Status != hub.RequestRejected {
		t.Fatalf("rejecting the proposal: %+v, %v", d, err)
	}
	if ls, _ := w.hub.ListProjects(ctx, w.reviewer); len(ls.Projects)+len(ls.NotJoined) != 2 {
		t.Fatalf("after a rejected proposal the reviewer sees %+v; want only home and Docs", ls)
	}
}

// TestApprovingNeedsTheSenderStillAllowed: a message held in a project
// thread is let go only while its agent could send it now; once the agent
// is out of the project, or capped at listen, approving is refused and
// rejecting still works.
func TestApprovingNeedsTheSenderStillAllowed(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	project, thread := w.project(t)
	if _, err := w.hub.SetProjectAgent(ctx, alice, project, "reviewer", hub.AccessSpeak, true); err != nil {
		t.Fatal(err)
	}
	held := func(body string) string {
		t.Helper()
		r, err := w.hub.SendMessage(ctx, w.reviewer, hub.SendInput{ConversationID: thread, Body: body})
		if err != nil || r.Message.Status != hub.MessageHeld {
			t.Fatalf("a send under review: %+v, %v", r, err)
		}
		return r.Message.ID
	}
	capped := held("under the cap")
	listen := hub.AccessListen
	if _, err := w.hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{AgentCap: &listen}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.DecideHeld(ctx, alice, capped, hub.Decision{Approve: true}); code(err) != "sender_may_not_send" {
		t.Fatalf("approving under the listen cap: %v, want sender_may_not_send", err)
	}
	none := ""
	if _, err := w.hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{AgentCap: &none}); err != nil {
		t.Fatal(err)
	}
	removed := held("before the removal")
	if _, err := w.hub.RemoveProjectAgent(ctx, alice, project, "reviewer"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.DecideHeld(ctx, alice, removed, hub.Decision{Approve: true}); code(err) != "sender_may_not_send" {
		t.Fatalf("approving after the agent left: %v, want sender_may_not_send", err)
	}
	if m, err := w.hub.DecideHeld(ctx, alice, removed, hub.Decision{}); err != nil || m.Status != hub.MessageRejected {
		t.Fatalf("rejecting it: %+v, %v", m, err)
	}
	if _, _, err := w.hub.PersonMessages(ctx, alice, thread, 0, 0); err != nil {
		t.Fatalf("the owner reading the thread: %v", err)
	}
	archive := true
	if _, err := w.hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{Archived: &archive}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.hub.PersonMessages(ctx, alice, thread, 0, 0); code(err) != "not_found" {
		t.Fatalf("reading a thread of an archived project: %v, want not_found", err)
	}
	if _, err := w.hub.PostAsPerson(ctx, alice, thread, "still here?", ""); code(err) != "not_found" {
		t.Fatalf("posting into a thread of an archived project: %v, want not_found", err)
	}
}

// TestThreadsFollowTheProjectUnderConcurrency: threads started while an
// agent is taken out of the project never keep it, and sends racing the
// removal leave nothing in its inbox (on PostgreSQL the transactions run
// side by side; the project's and threads' row locks make them take turns).
func TestThreadsFollowTheProjectUnderConcurrency(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	for round := range 5 {
		project, thread := w.project(t)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 5 {
					w.hub.OpenThread(ctx, w.planner, project, fmt.Sprintf("round %d thread %d-%d", round, g, i), "")
					w.hub.SendMessage(ctx, w.planner, hub.SendInput{ConversationID: thread, Body: fmt.Sprintf("race %d %d %d", round, g, i)})
				}
			})
		}
		if _, err := w.hub.RemoveProjectAgent(ctx, alice, project, "reviewer"); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		page, err := w.hub.ListConversations(ctx, w.reviewer, "", hub.ConversationsPage.Max)
		if err != nil {
			t.Fatal(err)
		}
		ls := page.Conversations
		for _, l := range ls {
			if l.Conversation.ProjectID == project {
				t.Fatalf("round %d: the removed reviewer is still in thread %q", round, l.Conversation.Title)
			}
		}
		if in, _ := w.hub.Inbox(ctx, w.reviewer, 0, ""); in.Total != 0 {
			t.Fatalf("round %d: the removed reviewer's inbox holds %d", round, in.Total)
		}
	}
}

// TestAddItemAsPerson: a member adds an item as agents do — its kind,
// title, note and url checked alike, open, its history recorded with the
// person; a bad kind or url adds nothing; someone not in the project gets
// not_found.
func TestAddItemAsPerson(t *testing.T) {
	w := newWorld(t)
	project, _ := w.project(t)
	alice := w.owner(t)
	v, err := w.hub.AddItemAsPerson(ctx, alice, project, hub.ItemSpec{Kind: "link", Title: " Ship on Friday ", Note: "after the notes", URL: "https://example.com/plan"})
	if err != nil {
		t.Fatal(err)
	}
	it := v.Item
	if it.Kind != "link" || it.Status != "open" || it.Title != "Ship on Friday" || it.Note != "after the notes" || it.URL != "https://example.com/plan" {
		t.Errorf("the item: %+v", it)
	}
	if len(v.History) != 1 || v.History[0].ByHandle != "alice" || v.History[0].Changes["title"] != "Ship on Friday" {
		t.Errorf("its history: %+v", v.History)
	}
	for _, s := range []hub.ItemSpec{{Kind: "wish", Title: "x"}, {Title: "x", URL: "ftp://example.com"}, {Title: ""}} {
		if _, err := w.hub.AddItemAsPerson(ctx, alice, project, s); code(err) != "invalid_argument" {
			t.Errorf("adding %+v: %v, want invalid_argument", s, err)
		}
	}
	if _, err := w.hub.AddItemAsPerson(ctx, w.person(t, "bob"), project, hub.ItemSpec{Title: "x"}); code(err) != "not_found" {
		t.Errorf("bob adding: %v, want not_found", err)
	}
	b, _ := w.board(alice, project)
	if n := len(b.Columns[0].Items); n != 1 {
		t.Errorf("the board's open column holds %d items, want 1", n)
	}
}
