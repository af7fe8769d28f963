package tasks_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
)

// TestTaskStateRule: every way a request and its delivery stand maps to
// one A2A task state (§5, §18).
func TestTaskStateRule(t *testing.T) {
	sent := &hub.Message{Status: hub.MessageSent}
	reply := func(body string, noReply bool) []*hub.Message {
		return []*hub.Message{{Body: "first", Kind: hub.MessageText}, {Body: body, Kind: hub.MessageText, NoReply: noReply}}
	}
	for _, tc := range []struct {
		name    string
		req     *hub.Message
		d       *hub.Delivery
		replies []*hub.Message
		held    int
		want    string
	}{
		{"held for the caller's owner", &hub.Message{Status: hub.MessageHeld}, nil, nil, 0, tasks.Submitted},
		{"rejected by the caller's owner", &hub.Message{Status: hub.MessageRejected}, nil, nil, 0, tasks.Rejected},
		{"waiting", sent, &hub.Delivery{State: hub.DeliveryWaiting}, nil, 0, tasks.Submitted},
		{"processing", sent, &hub.Delivery{State: hub.DeliveryProcessing, Attempts: 1}, nil, 0, tasks.Working},
		{"failed, not retried", sent, &hub.Delivery{State: hub.DeliveryFailed, Attempts: 1, Error: "disk full"}, nil, 0, tasks.Failed},
		{"retried after failing", sent, &hub.Delivery{State: hub.DeliveryProcessing, Attempts: 2}, nil, 0, tasks.Working},
		{"withdrawn", sent, &hub.Delivery{State: hub.DeliveryWithdrawn}, nil, 0, tasks.Canceled},
		{"acknowledged without a reply", sent, &hub.Delivery{State: hub.DeliveryDone}, nil, 0, tasks.Completed},
		{"acknowledged with a reply", sent, &hub.Delivery{State: hub.DeliveryDone}, reply("Done: see PR 12.", false), 0, tasks.Completed},
		{"the last reply asks", sent, &hub.Delivery{State: hub.DeliveryDone}, reply("Which branch?  ", false), 0, tasks.InputRequired},
		{"an earlier reply asked", sent, &hub.Delivery{State: hub.DeliveryDone}, []*hub.Message{{Body: "Which one?"}, {Body: "Never mind, done."}}, 0, tasks.Completed},
		{"a notice ending in a question mark", sent, &hub.Delivery{State: hub.DeliveryDone}, reply("Why not?", true), 0, tasks.Completed},
		{"a reply held for the agent's owner", sent, &hub.Delivery{State: hub.DeliveryDone}, nil, 1, tasks.Working},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := tasks.State(tc.req, tc.d, tc.replies, tc.held); got != tc.want {
				t.Errorf("state = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestA2AExposure: off by default, so the agent has no card; its owner
// exposes it with skills, bad skills change nothing, another owner
// cannot, and archiving or turning it off takes the card away (§18).
func TestA2AExposure(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")
	if _, err := w.tasks.ExposedAgent(ctx, "alice", "reviewer"); code(err) != "not_found" {
		t.Fatalf("never exposed: %v, want not_found", err)
	}
	if _, err := w.tasks.ExposedAgents(ctx, "alice"); code(err) != "not_found" {
		t.Fatalf("directory with none exposed: %v, want not_found", err)
	}
	skills := tasks.ParseSkills("Review code: reads a diff and says what to change\n\nTriage\n")
	if _, err := w.tasks.SetExposure(ctx, alice, "reviewer", tasks.Setting{Exposed: true, Skills: skills}); err != nil {
		t.Fatal(err)
	}
	ea, err := w.tasks.ExposedAgent(ctx, "alice", "reviewer")
	if err != nil {
		t.Fatal(err)
	}
	want := []hub.Skill{{ID: "review-code", Name: "Review code", Description: "reads a diff and says what to change"}, {ID: "triage", Name: "Triage"}}
	if diff := cmp.Diff(want, ea.Exposure.Skills); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	for name, bad := range map[string][]hub.Skill{
		"no name":      {{Name: " "}},
		"twice":        {{Name: "Triage"}, {Name: "triage!"}},
		"only symbols": {{Name: "!!!"}},
		"long":         {{Name: "x", Description: string(make([]rune, tasks.MaxSkillDescription+1))}},
	} {
		if _, err := w.tasks.SetExposure(ctx, alice, "reviewer", tasks.Setting{Exposed: false, Skills: bad}); code(err) != "invalid_argument" && code(err) != "too_long" {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	if ea, err := w.tasks.ExposedAgent(ctx, "alice", "reviewer"); err != nil || len(ea.Exposure.Skills) != 2 {
		t.Fatalf("after refused changes: %+v, %v; want it exposed with its two skills", ea, err)
	}
	if _, err := w.tasks.SetExposure(ctx, bob, "alice/reviewer", tasks.Setting{Exposed: false}); code(err) != "not_found" {
		t.Fatalf("bob setting alice's agent: %v, want not_found", err)
	}
	dir, err := w.tasks.ExposedAgents(ctx, "alice")
	if err != nil || len(dir) != 1 || dir[0].Agent.Handle() != "alice/reviewer" {
		t.Fatalf("directory: %+v, %v; want the reviewer", dir, err)
	}
	// Turning it off keeps its skills for the next time (nil: kept).
	if _, err := w.tasks.SetExposure(ctx, alice, "reviewer", tasks.Setting{Exposed: false}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tasks.ExposedAgent(ctx, "alice", "reviewer"); code(err) != "not_found" {
		t.Fatalf("turned off: %v, want not_found", err)
	}
	if ea, err := w.tasks.Exposure(ctx, alice, "reviewer"); err != nil || ea.Exposure.Exposed || len(ea.Exposure.Skills) != 2 {
		t.Fatalf("turned off: %+v, %v; want off with its skills", ea, err)
	}
	if _, err := w.tasks.SetExposure(ctx, alice, "reviewer", tasks.Setting{Exposed: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.ArchiveAgent(ctx, "alice/reviewer"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tasks.ExposedAgent(ctx, "alice", "reviewer"); code(err) != "not_found" {
		t.Fatalf("archived: %v, want not_found", err)
	}
}

// expose exposes the agent over A2A.
func (w *world) expose(t *testing.T, handle string) {
	t.Helper()
	owner, slug, _ := hub.ParseHandle(handle)
	if _, err := w.tasks.SetExposure(ctx, w.Person(t, owner), slug, tasks.Setting{Exposed: true}); err != nil {
		t.Fatal(err)
	}
}

// watch follows a task in the background; next returns the next state
// it was handed (a change the test just made), waiting at most 10s, and
// end waits for the watch to finish and says how it did.
func (w *world) watch(t *testing.T, c tasks.Caller, owner, slug, taskID string) (next func() string, end func() error) {
	t.Helper()
	states := make(chan string)
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	go func() {
		done <- w.tasks.Watch(ctx, c, owner, slug, taskID, 0, func(task *tasks.Task) bool {
			select {
			case states <- task.State:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	next = func() string {
		t.Helper()
		select {
		case s := <-states:
			return s
		case <-ctx.Done():
			t.Fatal("the watch handed over no new state within 10s")
		}
		return ""
	}
	end = func() error {
		defer cancel()
		return <-done
	}
	return next, end
}

// TestA2ATaskFollowsProcessing: a task is the request message in the
// direct conversation; it goes submitted → working → completed with the
// agent's processing, carrying its reply; a second message in the same
// context is a second task there (§5, §18).
func TestA2ATaskFollowsProcessing(t *testing.T) {
	w := newWorld(t)
	w.expose(t, "alice/reviewer")
	caller := tasks.Caller{Agent: w.Planner}
	task, err := w.tasks.Send(ctx, caller, "alice", "reviewer", tasks.Message{Body: "Please review PR 12", ClientMsgID: "a2a-1"})
	if err != nil {
		t.Fatal(err)
	}
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	if task.State != tasks.Submitted || task.ConversationID != conv || task.Request.Body != "Please review PR 12" {
		t.Fatalf("task: %+v; want submitted in %s", task, conv)
	}
	if again, err := w.tasks.Send(ctx, caller, "alice", "reviewer", tasks.Message{Body: "Please review PR 12", ClientMsgID: "a2a-1"}); err != nil || again.ID != task.ID {
		t.Fatalf("a retry of the same messageId: %+v, %v; want task %s again", again, err, task.ID)
	}
	next, end := w.watch(t, caller, "alice", "reviewer", task.ID)
	if s := next(); s != tasks.Submitted {
		t.Fatalf("watch starts at %s, want submitted", s)
	}
	reviewer := w.Agent(t, "alice/reviewer")
	if _, err := w.Hub.Acknowledge(ctx, reviewer, task.ID, hub.OutcomeProcessing, ""); err != nil {
		t.Fatal(err)
	}
	if s := next(); s != tasks.Working {
		t.Fatalf("processing: watched %s, want working", s)
	}
	w.Send(t, reviewer, conv, "Looks good; one nit in store.go.")
	if _, err := w.Hub.Acknowledge(ctx, reviewer, task.ID, hub.OutcomeDone, ""); err != nil {
		t.Fatal(err)
	}
	if s := next(); s != tasks.Completed {
		t.Fatalf("acknowledged: watched %s, want completed", s)
	}
	if err := end(); err != nil {
		t.Fatalf("the watch of a completed task: %v, want it to end by itself", err)
	}
	got, err := w.tasks.Task(ctx, caller, "alice", "reviewer", task.ID)
	if err != nil || got.State != tasks.Completed || len(got.Replies) != 1 || got.Replies[0].Body != "Looks good; one nit in store.go." {
		t.Fatalf("tasks/get: %+v, %v; want completed with the reply", got, err)
	}

	second, err := w.tasks.Send(ctx, caller, "alice", "reviewer", tasks.Message{ContextID: conv, TaskID: task.ID, Body: "Which nit?"})
	if err != nil || second.ConversationID != conv || second.ID == task.ID || second.Request.ReplyToSeq != task.Request.Seq {
		t.Fatalf("second message: %+v, %v; want a new task in %s replying to seq %d", second, err, conv, task.Request.Seq)
	}
	// The first task's replies stop where the caller spoke again.
	w.Send(t, reviewer, conv, "Line 40: do you want it fixed now?")
	if _, err := w.Hub.Acknowledge(ctx, reviewer, second.ID, hub.OutcomeDone, ""); err != nil {
		t.Fatal(err)
	}
	if got, err := w.tasks.Task(ctx, caller, "alice", "reviewer", second.ID); err != nil || got.State != tasks.InputRequired || len(got.Replies) != 1 {
		t.Fatalf("second task: %+v, %v; want input-required with its one reply", got, err)
	}
	if got, err := w.tasks.Task(ctx, caller, "alice", "reviewer", task.ID); err != nil || len(got.Replies) != 1 {
		t.Fatalf("first task after the second: %+v, %v; want its one reply", got, err)
	}

	// With two tasks open, a reply naming the first (reply_to_seq) is the
	// first's, though the caller has spoken since; one naming nothing
	// answers the latest.
	third, err := w.tasks.Send(ctx, caller, "alice", "reviewer", tasks.Message{ContextID: conv, Body: "Also PR 13"})
	if err != nil {
		t.Fatal(err)
	}
	fourth, err := w.tasks.Send(ctx, caller, "alice", "reviewer", tasks.Message{ContextID: conv, Body: "And PR 14"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: conv, Body: "PR 13 is fine.", ReplyToSeq: third.Request.Seq}); err != nil {
		t.Fatal(err)
	}
	w.Send(t, reviewer, conv, "PR 14 needs tests.")
	for _, id := range []string{third.ID, fourth.ID} {
		if _, err := w.Hub.Acknowledge(ctx, reviewer, id, hub.OutcomeDone, ""); err != nil {
			t.Fatal(err)
		}
	}
	for task, want := range map[string]string{third.ID: "PR 13 is fine.", fourth.ID: "PR 14 needs tests."} {
		got, err := w.tasks.Task(ctx, caller, "alice", "reviewer", task)
		if err != nil || len(got.Replies) != 1 || got.Replies[0].Body != want {
			t.Errorf("task %s: %+v, %v; want the one reply %q", task, got, err, want)
		}
	}

	for name, in := range map[string]tasks.Message{
		"another context":    {ContextID: "conv_other", Body: "hi"},
		"a task of no one's": {TaskID: "msg_nobody", Body: "hi"},
	} {
		if _, err := w.tasks.Send(ctx, caller, "alice", "reviewer", in); code(err) != "invalid_argument" && code(err) != "not_found" {
			t.Errorf("%s: %v, want refused", name, err)
		}
	}
	if _, err := w.tasks.Task(ctx, tasks.Caller{Agent: w.Helper}, "alice", "reviewer", task.ID); code(err) != "not_found" {
		t.Errorf("another caller's task: %v, want not_found", err)
	}
	if _, err := w.tasks.Send(ctx, caller, "alice", "planner", tasks.Message{Body: "hi"}); code(err) != "not_found" {
		t.Errorf("an agent not exposed: %v, want not_found", err)
	}
}

// TestA2ACancelAndFail: a task waiting in the inbox is canceled and leaves
// it; one being worked on cannot be; a failed attempt fails the task until
// the agent retries (§5, §18).
func TestA2ACancelAndFail(t *testing.T) {
	w := newWorld(t)
	w.expose(t, "alice/reviewer")
	caller := tasks.Caller{Agent: w.Planner}
	reviewer := w.Agent(t, "alice/reviewer")
	first, err := w.tasks.Send(ctx, caller, "alice", "reviewer", tasks.Message{Body: "first"})
	if err != nil {
		t.Fatal(err)
	}
	canceled, err := w.tasks.Cancel(ctx, caller, "alice", "reviewer", first.ID)
	if err != nil || canceled.State != tasks.Canceled {
		t.Fatalf("cancel: %+v, %v; want canceled", canceled, err)
	}
	if again, err := w.tasks.Cancel(ctx, caller, "alice", "reviewer", first.ID); err != nil || again.State != tasks.Canceled {
		t.Fatalf("cancel twice: %+v, %v; want canceled again", again, err)
	}
	if in, err := w.Hub.Inbox(ctx, reviewer, 20, ""); err != nil || in.Total != 0 {
		t.Fatalf("the reviewer's inbox after the cancel: %+v, %v; want empty", in, err)
	}
	second, err := w.tasks.Send(ctx, caller, "alice", "reviewer", tasks.Message{Body: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.Acknowledge(ctx, reviewer, second.ID, hub.OutcomeFailed, "the build is broken"); err != nil {
		t.Fatal(err)
	}
	if got, err := w.tasks.Task(ctx, caller, "alice", "reviewer", second.ID); err != nil || got.State != tasks.Failed || got.Note != "attempt 1 failed: the build is broken" {
		t.Fatalf("failed: %+v, %v", got, err)
	}
	if _, err := w.Hub.Acknowledge(ctx, reviewer, second.ID, hub.OutcomeProcessing, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tasks.Cancel(ctx, caller, "alice", "reviewer", second.ID); code(err) != "not_cancelable" {
		t.Fatalf("cancel while working: %v, want not_cancelable", err)
	}
	if got, err := w.tasks.Task(ctx, caller, "alice", "reviewer", second.ID); err != nil || got.State != tasks.Working || got.Attempts != 2 {
		t.Fatalf("retried: %+v, %v; want working, attempt 2", got, err)
	}
}

// TestA2AReachAndReview: a caller without reach is refused with the step
// to take, as open_conversation refuses it; a person reaches their own
// agent; an agent in review mode keeps the task working until its owner
// approves the reply (§3, §7, §18).
func TestA2AReachAndReview(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")
	w.expose(t, "alice/reviewer")
	if _, err := w.tasks.Send(ctx, tasks.Caller{Agent: w.Helper}, "alice", "reviewer", tasks.Message{Body: "hi"}); code(err) != "denied:contact" {
		t.Fatalf("bob's helper, no contact: %v, want denied:contact", err)
	}
	if _, err := w.tasks.Send(ctx, tasks.Caller{Person: bob}, "alice", "reviewer", tasks.Message{Body: "hi"}); code(err) != "denied:contact" {
		t.Fatalf("bob, alice's agent not public: %v, want denied:contact", err)
	}
	if _, err := w.tasks.Send(ctx, tasks.Caller{Agent: w.Agent(t, "alice/planner", hub.ScopeRead)}, "alice", "reviewer", tasks.Message{Body: "hi"}); code(err) != "missing_scope" {
		t.Fatalf("a read-only token: %v, want missing_scope", err)
	}

	if _, err := w.Hub.SetAgentMode(ctx, "alice/reviewer", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	caller := tasks.Caller{Person: alice}
	task, err := w.tasks.Send(ctx, caller, "alice", "reviewer", tasks.Message{Body: "What changed today?"})
	if err != nil {
		t.Fatal(err)
	}
	reviewer := w.Agent(t, "alice/reviewer")
	next, end := w.watch(t, caller, "alice", "reviewer", task.ID)
	if s := next(); s != tasks.Submitted {
		t.Fatalf("watch starts at %s, want submitted", s)
	}
	if _, err := w.Hub.Acknowledge(ctx, reviewer, task.ID, hub.OutcomeProcessing, ""); err != nil {
		t.Fatal(err)
	}
	if s := next(); s != tasks.Working {
		t.Fatalf("processing: watched %s, want working", s)
	}
	res, err := w.Hub.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: task.ConversationID, Body: "Two fixes landed."})
	if err != nil || res.Message.Status != hub.MessageHeld {
		t.Fatalf("the reviewer's reply: %+v, %v; want held", res, err)
	}
	if _, err := w.Hub.Acknowledge(ctx, reviewer, task.ID, hub.OutcomeDone, ""); err != nil {
		t.Fatal(err)
	}
	// Acknowledged with its reply held: still working, now waiting for the
	// owner (the note changed, so the watch hands it over again).
	if s := next(); s != tasks.Working {
		t.Fatalf("acknowledged, reply held: watched %s, want working", s)
	}
	if got, err := w.tasks.Task(ctx, caller, "alice", "reviewer", task.ID); err != nil || got.State != tasks.Working || got.Note != "the agent's reply waits for its owner's review" {
		t.Fatalf("acknowledged, reply held: %+v, %v; want working, waiting for review", got, err)
	}
	if _, err := w.Hub.DecideHeld(ctx, alice, res.Message.ID, hub.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if s := next(); s != tasks.Completed {
		t.Fatalf("approved: watched %s, want completed", s)
	}
	if err := end(); err != nil {
		t.Fatalf("the watch of a completed task: %v", err)
	}
	got, err := w.tasks.Task(ctx, caller, "alice", "reviewer", task.ID)
	if err != nil || got.State != tasks.Completed || len(got.Replies) != 1 || got.Replies[0].Authority != hub.AuthorityApproved {
		t.Fatalf("approved: %+v, %v; want completed with the owner-approved reply", got, err)
	}
}

// TestA2ARejectedReply: when the owner rejects the held reply a task
// waits on, the caller's watch hears it and the task completes without
// it (§7, §18).
func TestA2ARejectedReply(t *testing.T) {
	w := newWorld(t)
	alice := w.Person(t, "alice")
	w.expose(t, "alice/reviewer")
	if _, err := w.Hub.SetAgentMode(ctx, "alice/reviewer", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	caller := tasks.Caller{Agent: w.Planner}
	task, err := w.tasks.Send(ctx, caller, "alice", "reviewer", tasks.Message{Body: "Anything to report?"})
	if err != nil {
		t.Fatal(err)
	}
	reviewer := w.Agent(t, "alice/reviewer")
	res, err := w.Hub.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: task.ConversationID, Body: "Something rude."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.Acknowledge(ctx, reviewer, task.ID, hub.OutcomeDone, ""); err != nil {
		t.Fatal(err)
	}
	next, end := w.watch(t, caller, "alice", "reviewer", task.ID)
	if s := next(); s != tasks.Working {
		t.Fatalf("reply held: watched %s, want working", s)
	}
	if _, err := w.Hub.DecideHeld(ctx, alice, res.Message.ID, hub.Decision{Approve: false}); err != nil {
		t.Fatal(err)
	}
	if s := next(); s != tasks.Completed {
		t.Fatalf("reply rejected: watched %s, want completed", s)
	}
	if err := end(); err != nil {
		t.Fatal(err)
	}
	if got, err := w.tasks.Task(ctx, caller, "alice", "reviewer", task.ID); err != nil || len(got.Replies) != 0 {
		t.Fatalf("after the rejection: %+v, %v; want no reply", got, err)
	}
}

// TestA2AWatchHoldsAWait: a watch takes one of the caller's waits, so past
// the limit the next is too_many_waits, as a wait_for_messages would be,
// and a blocking send answers at once (§6, §18).
func TestA2AWatchHoldsAWait(t *testing.T) {
	settings := hub.DefaultSettings()
	settings.WaitsPerAgent = 1
	w := newWorldWith(t, settings)
	w.expose(t, "alice/reviewer")
	caller := tasks.Caller{Agent: w.Planner}
	task, err := w.tasks.Send(ctx, caller, "alice", "reviewer", tasks.Message{Body: "Please look"})
	if err != nil {
		t.Fatal(err)
	}
	next, end := w.watch(t, caller, "alice", "reviewer", task.ID)
	if s := next(); s != tasks.Submitted {
		t.Fatalf("watched %s, want submitted", s)
	}
	err = w.tasks.Watch(ctx, caller, "alice", "reviewer", task.ID, 0, func(*tasks.Task) bool { return true })
	if code(err) != "too_many_waits" {
		t.Fatalf("a second watch past the limit: %v, want too_many_waits", err)
	}
	// A blocking send with no wait left answers at once, not with an error.
	if got, err := w.tasks.Await(ctx, caller, "alice", "reviewer", task, hub.MaxWait); err != nil || got.State != tasks.Submitted {
		t.Fatalf("awaiting past the limit: %+v, %v; want the submitted task at once", got, err)
	}
	if _, err := w.tasks.Cancel(ctx, caller, "alice", "reviewer", task.ID); err != nil {
		t.Fatal(err)
	}
	if s := next(); s != tasks.Canceled {
		t.Fatalf("canceled: watched %s", s)
	}
	if err := end(); err != nil {
		t.Fatal(err)
	}
}
