package hub

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Items (§8): the tracked pieces of a project — tasks, repositories, sites,
// assets, links and notes — each with a status, and every change recorded
// with who made it and from which session.

// Limits of items (§8).
const (
	MaxItemNote = 2000
	MaxURL      = 2000
)

// ItemSpec is add_item's arguments.
type ItemSpec struct {
	Title    string
	Kind     string // one of ItemKinds; "" is task
	Note     string
	URL      string // "" or an http or https URL
	Instance string
}

// ItemEdit is update_item's changes; nil leaves a field as it is.
type ItemEdit struct {
	Status   *string // one of ItemStatuses
	Title    *string
	Note     *string
	URL      *string
	Instance string
}

// ItemView is an item with its thread (if one was opened) and history.
type ItemView struct {
	Item           *Item
	ConversationID string
	History        []ItemChange
}

// AddItem is add_item: a new item of the project, status open. It needs
// speak; the change is recorded with the agent and its session.
func (h *Hub) AddItem(ctx context.Context, c *Caller, projectID string, s ItemSpec) (*ItemView, error) {
	it, err := newItem(s)
	if err != nil {
		return nil, err
	}
	instance, err := h.seeInstance(ctx, c, s.Instance)
	if err != nil {
		return nil, err
	}
	return h.changeItem(ctx, c, projectID, instance, func(tx Tx, p *Project) (*Item, map[string]string, error) {
		return insertItem(ctx, tx, p, it, h.now())
	})
}

// AddItemAsPerson is a member of the project adding an item (§8, the
// dashboard's board): the same item as add_item, recorded with the
// person.
func (h *Hub) AddItemAsPerson(ctx context.Context, u *User, projectID string, s ItemSpec) (*ItemView, error) {
	it, err := newItem(s)
	if err != nil {
		return nil, err
	}
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		p, err := memberProject(ctx, tx, u, projectID)
		if err != nil {
			return nil, err
		}
		_, changes, err := insertItem(ctx, tx, p, it, h.now())
		if err != nil {
			return nil, err
		}
		return nil, tx.InsertItemChange(ctx, &ItemChange{ItemID: it.ID, ByID: u.ID, ByHandle: u.Handle, Changes: changes, At: it.UpdatedAt})
	})
	if err != nil {
		return nil, err
	}
	return itemView(ctx, h.store, it)
}

// newItem checks a new item's kind, title, note and url; it is open.
func newItem(s ItemSpec) (*Item, error) {
	it := &Item{Kind: s.Kind, Status: ItemStatuses[0]}
	if it.Kind == "" {
		it.Kind = ItemKinds[0]
	}
	if !slices.Contains(ItemKinds, it.Kind) {
		return nil, invalid("", "{kind} must be one of %s (got %q)", strings.Join(ItemKinds, ", "), echo(it.Kind))
	}
	var err error
	if it.Title, it.Note, it.URL, err = checkItem(s.Title, s.Note, s.URL); err != nil {
		return nil, err
	}
	return it, nil
}

// insertItem writes a new item into p and returns what its history
// records of it.
func insertItem(ctx context.Context, tx Tx, p *Project, it *Item, now time.Time) (*Item, map[string]string, error) {
	it.ID, it.ProjectID, it.CreatedAt, it.UpdatedAt = NewID(IDItem, now), p.ID, now, now
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
func (h *Hub) UpdateItem(ctx context.Context, c *Caller, projectID, itemID string, e ItemEdit) (*ItemView, error) {
	if err := checkEdit(e); err != nil {
		return nil, err
	}
	instance, err := h.seeInstance(ctx, c, e.Instance)
	if err != nil {
		return nil, err
	}
	return h.changeItem(ctx, c, projectID, instance, func(tx Tx, p *Project) (*Item, map[string]string, error) {
		return editItem(ctx, tx, p, itemID, e, h.now())
	})
}

// checkEdit checks that an edit changes something, to a known status.
func checkEdit(e ItemEdit) error {
	if e.Status == nil && e.Title == nil && e.Note == nil && e.URL == nil {
		return invalid("", "give at least one of status, title, note or url to change")
	}
	if e.Status != nil && !slices.Contains(ItemStatuses, *e.Status) {
		return invalid("", "status must be one of %s (got %q)", strings.Join(ItemStatuses, ", "), echo(*e.Status))
	}
	return nil
}

// editItem applies an edit to an item of p and returns the item and what
// changed (nothing: nothing is written).
func editItem(ctx context.Context, tx Tx, p *Project, itemID string, e ItemEdit, now time.Time) (*Item, map[string]string, error) {
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
func (h *Hub) UpdateItemAsPerson(ctx context.Context, u *User, projectID, itemID string, e ItemEdit) (*ItemView, error) {
	if err := checkEdit(e); err != nil {
		return nil, err
	}
	var it *Item
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		p, err := memberProject(ctx, tx, u, projectID)
		if err != nil {
			return nil, err
		}
		var changes map[string]string
		if it, changes, err = editItem(ctx, tx, p, itemID, e, h.now()); err != nil || len(changes) == 0 {
			return nil, err
		}
		return nil, tx.InsertItemChange(ctx, &ItemChange{ItemID: it.ID, ByID: u.ID, ByHandle: u.Handle, Changes: changes, At: it.UpdatedAt})
	})
	if err != nil {
		return nil, err
	}
	return itemView(ctx, h.store, it)
}

