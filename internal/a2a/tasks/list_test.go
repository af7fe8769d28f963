package tasks_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
)

// TestA2ATasksPages: ListTasks is the caller's own tasks with the agent,
// newest first, in pages that follow on from each other, with the count of
// them all and each task as tasks/get reads it; another caller's tasks are
// not in it, a page size outside 1–100 or a place that is not one of the
// listing's is refused, and an agent token needs msg:read (§18).
func TestA2ATasksPages(t *testing.T) {
	w := newWorld(t)
	w.expose(t, "alice/reviewer")
	planner, person := tasks.Caller{Agent: w.Planner}, tasks.Caller{Person: w.Person(t, "alice")}
	var sent []string // the planner's tasks, oldest first
	for i := range 5 {
		w.Clock.Advance(time.Second)
		task, err := w.tasks.Send(ctx, planner, "alice", "reviewer", tasks.Message{Body: fmt.Sprintf("task %d", i), ClientMsgID: fmt.Sprint("m", i)})
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, task.ID)
	}
	mine, err := w.tasks.Send(ctx, person, "alice", "reviewer", tasks.Message{Body: "alice's own"})
	if err != nil {
		t.Fatal(err)
	}
	reviewer := w.Agent(t, "alice/reviewer")
	if _, err := w.Hub.Acknowledge(ctx, reviewer, sent[4], hub.OutcomeProcessing, ""); err != nil {
		t.Fatal(err)
	}

	ids := func(p *tasks.Page) []string {
		out := []string{}
		for _, task := range p.Tasks {
			out = append(out, task.ID)
		}
		return out
	}
	var pages [][]string
	after := ""
	for range 4 {
		p, err := w.tasks.List(ctx, planner, "alice", "reviewer", "", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 5 {
			t.Errorf("page after %q: total %d, want 5", after, p.Total)
		}
		pages = append(pages, ids(p))
		if after = p.Next; after == "" {
			break
		}
	}
	want := [][]string{{sent[4], sent[3]}, {sent[2], sent[1]}, {sent[0]}}
	if diff := cmp.Diff(want, pages); diff != "" {
		t.Errorf("the planner's pages (-want +got):\n%s", diff)
	}
	first, err := w.tasks.List(ctx, planner, "alice", "reviewer", "", "", 1)
	if err != nil || len(first.Tasks) != 1 || first.Tasks[0].State != tasks.Working || first.Tasks[0].Request.Body != "task 4" || first.Next != sent[4] {
		t.Fatalf("the newest task: %+v, %v; want task 4, working, with more to follow", first, err)
	}
	conv := first.Tasks[0].ConversationID
	if p, err := w.tasks.List(ctx, planner, "alice", "reviewer", conv, sent[1], 10); err != nil || cmp.Diff([]string{sent[0]}, ids(p)) != "" || p.Total != 5 || p.Next != "" {
		t.Errorf("in its conversation after task 1: %+v, %v; want task 0 and the end", p, err)
	}
	if p, err := w.tasks.List(ctx, planner, "alice", "reviewer", "conv_other", "", 10); err != nil || len(p.Tasks) != 0 || p.Total != 0 {
		t.Errorf("in a conversation of none of them: %+v, %v; want none", p, err)
	}
	if p, err := w.tasks.List(ctx, person, "alice", "reviewer", "", "", 10); err != nil || cmp.Diff([]string{mine.ID}, ids(p)) != "" || p.Total != 1 {
		t.Errorf("alice's own tasks: %+v, %v; want only hers", p, err)
	}

	for name, tc := range map[string]struct {
		c           tasks.Caller
		conv, after string
		limit       int
		code        string
	}{
		"page size 0":                  {planner, "", "", 0, "invalid_argument"},
		"page size 101":                {planner, "", "", 101, "invalid_argument"},
		"after another caller's task":  {planner, "", mine.ID, 10, "invalid_argument"},
		"after a task of no one's":     {planner, "", "msg_nobody", 10, "invalid_argument"},
		"after one of another context": {planner, "conv_other", sent[2], 10, "invalid_argument"},
		"an agent not exposed":         {planner, "", "", 10, "not_found"},
		"a token without msg:read":     {tasks.Caller{Agent: w.Agent(t, "alice/planner", hub.ScopeWrite)}, "", "", 10, "missing_scope"},
	} {
		slug := "reviewer"
		if name == "an agent not exposed" {
			slug = "planner"
		}
		if _, err := w.tasks.List(ctx, tc.c, "alice", slug, tc.conv, tc.after, tc.limit); code(err) != tc.code {
			t.Errorf("%s: %v, want %s", name, err, tc.code)
		}
	}
}
