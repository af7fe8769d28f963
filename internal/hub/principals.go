package hub

import (
	"context"
	"errors"
	"regexp"
	"strings"
)

// Handles (§1): a person is "alice" (2–39 of [a-z0-9-], starting with a letter
// or digit); an agent is "alice/planner" (slug 1–40, same charset). Handles
// are case-folded.
var (
	userHandleRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,38}$`)
	slugRE       = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)
)

// ParseHandle splits a handle into owner and slug (slug "" for a person),
// case-folded, or returns a KindInvalid error saying what a handle looks like.
func ParseHandle(handle string) (owner, slug string, err error) {
	h := strings.ToLower(strings.TrimSpace(handle))
	owner, slug, isAgent := strings.Cut(h, "/")
	if !userHandleRE.MatchString(owner) || (isAgent && !slugRE.MatchString(slug)) {
		return "", "", invalid("", "%q is not a handle: a person is like \"alice\" (2–39 of a-z, 0-9, -) and an agent like \"alice/planner\"", cleanText(handle))
	}
	return owner, slug, nil
}

// Principal is a resolved handle: a person or an agent.
type Principal struct {
	ID      string
	Kind    string // PrincipalUser or PrincipalAgent
	Handle  string
	OwnerID string // for a person, its own id
	Agent   *Agent // set for agents
	User    *User  // set for persons
}

// resolve finds the principal a handle names. Archived agents and unknown
// handles are not_found alike.
func resolve(ctx context.Context, r Reader, handle string) (*Principal, error) {
	owner, slug, err := ParseHandle(handle)
	if err != nil {
		return nil, err
	}
	if slug == "" {
		u, err := r.UserByHandle(ctx, owner)
		if err != nil {
			return nil, lookupErr(err, "no one has the handle %q; check it with list_contacts", owner)
		}
		return &Principal{ID: u.ID, Kind: PrincipalUser, Handle: u.Handle, OwnerID: u.ID, User: u}, nil
	}
	a, err := r.AgentByHandle(ctx, owner, slug)
	if err == nil && a.Archived() {
		err = ErrNoRows
	}
	if err != nil {
		return nil, lookupErr(err, "no agent has the handle %q; check it with list_contacts", owner+"/"+slug)
	}
	return &Principal{ID: a.ID, Kind: PrincipalAgent, Handle: a.Handle(), OwnerID: a.OwnerID, Agent: a}, nil
}

// lookupErr turns ErrNoRows into a not_found Error with the message, and any
// other error into an internal one.
func lookupErr(err error, format string, args ...any) error {
	if errors.Is(err, ErrNoRows) {
		return notFound(format, args...)
	}
	return AsError(err)
}

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
	u := &User{ID: NewID("usr", h.now()), Handle: owner, Name: name, CreatedAt: h.now()}
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

// AgentSpec describes a new agent.
type AgentSpec struct {
	Handle      string // owner/slug
	Description string
	Goal        string
}

// CreateAgent adds an agent to an existing owner (§1).
func (h *Hub) CreateAgent(ctx context.Context, s AgentSpec) (*Agent, error) {
	owner, slug, err := ParseHandle(s.Handle)
	if err != nil {
		return nil, err
	}
	if slug == "" {
		return nil, invalid("", "an agent's handle is owner/slug, like %s/planner", owner)
	}
	u, err := h.User(ctx, owner)
	if err != nil {
		return nil, err
	}
	desc, err := checkText("description", s.Description, 0, MaxDescription)
	if err != nil {
		return nil, err
	}
	goal, err := checkText("goal", s.Goal, 0, MaxGoal)
	if err != nil {
		return nil, err
	}
	now := h.now()
	a := &Agent{ID: NewID("agt", now), OwnerID: u.ID, OwnerHandle: u.Handle, Slug: slug,
		Description: desc, Goal: goal, Mode: ModeActive, CreatedAt: now}
	err = h.store.Update(ctx, func(tx Tx) error { return tx.InsertAgent(ctx, a) })
	if errors.Is(err, ErrDuplicate) {
		return nil, &Error{Kind: KindConflict, Msg: "the agent " + a.Handle() + " already exists (archived agents keep their handle)"}
	}
	if err != nil {
		return nil, AsError(err)
	}
	return a, nil
}

// Agent returns an agent by handle, archived or not.
func (h *Hub) Agent(ctx context.Context, handle string) (*Agent, error) {
	owner, slug, err := ParseHandle(handle)
	if err != nil {
		return nil, err
	}
	if slug == "" {
		return nil, invalid("", "an agent's handle is owner/slug, like %s/planner", owner)
	}
	a, err := h.store.AgentByHandle(ctx, owner, slug)
	if err != nil {
		return nil, lookupErr(err, "no agent has the handle %s/%s", owner, slug)
	}
	return a, nil
}

// Agents lists agents, of one owner when ownerHandle is not "".
func (h *Hub) Agents(ctx context.Context, ownerHandle string, includeArchived bool) ([]*Agent, error) {
	ownerID := ""
	if ownerHandle != "" {
		u, err := h.User(ctx, ownerHandle)
		if err != nil {
			return nil, err
		}
		ownerID = u.ID
	}
	as, err := h.store.Agents(ctx, ownerID, includeArchived)
	if err != nil {
		return nil, AsError(err)
	}
	return as, nil
}

// ArchiveAgent archives an agent (§1): its tokens fail from the next request
// on, it leaves every recipient list and is listed nowhere. Archiving an
// archived agent is not an error.
func (h *Hub) ArchiveAgent(ctx context.Context, handle string) (*Agent, error) {
	a, err := h.Agent(ctx, handle)
	if err != nil {
		return nil, err
	}
	if a.Archived() {
		return a, nil
	}
	a.ArchivedAt = h.now()
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.SetAgentArchived(ctx, a.ID, a.ArchivedAt) }); err != nil {
		return nil, AsError(err)
	}
	return a, nil
}
