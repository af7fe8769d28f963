package hub

import (
	"context"
	"errors"
)

// People (DESIGN.md §1): created by an admin, found by handle.

// CreateUser adds a person (§1). name is a display label.
func (h *Hub) CreateUser(ctx context.Context, handle, name string) (*User, error) {
	owner, slug, err := ParseHandle(handle)
	if err != nil {
		return nil, err
	}
	if slug != "" {
		return nil, invalid("", "a person's handle has no slash: %q", handle)
	}
	if name, err = checkText("name", name, 0, MaxTitle); err != nil {
		return nil, err
	}
	u := &User{ID: NewID(IDUser, h.now()), Handle: owner, Name: name, CreatedAt: h.now()}
	err = h.store.Update(ctx, func(tx Tx) error { return tx.InsertUser(ctx, u) })
	if errors.Is(err, ErrDuplicate) {
		return nil, &Error{Kind: KindConflict, Msg: "the handle " + owner + " is taken; choose another"}
	}
	if err != nil {
		return nil, AsError(err)
	}
	return u, nil
}

// User returns a person by handle.
func (h *Hub) User(ctx context.Context, handle string) (*User, error) {
	owner, slug, err := ParseHandle(handle)
	if err != nil {
		return nil, err
	}
	if slug != "" {
		return nil, invalid("", "%q is an agent's handle; give the person's handle (before the slash)", handle)
	}
	u, err := h.store.UserByHandle(ctx, owner)
	if err != nil {
		return nil, lookupErr(err, "no person has the handle %q; create one with: palaver user create %s", owner, owner)
	}
	return u, nil
}

// UserByID returns a person by id.
func (h *Hub) UserByID(ctx context.Context, id string) (*User, error) {
	u, err := h.store.UserByID(ctx, id)
	if err != nil {
		return nil, lookupErr(err, "no person has the id %q", id)
	}
	return u, nil
}
