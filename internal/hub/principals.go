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
		return "", "", invalid("", "%q is not a {handle}: a person is like \"alice\" (2–39 of a-z, 0-9, -) and an agent like \"alice/planner\"", echo(handle))
	}
	return owner, slug, nil
}

// atHandle is a handle as people write it, perhaps after an "@" ("@bob"),
// without it.
func atHandle(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "@") }

// Principal is a resolved handle: a person or an agent.
type Principal struct {
	ID      string
	Kind    string // PrincipalUser or PrincipalAgent
	Handle  string
	OwnerID string // for a person, its own id
	Agent   *Agent // set for agents
	User    *User  // set for persons
}

// resolve finds the principal a handle — or a principal's id (usr_…,
// agt_…), as the rooms profile names participants — names. Archived agents
// and unknown handles are not_found alike.
func resolve(ctx context.Context, r Reader, handle string) (*Principal, error) {
	switch idKind(handle) {
	case IDUser:
		u, err := r.UserByID(ctx, handle)
		if err != nil {
			return nil, lookupErr(err, "no one has the id %q; take ids from the participant or peer lists", echo(handle))
		}
		return &Principal{ID: u.ID, Kind: PrincipalUser, Handle: u.Handle, OwnerID: u.ID, User: u}, nil
	case IDAgent:
		a, err := r.AgentByID(ctx, handle)
		if err == nil && a.Archived() {
			err = ErrNoRows
		}
		if err != nil {
			return nil, lookupErr(err, "no agent has the id %q; take ids from the participant or peer lists", echo(handle))
		}
		return agentPrincipal(a), nil
	}
	owner, slug, err := ParseHandle(handle)
	if err != nil {
		return nil, err
	}
	if slug == "" {
		u, err := r.UserByHandle(ctx, owner)
		if err != nil {
			return nil, lookupErr(err, "no one has the {handle} %q; check it with {list_contacts}", owner)
		}
		return &Principal{ID: u.ID, Kind: PrincipalUser, Handle: u.Handle, OwnerID: u.ID, User: u}, nil
	}
	a, err := r.AgentByHandle(ctx, owner, slug)
	if err == nil && a.Archived() {
		err = ErrNoRows
	}
	if err != nil {
		return nil, lookupErr(err, "no agent has the {handle} %q; check it with {list_contacts}", owner+"/"+slug)
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
