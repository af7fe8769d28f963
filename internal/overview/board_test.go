package overview_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/projects"
)

// TestProjectBoard: a project's page puts items in columns by status; a
// member moves one and the change is recorded with the person; the
// owner's own agents not in the project are offered; someone not in the
// project gets not_found for the page and for moving an item.
func TestProjectBoard(t *testing.T) {
	w := newWorld(t)
	project, _ := w.Project(t)
	alice := w.owner(t)
	w.Agent(t, "alice/writer")
	a, err := w.projects.AddItem(ctx, w.Planner, project, projects.ItemSpec{Title: "Notes", Instance: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.projects.AddItem(ctx, w.Planner, project, projects.ItemSpec{Title: "Tag"}); err != nil {
		t.Fatal(err)
	}
	doing := "doing"
	v, err := w.projects.UpdateItemAsPerson(ctx, alice, project, a.Item.ID, projects.ItemEdit{Status: &doing})
	if err != nil {
		t.Fatal(err)
	}
	var history []string
	for _, c := range v.History {
		history = append(history, c.ByHandle+"/"+c.Instance+":"+c.Changes["status"])
	}
	if diff := cmp.Diff([]string{"alice/planner/laptop:open", "alice/:doing"}, history); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	b, err := w.pages.ProjectBoard(ctx, alice, project)
	if err != nil {
		t.Fatal(err)
	}
	columns := map[string][]string{}
	for _, c := range b.Columns {
		columns[c.Status] = []string{}
		for _, it := range c.Items {
			columns[c.Status] = append(columns[c.Status], it.Title)
		}
	}
	if diff := cmp.Diff(map[string][]string{"open": {"Tag"}, "doing": {"Notes"}, "done": {}, "dropped": {}}, columns); diff != "" {
		t.Errorf("the board (-want +got):\n%s", diff)
	}
	var bringable []string
	for _, a := range b.Bringable {
		bringable = append(bringable, a.Handle())
	}
	if diff := cmp.Diff([]string{"alice/writer"}, bringable); diff != "" {
		t.Errorf("bringable (-want +got):\n%s", diff)
	}
	bob := w.Person(t, "bob")
	if _, err := w.pages.ProjectBoard(ctx, bob, project); code(err) != "not_found" {
		t.Errorf("bob's board: %v, want not_found", err)
	}
	if _, err := w.projects.UpdateItemAsPerson(ctx, bob, project, a.Item.ID, projects.ItemEdit{Status: &doing}); code(err) != "not_found" {
		t.Errorf("bob moving an item: %v, want not_found", err)
	}
}
