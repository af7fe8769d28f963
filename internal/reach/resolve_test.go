package reach_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/rooms"
)

// TestResolveHandle: every person is found by handle ("@" allowed), an
// agent when it is not archived and the person's own, public, or a
// contact's; anyone else is not_found as an unknown handle is.
func TestResolveHandle(t *testing.T) {
	w := newWorld(t)
	alice := w.Person(t, "alice")
	bob, err := rooms.New(w.Hub, w.Store).UpdateUserName(ctx, w.Person(t, "bob"), "Bob B")
	if err != nil {
		t.Fatal(err)
	}
	w.Agent(t, "alice/old")
	if _, err := w.Hub.ArchiveAgent(ctx, "alice/old"); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]*reach.Resolved{
		"bob":            {ID: bob.ID, Kind: "user", Handle: "bob", Name: "Bob B"},
		"@BOB":           {ID: bob.ID, Kind: "user", Handle: "bob", Name: "Bob B"},
		" @alice ":       {ID: alice.ID, Kind: "user", Handle: "alice"},
		"@alice/planner": {ID: w.Planner.Agent.ID, Kind: "agent", Handle: "alice/planner", Name: "planner", Description: "test agent alice/planner"},
		"alice/reviewer": {ID: w.Reviewer.Agent.ID, Kind: "agent", Handle: "alice/reviewer", Name: "reviewer", Description: "test agent alice/reviewer"},
	} {
		got, err := w.reach.ResolveHandle(ctx, alice, in)
		if diff := cmp.Diff(want, got); err != nil || diff != "" {
			t.Errorf("%q: %v (-want +got):\n%s", in, err, diff)
		}
	}
	for in, msg := range map[string]string{
		"nobody":       `no one has the handle "nobody"`,
		"@bob/helper":  `no one has the handle "bob/helper"`,
		"alice/old":    `no one has the handle "alice/old"`,
		"alice/nobody": `no one has the handle "alice/nobody"`,
	} {
		_, err := w.reach.ResolveHandle(ctx, alice, in)
		if e := hub.AsError(err); e.Kind != hub.KindNotFound || e.Text(nil, nil) != msg {
			t.Errorf("%q: %v, want not_found %q", in, err, msg)
		}
	}
	if _, err := w.reach.ResolveHandle(ctx, alice, "@"); code(err) != "invalid_argument" {
		t.Errorf("a lone @: %v, want invalid_argument", err)
	}

	// Other owners' agents the person may see: public ones, and those of
	// contacts, as list_my_peers lists them.
	carol, err := w.Hub.CreateUser(ctx, "carol", "Carol C")
	if err != nil {
		t.Fatal(err)
	}
	w.Agent(t, "carol/open")
	w.Agent(t, "carol/closed")
	if _, err := w.Hub.SetAgentPublic(ctx, carol, "open", true); err != nil {
		t.Fatal(err)
	}
	if got, err := w.reach.ResolveHandle(ctx, alice, "carol/open"); err != nil || got.Handle != "carol/open" || got.Kind != hub.PrincipalAgent {
		t.Errorf("carol's public agent: %+v, %v", got, err)
	}
	if _, err := w.reach.ResolveHandle(ctx, alice, "carol/closed"); code(err) != "not_found" {
		t.Errorf("carol's private agent, carol no contact: %v, want not_found", err)
	}
	if _, err := w.reach.RequestContact(ctx, alice, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.reach.ResolveHandle(ctx, alice, "bob/helper"); code(err) != "not_found" {
		t.Errorf("bob's agent while the request waits: %v, want not_found", err)
	}
	if _, err := w.Hub.DecideContact(ctx, bob, "alice", true); err != nil {
		t.Fatal(err)
	}
	if got, err := w.reach.ResolveHandle(ctx, alice, "bob/helper"); err != nil || got.ID != w.Helper.Agent.ID || got.Description != "test agent bob/helper" {
		t.Errorf("bob's agent once bob is a contact: %+v, %v", got, err)
	}
}