// changeItem runs change on a project the agent may speak in and records
// what it changed (nothing when changes is empty), returning the item as
// it then stands.
func (h *Hub) changeItem(ctx context.Context, c *Caller, projectID, instance string, change func(Tx, *Project) (*Item, map[string]string, error)) (*ItemView, error) {
	if err := h.homeOnFirstUse(ctx, c.Agent.OwnerID, projectID); err != nil {
		return nil, err
	}
	var it *Item
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		p, _, access, err := agentProject(ctx, tx, c.Agent, projectID)
		if err != nil {
			return nil, err
		}
		if access != AccessSpeak {
			return nil, deny(AccessListen, "%s: you may read its items but not change them", listenWhy(p))
		}
		var changes map[string]string
		if it, changes, err = change(tx, p); err != nil || len(changes) == 0 {
			return nil, err
		}
		return nil, tx.InsertItemChange(ctx, &ItemChange{ItemID: it.ID, ByID: c.Agent.ID, ByHandle: c.Agent.Handle(),
			Instance: instance, Changes: changes, At: it.UpdatedAt})
	})
	if err != nil {
		return nil, err
	}
	return itemView(ctx, h.store, it)
}

// ItemAsPerson is an item of a project the person is a member of, with its
// history.
func (h *Hub) ItemAsPerson(ctx context.Context, u *User, projectID, itemID string) (*ItemView, error) {
	p, err := memberProject(ctx, h.store, u, projectID)
	if err != nil {
		return nil, asOutcome(err)
	}
	it, err := projectItem(ctx, h.store, p, itemID)
	if err != nil {
		return nil, asOutcome(err)
	}
	return itemView(ctx, h.store, it)
}

// projectItem loads an item of the project; another project's is
// not_found, like one that does not exist.
func projectItem(ctx context.Context, r Reader, p *Project, itemID string) (*Item, error) {
	if itemID == "" {
		return nil, invalid("", "item_id is required: take it from get_project")
	}
	it, err := r.Item(ctx, itemID)
	if errors.Is(err, ErrNoRows) || (err == nil && it.ProjectID != p.ID) {
		return nil, notFound("no item %q is in this project; list them with get_project", echo(itemID))
	}
	return it, err
}

// itemView adds the item's thread and history.
func itemView(ctx context.Context, r Reader, it *Item) (*ItemView, error) {
	v := &ItemView{Item: it}
	var err error
	if v.History, err = r.ItemChanges(ctx, it.ID); err != nil {
		return nil, AsError(err)
	}
	conv, err := r.ThreadByKey(ctx, it.ProjectID, threadKey("", it.ID))
	switch {
	case err == nil:
		v.ConversationID = conv.ID
	case !errors.Is(err, ErrNoRows):
		return nil, AsError(err)
	}
	return v, nil
}

// checkItem checks and cleans an item's title, note and url.
func checkItem(title, note, u string) (string, string, string, error) {
	title, err := checkText("title", strings.TrimSpace(title), 1, MaxTitle)
	if err != nil {
		return "", "", "", err
	}
	if note, err = checkText("note", note, 0, MaxItemNote); err != nil {
		return "", "", "", err
	}
	if u, err = checkText("url", strings.TrimSpace(u), 0, MaxURL); err != nil || u == "" {
		return title, note, u, err
	}
	if parsed, err := url.Parse(u); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return "", "", "", invalid("", "url must be an http or https URL, like https://example.com/repo (got %q)", u)
	}
	return title, note, u, nil
}

// ItemReads are the queries of items (Reader embeds them).
type ItemReads interface {
	Item(ctx context.Context, id string) (*Item, error)
	// Items lists a project's items, oldest first.
	Items(ctx context.Context, projectID string) ([]*Item, error)
	// ItemChanges lists an item's changes, oldest first.
	ItemChanges(ctx context.Context, itemID string) ([]ItemChange, error)
}

// ItemWrites are the writes of items (Tx embeds them).
type ItemWrites interface {
	InsertItem(ctx context.Context, it *Item) error
	// UpdateItem stores an item's title, note, url, status and update time.
	UpdateItem(ctx context.Context, it *Item) error
	InsertItemChange(ctx context.Context, c *ItemChange) error
}
