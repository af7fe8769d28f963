package hub

import (
	"context"
	"fmt"
	"strings"
)

// Refusal is a contract outcome that is not an error (§7, §10.2): the call
// was understood and refused, and the face returns it as a normal result
// with a status (and a trace id). Reason starts with one word naming the rule
// ("reach", "closing", "notice", …), then a sentence for people.
type Refusal struct {
	Status  string // "denied", "held_by_other"
	Reason  string
	Details map[string]any // extra result fields, e.g. held_by
}

func (r *Refusal) Error() string { return r.Status + ": " + r.Reason }

// Word is the first word of Reason: the rule that refused.
func (r *Refusal) Word() string {
	w, _, _ := strings.Cut(r.Reason, ":")
	return w
}

func deny(word, format string, args ...any) *Refusal {
	return &Refusal{Status: "denied", Reason: word + ": " + fmt.Sprintf(format, args...)}
}

// reach decides whether agent from may talk to principal to (§3). It returns
// nil when allowed, or a Refusal whose reason says which step would allow
// it. Contacts, grants and inbound asks are not built yet, so for now an
// agent reaches exactly its owner and its siblings.
func reach(from *Agent, to *Principal) error {
	switch {
	case to.ID == from.ID:
		return deny("self", "an agent cannot message itself; sessions of one agent meet in a shared project thread")
	case to.Kind == PrincipalUser && to.ID == from.OwnerID:
		return nil // its own owner
	case to.Kind == PrincipalAgent && to.OwnerID == from.OwnerID:
		return nil // a sibling
	}
	owner := strings.SplitN(to.Handle, "/", 2)[0]
	return deny("reach", "%s is not your owner or one of your owner's agents; talking to %s needs %s to be a contact of your owner %s and a grant from %s",
		to.Handle, owner, owner, from.OwnerHandle, from.OwnerHandle)
}

// resolveReachable resolves handles and checks that from may reach each.
// Duplicates are dropped; the caller's own handle is refused by reach.
func resolveReachable(ctx context.Context, r Reader, from *Agent, handles []string) ([]*Principal, error) {
	seen := map[string]bool{}
	var out []*Principal
	for _, hd := range handles {
		p, err := resolve(ctx, r, hd)
		if err != nil {
			return nil, err
		}
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		if err := reach(from, p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
