package projects

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Items (§8): the tracked pieces of a project — tasks, repositories, sites,
// assets, links and notes — each with a status, and every change recorded
// with who made it and from which session.

// MaxItemNote is the longest note of an item (§8).
const MaxItemNote = 2000

// ItemSpec is add_item's arguments.
type ItemSpec struct {
	Title    string
	Kind     string // one of hub.ItemKinds; "" is task
	Note     string
	URL      string // "" or an http or https URL
	Instance string
}

// ItemEdit is update_item's changes; nil leaves a field as it is.
type ItemEdit struct {
	Status   *string // one of hub.ItemStatuses
	Title    *string
	Note     *string
	URL      *string
	Instance string
}

// AddItem is add_item: a new item of the project, status open. It needs
// speak; the change is recorded with the agent and its session.
func (x *Projects) AddItem(ctx context.Context, c *hub.Caller, projectID string, s ItemSpec) (*hub.ItemView, error) {
	it, err := newItem(s)
	if err != nil {
		return nil, err
	}
	instance, err := x.hub.SeeInstance(ctx, c, s.Instance)
	if err != nil {
		return nil, err
	}
	return x.changeItem(ctx, c, projectID, instance, func(tx hub.Tx, p *hub.Project) (*hub.Item, map[string]string, error) {
		return insertItem(ctx, tx, p, it, x.hub.Now())
	})
}

// AddItemAsPerson is a member of the project adding an item (§8, the
// dashboard's board): the same item as add_item, recorded with the
// person.
func (x *Projects) AddItemAsPerson(ctx context.Context, u *hub.User, projectID string, s ItemSpec) (*hub.ItemView, error) {
	it, err := newItem(s)
	if err != nil {
		return nil, err
	}
	err = x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		p, err := hub.MemberProjectIn(ctx, tx, u, projectID)
		if err != nil {
			return nil, err
		}
		_, changes, err := insertItem(ctx, tx, p, it, x.hub.Now())
		if err != nil {
			return nil, err
		}
		return nil, tx.InsertItemChange(ctx, &hub.ItemChange{ItemID: it.ID, ByID: u.ID, ByHandle: u.Handle, Changes: changes, At: it.UpdatedAt})
	})
	if err != nil {
		return nil, err
	}
	return x.hub.ItemWithHistory(ctx, it)
}

// newItem checks a new item's kind, title, note and url; it is open.
func newItem(s ItemSpec) (*hub.Item, error) {
	it := &hub.Item{Kind: s.Kind, Status: hub.ItemStatuses[0]}
	if it.Kind == "" {
		it.Kind = hub.ItemKinds[0]
	}
	if !slices.Contains(hub.ItemKinds, it.Kind) {
		return nil, hub.Invalid("", "{kind} must be one of %s (got %q)", strings.Join(hub.ItemKinds, ", "), hub.Echo(it.Kind))
	}
	var err error
	if it.Title, it.Note, it.URL, err = checkItem(s.Title, s.Note, s.URL); err != nil {
		return nil, err
	}
	return it, nil
}

// insertItem writes a new item into p and returns what its history
// records of it.
func insertItem(ctx context.Context, tx hub.Tx, p *hub.Project, it *hub.Item, now time.Time) (*hub.Item, map[string]string, error) {
	it.ID, it.ProjectID, it.CreatedAt, it.UpdatedAt = hub.NewID(hub.IDItem, now), p.ID, now, now
	changes := map[string]string{"kind": it.Kind, "title": it.Title, "status": it.Status}
	if it.Note != "" {
		changes["note"] = it.Note
	}
	if it.URL != "" {
		changes["url"] = it.URL
	}
	return it, changes, tx.InsertItem(ctx, it)
}

// UpdateItem is update_item: a change of an item's status, title, note or
// url. It needs speak; only fields that change are recorded, and a change
// that changes nothing records nothing.
func (x *Projects) UpdateItem(ctx context.Context, c *hub.Caller, projectID, itemID string, e ItemEdit) (*hub.ItemView, error) {
	if err := checkEdit(e); err != nil {
		return nil, err
	}
	instance, err := x.hub.SeeInstance(ctx, c, e.Instance)
	if err != nil {
		return nil, err
	}
	return x.changeItem(ctx, c, projectID, instance, func(tx hub.Tx, p *hub.Project) (*hub.Item, map[string]string, error) {
		return editItem(ctx, tx, p, itemID, e, x.hub.Now())
	})
}

// checkEdit checks that an edit changes something, to a known status.
func checkEdit(e ItemEdit) error {
	if e.Status == nil && e.Title == nil && e.Note == nil && e.URL == nil {
		return hub.Invalid("", "give at least one of status, title, note or url to change")
	}
	if e.Status != nil && !slices.Contains(hub.ItemStatuses, *e.Status) {
		return hub.Invalid("", "status must be one of %s (got %q)", strings.Join(hub.ItemStatuses, ", "), hub.Echo(*e.Status))
	}
	return nil
}

