package hub_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestProjectBoard: a project's page puts items in columns by status; a
// member moves one and the change is recorded with the person; the
// owner's own agents not in the project are offered; someone not in the
// project gets not_found for the page and for moving an item.
func TestProjectBoard(t *testing.T) {
	w := newWorld(t)
	project, _ := w.project(t)
	alice := w.owner(t)
	w.agent(t, "alice/writer")
	a, err := w.hub.AddItem(ctx, w.planner, project, hub.ItemSpec{Title: "Notes", Instance: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.AddItem(ctx, w.planner, project, hub.ItemSpec{Title: "Tag"}); err != nil {
		t.Fatal(err)
	}
	doing := "doing"
	v, err := w.hub.UpdateItemAsPerson(ctx, alice, project, a.Item.ID, hub.ItemEdit{Status: &doing})
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
	b, err := w.hub.ProjectBoard(ctx, alice, project)
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
	bob := w.person(t, "bob")
	if _, err := w.hub.ProjectBoard(ctx, bob, project); code(err) != "not_found" {
		t.Errorf("bob's board: %v, want not_found", err)
	}
	if _, err := w.hub.UpdateItemAsPerson(ctx, bob, project, a.Item.ID, hub.ItemEdit{Status: &doing}); code(err) != "not_found" {
		t.Errorf("bob moving an item: %v, want not_found", err)
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
	b, _ := w.hub.ProjectBoard(ctx, alice, project)
	if n := len(b.Columns[0].Items); n != 1 {
		t.Errorf("the board's open column holds %d items, want 1", n)
	}
}
