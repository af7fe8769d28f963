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

// TestWithdrawnWhenAccessGoes: an agent taken out of a project while a
// message to it waits in a thread hears message.withdrawn, with no body,
// and the message leaves its inbox.
func TestWithdrawnWhenAccessGoes(t *testing.T) {
	w := newWorld(t)
	project, thread := w.Project(t)
	sent := w.Send(t, w.Planner, thread, "please review the plan").Message
	start := w.Latest(t, w.Reviewer)
	if in, _ := w.Hub.Inbox(ctx, w.Reviewer, 0, ""); in.Total != 1 {
		t.Fatalf("the reviewer's inbox holds %d, want the message", in.Total)
	}
	removed, err := w.Hub.RemoveProjectAgent(ctx, w.owner(t), project, "reviewer")
	if err != nil || removed.Handle() != "alice/reviewer" {
		t.Fatalf("removing the reviewer: %v, %v", removed, err)
	}
	r, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: start})
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
	if in, _ := w.Hub.Inbox(ctx, w.Reviewer, 0, ""); in.Total != 0 {
		t.Fatalf("after the removal the reviewer's inbox holds %d, want none", in.Total)
	}
	if _, err := w.Hub.ReadMessages(ctx, w.Reviewer, hub.ReadInput{ConversationID: thread}); code(err) != "not_found" {
		t.Fatalf("reading the thread after the removal: %v, want not_found", err)
	}
	if _, err := w.Hub.GetProject(ctx, w.Reviewer, project); code(err) != "not_found" {
		t.Fatalf("get_project after the removal: %v, want not_found", err)
	}
}

// TestProjectAccessAndCap: the project's owner caps every agent at listen
// or off; an agent's owner sets review there, which holds its sends.
func TestProjectAccessAndCap(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	project, thread := w.Project(t)
	listen, off, none := hub.AccessListen, hub.AccessOff, ""
	if _, err := w.Hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{AgentCap: &listen}); err != nil {
		t.Fatal(err)
	}
	if word := w.SendAs(t, w.Planner, thread, "capped", ""); word != "listen" {
		t.Fatalf("a send under the listen cap: %q, want listen", word)
	}
	if _, err := w.Hub.OpenThread(ctx, w.Planner, project, "Another", ""); code(err) != "denied:listen" {
		t.Fatalf("starting a thread under the listen cap: %v", err)
	}
	if _, err := w.Hub.OpenThread(ctx, w.Planner, project, "plan", ""); err != nil {
		t.Fatalf("opening an existing thread under the listen cap: %v", err)
	}
	if _, err := w.Hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{AgentCap: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.GetProject(ctx, w.Planner, project); code(err) != "denied:off" {
		t.Fatalf("get_project with agents off: %v, want denied off", err)
	}
	if _, err := w.Hub.ReadMessages(ctx, w.Planner, hub.ReadInput{ConversationID: thread}); code(err) != "not_found" {
		t.Fatalf("reading the thread with agents off: %v, want not_found", err)
	}
	ls, err := w.projects.ListProjects(ctx, w.Planner)
	if err != nil || len(ls.Projects) != 2 || ls.Projects[1].Access != hub.AccessOff {
		t.Fatalf("list_projects with agents off: %+v, %v; want it listed as off", ls, err)
	}
	if _, err := w.Hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{AgentCap: &none}); err != nil {
		t.Fatal(err)
	}
	if word := w.SendAs(t, w.Planner, thread, "back", ""); word != "" {
		t.Fatalf("after lifting the cap: %q", word)
	}
	if _, err := w.Hub.SetProjectAgent(ctx, alice, project, "planner", hub.AccessSpeak, true); err != nil {
		t.Fatal(err)
	}
	r, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: thread, Body: "reviewed here"})
	if err != nil || r.Message.Status != hub.MessageHeld {
		t.Fatalf("a send with review in the project: %+v, %v; want held", r, err)
	}
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	if r := w.Send(t, w.Planner, conv, "not reviewed outside it"); r.Message.Status != hub.MessageSent {
		t.Fatalf("a send outside the project: %s, want sent", r.Message.Status)
	}
}