// editItem applies an edit to an item of p and returns the item and what
// changed (nothing: nothing is written).
func editItem(ctx context.Context, tx hub.Tx, p *hub.Project, itemID string, e ItemEdit, now time.Time) (*hub.Item, map[string]string, error) {
	it, err := projectItem(ctx, tx, p, itemID)
	if err != nil {
		return nil, nil, err
	}
	title, note, u := it.Title, it.Note, it.URL
	for _, f := range []struct {
		dst *string
		src *string
	}{{&title, e.Title}, {&note, e.Note}, {&u, e.URL}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if title, note, u, err = checkItem(title, note, u); err != nil {
		return nil, nil, err
	}
	changes := map[string]string{}
	for _, f := range []struct {
		name string
		dst  *string
		val  string
	}{{"title", &it.Title, title}, {"note", &it.Note, note}, {"url", &it.URL, u}} {
		if *f.dst != f.val {
			*f.dst, changes[f.name] = f.val, f.val
		}
	}
	if e.Status != nil && *e.Status != it.Status {
		it.Status, changes["status"] = *e.Status, *e.Status
	}
	if len(changes) == 0 {
		return it, nil, nil
	}
	it.UpdatedAt = now
	return it, changes, tx.UpdateItem(ctx, it)
}

// UpdateItemAsPerson is a member of the project changing an item (§8, the
// dashboard's board): the same changes as update_item, recorded with the
// person. People are never slowed: a member may change any item.
func (x *Projects) UpdateItemAsPerson(ctx context.Context, u *hub.User, projectID, itemID string, e ItemEdit) (*hub.ItemView, error) {
	if err := checkEdit(e); err != nil {
		return nil, err
	}
	var it *hub.Item
	err := x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		p, err := hub.MemberProjectIn(ctx, tx, u, projectID)
		if err != nil {
			return nil, err
		}
		var changes map[string]string
		if it, changes, err = editItem(ctx, tx, p, itemID, e, x.hub.Now()); err != nil || len(changes) == 0 {
			return nil, err
		}
		return nil, tx.InsertItemChange(ctx, &hub.ItemChange{ItemID: it.ID, ByID: u.ID, ByHandle: u.Handle, Changes: changes, At: it.UpdatedAt})
	})
	if err != nil {
		return nil, err
	}
	return x.hub.ItemWithHistory(ctx, it)
}

// changeItem runs change on a project the agent may speak in and records
// what it changed (nothing when changes is empty), returning the item as
// it then stands.
func (x *Projects) changeItem(ctx context.Context, c *hub.Caller, projectID, instance string, change func(hub.Tx, *hub.Project) (*hub.Item, map[string]string, error)) (*hub.ItemView, error) {
	if err := x.hub.HomeOnFirstUse(ctx, c.Agent.OwnerID, projectID); err != nil {
		return nil, err
	}
	var it *hub.Item
	err := x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		p, err := hub.SpeakInProject(ctx, tx, c.Agent, projectID, "you may read its items but not change them")
		if err != nil {
			return nil, err
		}
		var changes map[string]string
		if it, changes, err = change(tx, p); err != nil || len(changes) == 0 {
			return nil, err
		}
		return nil, tx.InsertItemChange(ctx, &hub.ItemChange{ItemID: it.ID, ByID: c.Agent.ID, ByHandle: c.Agent.Handle(),
			Instance: instance, Changes: changes, At: it.UpdatedAt})
	})
	if err != nil {
		return nil, err
	}
	return x.hub.ItemWithHistory(ctx, it)
}

// ItemAsPerson is an item of a project the person is a member of, with its
// history.
func (x *Projects) ItemAsPerson(ctx context.Context, u *hub.User, projectID, itemID string) (*hub.ItemView, error) {
	p, err := x.hub.MemberProject(ctx, u, projectID)
	if err != nil {
		return nil, hub.AsOutcome(err)
	}
	it, err := projectItem(ctx, x.store, p, itemID)
	if err != nil {
		return nil, hub.AsOutcome(err)
	}
	return x.hub.ItemWithHistory(ctx, it)
}

// projectItem loads an item of the project; another project's is
// not_found, like one that does not exist.
func projectItem(ctx context.Context, r itemReader, p *hub.Project, itemID string) (*hub.Item, error) {
	if itemID == "" {
		return nil, hub.Invalid("", "item_id is required: take it from get_project")
	}
	it, err := r.Item(ctx, itemID)
	if errors.Is(err, hub.ErrNoRows) || (err == nil && it.ProjectID != p.ID) {
		return nil, hub.NotFound("no item %q is in this project; list them with get_project", hub.Echo(itemID))
	}
	return it, err
}

// checkItem checks and cleans an item's title, note and url.
func checkItem(title, note, u string) (string, string, string, error) {
	title, err := hub.CheckText("title", strings.TrimSpace(title), 1, hub.MaxTitle)
	if err != nil {
		return "", "", "", err
	}
	if note, err = hub.CheckText("note", note, 0, MaxItemNote); err != nil {
		return "", "", "", err
	}
	if u, err = hub.CheckText("url", strings.TrimSpace(u), 0, hub.MaxURL); err != nil || u == "" {
		return title, note, u, err
	}
	if parsed, err := url.Parse(u); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return "", "", "", hub.Invalid("", "url must be an http or https URL, like https://example.com/repo (got %q)", u)
	}
	return title, note, u, nil
}
