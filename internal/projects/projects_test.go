package projects_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/projects"
)

var ctx = context.Background()

var code = hubtest.Code

// world is the Projects over a hubtest world.
type world struct {
	*hubtest.World
	projects *projects.Projects
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := hubtest.Open(t, hub.DefaultSettings())
	return &world{World: w, projects: projects.New(w.Hub, w.Store)}
}

// TestItemsKeepTheirHistory: every change of an item is recorded with who
// made it and from which session; listen may not change items.
func TestItemsKeepTheirHistory(t *testing.T) {
	w := newWorld(t)
	project, _ := w.Project(t)
	it, err := w.projects.AddItem(ctx, w.Planner, project, projects.ItemSpec{Title: "Write the docs", Kind: "task", Instance: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	doing, same := "doing", "Write the docs"
	if _, err := w.projects.UpdateItem(ctx, w.Reviewer, project, it.Item.ID, projects.ItemEdit{Status: &doing, Title: &same, Instance: "laptop"}); err != nil {
		t.Fatal(err)
	}
	v, err := w.projects.ItemAsPerson(ctx, w.Person(t, "alice"), project, it.Item.ID)
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
			_, err := w.projects.AddItem(ctx, w.Planner, project, projects.ItemSpec{Title: "x", Kind: "idea"})
			return err
		},
		"a url that is not http": func() error {
			_, err := w.projects.AddItem(ctx, w.Planner, project, projects.ItemSpec{Title: "x", URL: "javascript:alert(1)"})
			return err
		},
		"an unknown status": func() error {
			_, err := w.projects.UpdateItem(ctx, w.Planner, project, it.Item.ID, projects.ItemEdit{Status: &wrong})
			return err
		},
		"an item of another project": func() error {
			_, err := w.projects.UpdateItem(ctx, w.Planner, project, "item_00000000000000000000000000", projects.ItemEdit{Status: &doing})
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
	if _, err := w.Hub.SetProjectAgent(ctx, w.Person(t, "alice"), project, "reviewer", hub.AccessListen, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.projects.UpdateItem(ctx, w.Reviewer, project, it.Item.ID, projects.ItemEdit{Status: &doing}); code(err) != "denied:listen" {
		t.Fatalf("a listening agent changing an item: %v", err)
	}
	th, err := w.Hub.OpenThread(ctx, w.Planner, project, "", it.Item.ID)
	if err != nil || th.Conversation.ItemID != it.Item.ID || th.Conversation.Title != "Write the docs" {
		t.Fatalf("the item's thread: %+v, %v", th, err)
	}
	if again, _ := w.Hub.OpenThread(ctx, w.Reviewer, project, "", it.Item.ID); again.Conversation.ID != th.Conversation.ID {
		t.Fatalf("the item's thread again: %s, want %s", again.Conversation.ID, th.Conversation.ID)
	}
}

// TestProjectRequests: a proposal and an access request are decided by the
// agent's owner through Decide, each once; the agent hears the answer.
func TestProjectRequests(t *testing.T) {
	w := newWorld(t)
	alice := w.Person(t, "alice")
	p, err := w.Hub.CreateProject(ctx, alice, "Docs", "")
	if err != nil {
		t.Fatal(err)
	}
	ls, err := w.projects.ListProjects(ctx, w.Planner)
	if err != nil || len(ls.NotJoined) != 1 || ls.NotJoined[0].ID != p.ID {
		t.Fatalf("not_joined: %+v, %v", ls, err)
	}
	if _, err := w.projects.RequestProjectAccess(ctx, w.Helper, p.ID, "let me in"); code(err) != "not_found" {
		t.Fatalf("bob's agent asking into alice's project: %v, want not_found", err)
	}
	req, err := w.projects.RequestProjectAccess(ctx, w.Planner, p.ID, "to write the docs")
	if err != nil || req.Status != hub.RequestPending {
		t.Fatalf("access request: %+v, %v", req, err)
	}
	if _, err := w.Hub.Decide(ctx, w.Person(t, "bob"), req.ID, hub.Verdict{Action: hub.VerdictApprove}); code(err) != "not_found" {
		t.Fatalf("bob deciding alice's agent's request: %v", err)
	}
	d, err := w.Hub.Decide(ctx, alice, req.ID, hub.Verdict{Action: hub.VerdictApprove})
	if err != nil || d.Kind != hub.ApprovalProjectAccess || d.Project.Status != hub.RequestApproved {
		t.Fatalf("approving the access request: %+v, %v", d, err)
	}
	if _, err := w.Hub.Decide(ctx, alice, req.ID, hub.Verdict{Action: hub.VerdictReject}); code(err) != "conflict" {
		t.Fatalf("rejecting it after approving: %v, want conflict", err)
	}
	if g, err := w.Hub.GetProject(ctx, w.Planner, p.ID); err != nil || g.Access != hub.AccessSpeak {
		t.Fatalf("the planner in the project: %+v, %v", g, err)
	}
	if _, err := w.projects.RequestProjectAccess(ctx, w.Planner, p.ID, ""); code(err) != "invalid_argument" {
		t.Fatalf("asking into a project it is in: %v", err)
	}
	prop, err := w.projects.ProposeProject(ctx, w.Reviewer, "Website", "the new site", "it needs a home", "")
	if err != nil {
		t.Fatal(err)
	}
	if d, err = w.Hub.Decide(ctx, alice, prop.ID, hub.Verdict{Action: hub.VerdictReject}); err != nil || d.Kind != hub.ApprovalProjectProposal || d.Project.Status != hub.RequestRejected {
		t.Fatalf("rejecting the proposal: %+v, %v", d, err)
	}
	if ls, _ := w.projects.ListProjects(ctx, w.Reviewer); len(ls.Projects)+len(ls.NotJoined) != 2 {
		t.Fatalf("after a rejected proposal the reviewer sees %+v; want only home and Docs", ls)
	}
}

// TestAddItemAsPerson: a member adds an item as agents do — its kind,
// title, note and url checked alike, open, its history recorded with the
// person; a bad kind or url adds nothing; someone not in the project gets
// not_found.
func TestAddItemAsPerson(t *testing.T) {
	w := newWorld(t)
	project, _ := w.Project(t)
	alice := w.Person(t, "alice")
	v, err := w.projects.AddItemAsPerson(ctx, alice, project, projects.ItemSpec{Kind: "link", Title: " Ship on Friday ", Note: "after the notes", URL: "https://example.com/plan"})
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
	for _, s := range []projects.ItemSpec{{Kind: "wish", Title: "x"}, {Title: "x", URL: "ftp://example.com"}, {Title: ""}} {
		if _, err := w.projects.AddItemAsPerson(ctx, alice, project, s); code(err) != "invalid_argument" {
			t.Errorf("adding %+v: %v, want invalid_argument", s, err)
		}
	}
	if _, err := w.projects.AddItemAsPerson(ctx, w.Person(t, "bob"), project, projects.ItemSpec{Title: "x"}); code(err) != "not_found" {
		t.Errorf("bob adding: %v, want not_found", err)
	}
	b, _ := overview.New(w.Hub, w.Store).ProjectBoard(ctx, alice, project)
	if n := len(b.Columns[0].Items); n != 1 {
		t.Errorf("the board's open column holds %d items, want 1", n)
	}
}