// TestHomeProject: every agent of an owner is in the home project with
// speak, agents made later too; whoami names it, and the self refusal
// names the exact open_thread call.
func TestHomeProject(t *testing.T) {
	w := newWorld(t)
	me, err := w.Hub.Whoami(ctx, w.Planner, "", "")
	if err != nil || me.Home.Project == nil || !me.Home.Project.Home || me.Home.Access != hub.AccessSpeak {
		t.Fatalf("whoami's home: %+v, %v", me.Home, err)
	}
	later := w.Agent(t, "alice/later")
	if ls, _ := w.projects.ListProjects(ctx, later); len(ls.Projects) != 1 || ls.Projects[0].Project.ID != me.Home.Project.ID {
		t.Fatalf("an agent made later: %+v, want it in the home project", ls)
	}
	if other, _ := w.Hub.Whoami(ctx, w.Helper, "", ""); other.Home.Project.ID == me.Home.Project.ID {
		t.Fatalf("bob's home is alice's")
	}
	if _, err := w.Hub.GetProject(ctx, w.Helper, me.Home.Project.ID); code(err) != "not_found" {
		t.Fatalf("bob's agent reading alice's home project: %v, want not_found", err)
	}
	_, err = w.Hub.OpenConversation(ctx, w.Planner, []string{"alice/planner"})
	var r *hub.Refusal
	if code(err) != "denied:self" || !errors.As(err, &r) || !strings.Contains(r.Reason, fmt.Sprintf("project_id %q", me.Home.Project.ID)) {
		t.Fatalf("messaging itself: %v, want denied self naming the home project", err)
	}
	archive := true
	if _, err := w.Hub.UpdateProject(ctx, w.owner(t), me.Home.Project.ID, hub.ProjectUpdate{Archived: &archive}); code(err) != "invalid_argument" {
		t.Fatalf("archiving the home project: %v", err)
	}
}

// TestApprovingNeedsTheSenderStillAllowed: a message held in a project
// thread is let go only while its agent could send it now; once the agent
// is out of the project, or capped at listen, approving is refused and
// rejecting still works.
func TestApprovingNeedsTheSenderStillAllowed(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	project, thread := w.Project(t)
	if _, err := w.Hub.SetProjectAgent(ctx, alice, project, "reviewer", hub.AccessSpeak, true); err != nil {
		t.Fatal(err)
	}
	held := func(body string) string {
		t.Helper()
		r, err := w.Hub.SendMessage(ctx, w.Reviewer, hub.SendInput{ConversationID: thread, Body: body})
		if err != nil || r.Message.Status != hub.MessageHeld {
			t.Fatalf("a send under review: %+v, %v", r, err)
		}
		return r.Message.ID
	}
	capped := held("under the cap")
	listen := hub.AccessListen
	if _, err := w.Hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{AgentCap: &listen}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideHeld(ctx, alice, capped, hub.Decision{Approve: true}); code(err) != "sender_may_not_send" {
		t.Fatalf("approving under the listen cap: %v, want sender_may_not_send", err)
	}
	none := ""
	if _, err := w.Hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{AgentCap: &none}); err != nil {
		t.Fatal(err)
	}
	removed := held("before the removal")
	if _, err := w.Hub.RemoveProjectAgent(ctx, alice, project, "reviewer"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideHeld(ctx, alice, removed, hub.Decision{Approve: true}); code(err) != "sender_may_not_send" {
		t.Fatalf("approving after the agent left: %v, want sender_may_not_send", err)
	}
	if m, err := w.Hub.DecideHeld(ctx, alice, removed, hub.Decision{}); err != nil || m.Status != hub.MessageRejected {
		t.Fatalf("rejecting it: %+v, %v", m, err)
	}
	if _, _, err := w.Hub.PersonMessages(ctx, alice, thread, 0, 0); err != nil {
		t.Fatalf("the owner reading the thread: %v", err)
	}
	archive := true
	if _, err := w.Hub.UpdateProject(ctx, alice, project, hub.ProjectUpdate{Archived: &archive}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Hub.PersonMessages(ctx, alice, thread, 0, 0); code(err) != "not_found" {
		t.Fatalf("reading a thread of an archived project: %v, want not_found", err)
	}
	if _, err := w.Hub.PostAsPerson(ctx, alice, thread, "still here?", ""); code(err) != "not_found" {
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
		project, thread := w.Project(t)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 5 {
					w.Hub.OpenThread(ctx, w.Planner, project, fmt.Sprintf("round %d thread %d-%d", round, g, i), "")
					w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: thread, Body: fmt.Sprintf("race %d %d %d", round, g, i)})
				}
			})
		}
		if _, err := w.Hub.RemoveProjectAgent(ctx, alice, project, "reviewer"); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		page, err := w.Hub.ListConversations(ctx, w.Reviewer, "", hub.ConversationsPage.Max)
		if err != nil {
			t.Fatal(err)
		}
		ls := page.Conversations
		for _, l := range ls {
			if l.Conversation.ProjectID == project {
				t.Fatalf("round %d: the removed reviewer is still in thread %q", round, l.Conversation.Title)
			}
		}
		if in, _ := w.Hub.Inbox(ctx, w.Reviewer, 0, ""); in.Total != 0 {
			t.Fatalf("round %d: the removed reviewer's inbox holds %d", round, in.Total)
		}
	}
}
