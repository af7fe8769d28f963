package hub

import (
	"context"
	"errors"
	"slices"
	"time"
)

// MaxInstances is how many session names one agent may use (§5).
const MaxInstances = 50

// InstanceForgotten is how long a session name may go unseen before a new
// name may take its place under MaxInstances.
const InstanceForgotten = 7 * 24 * time.Hour

// Whoami is the caller's identity and starting point (§10.3 whoami).
type Whoami struct {
	Caller        *Caller
	Instance      string
	Instances     []Instance
	Siblings      []*Agent
	LatestCursor  string
	Grants        []GrantView
	PendingGrants []*GrantRequest
	// Home is the owner's home project with the caller's access there
	// ("" when its owner took it out).
	Home ProjectListing
	// Presence is the presence of the caller and of each sibling, with
	// their sessions', by agent id (§19).
	Presence map[string]AgentPresence
}

// Whoami describes the caller. With instance it registers (or refreshes) the
// session name, with note when given; the 51st name is refused (§5).
func (h *Hub) Whoami(ctx context.Context, c *Caller, instance, note string) (*Whoami, error) {
	instance, err := NormalizeInstance(instance, "instance")
	if err != nil {
		return nil, err
	}
	if note, err = checkText("instance_note", note, 0, MaxNote); err != nil {
		return nil, err
	}
	if note != "" && instance == "" {
		return nil, invalid("", "instance_note describes a named session: give instance too")
	}
	if instance != "" {
		if err := h.recordInstance(ctx, c, instance, note); err != nil {
			return nil, err
		}
	}
	w := &Whoami{Caller: c, Instance: instance}
	if w.Instances, err = h.store.Instances(ctx, c.Agent.ID); err != nil {
		return nil, AsError(err)
	}
	if w.Siblings, err = h.siblings(ctx, c); err != nil {
		return nil, err
	}
	if w.LatestCursor, err = h.LatestCursor(ctx, c.Agent.ID); err != nil {
		return nil, err
	}
	if w.Home.Project, err = h.home(ctx, c.Agent.OwnerID); err != nil {
		return nil, err
	}
	pa, err := h.store.ProjectAgent(ctx, w.Home.Project.ID, c.Agent.ID)
	switch {
	case err == nil:
		w.Home.Access = effectiveAccess(w.Home.Project, pa)
	case !errors.Is(err, ErrNoRows):
		return nil, AsError(err)
	}
	if w.Grants, err = grantViews(ctx, h.store, c.Agent); err != nil {
		return nil, err
	}
	if w.PendingGrants, err = h.store.GrantRequests(ctx, "", c.Agent.ID); err != nil {
		return nil, AsError(err)
	}
	if w.Presence, err = h.Presences(ctx, append([]*Agent{c.Agent}, w.Siblings...)); err != nil {
		return nil, err
	}
	return w, nil
}

// recordInstance registers or refreshes a session name with its last-seen
// time (and note, when given); a new name past the MaxInstances-th is
// refused (§5).
func (h *Hub) recordInstance(ctx context.Context, c *Caller, name, note string) error {
	err := h.store.Update(ctx, func(tx Tx) error {
		known, err := tx.Instances(ctx, c.Agent.ID)
		if err != nil {
			return err
		}
		if len(known) >= MaxInstances && !slices.ContainsFunc(known, func(i Instance) bool { return i.Name == name }) {
			// A name unseen for a week gives its place to the new one;
			// known is ordered by last sighting, newest first.
			oldest := known[len(known)-1]
			if h.now().Sub(oldest.LastSeen) < InstanceForgotten {
				return invalid("too_many_instances", "this agent already uses %d session names, the limit; reuse one of those listed by whoami (a name unused for %d days is forgotten)", MaxInstances, int(InstanceForgotten.Hours()/24))
			}
			if err := tx.DeleteInstance(ctx, c.Agent.ID, oldest.Name); err != nil {
				return err
			}
		}
		return tx.UpsertInstance(ctx, c.Agent.ID, name, note, h.now())
	})
	if err != nil {
		return asOutcome(err)
	}
	return nil
}

// seeInstance normalizes the session name a tool was given and records the
// session as seen; the write happens at most once a minute per name and
// process, so using a name costs no write on most calls.
func (h *Hub) seeInstance(ctx context.Context, c *Caller, raw string) (string, error) {
	name, err := NormalizeInstance(raw, "instance")
	if err != nil || name == "" {
		return name, err
	}
	now := h.now()
	key := c.Agent.ID + "/" + name
	h.mu.Lock()
	due := now.Sub(h.seen[key]) >= touchEvery
	h.mu.Unlock()
	if !due {
		return name, nil
	}
	if err := h.recordInstance(ctx, c, name, ""); err != nil {
		return "", err
	}
	h.mu.Lock()
	h.seen[key] = now
	h.mu.Unlock()
	return name, nil
}

// siblings lists the caller's owner's other active agents.
func (h *Hub) siblings(ctx context.Context, c *Caller) ([]*Agent, error) {
	all, err := h.store.Agents(ctx, c.Agent.OwnerID, false)
	if err != nil {
		return nil, AsError(err)
	}
	return slices.DeleteFunc(all, func(a *Agent) bool { return a.ID == c.Agent.ID }), nil
}
