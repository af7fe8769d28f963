package rooms_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestRegisterAgent: one call makes an agent, its slug from the name, made
// unique with -2, -3 …, and a token with every scope that authenticates at
// once.
func TestRegisterAgent(t *testing.T) {
	w := newWorld(t)
	alice := w.Person(t, "alice")
	a, secret, err := w.rooms.RegisterAgent(ctx, alice, "Release Planner", "plans the releases")
	if err != nil || a.Handle() != "alice/release-planner" || a.Description != "plans the releases" || a.OwnerID != alice.ID {
		t.Fatalf("registering: %+v, %v", a, err)
	}
	c, err := w.Hub.Authenticate(ctx, secret)
	if err != nil || c.Agent.ID != a.ID {
		t.Fatalf("the registered token: %+v, %v; want it to authenticate as %s", c, err, a.Handle())
	}
	// The name given is kept as the display name, read back every way.
	if got, _ := w.Hub.Agent(ctx, "alice/release-planner"); a.DisplayName() != "Release Planner" || c.Agent.DisplayName() != "Release Planner" || got.DisplayName() != "Release Planner" {
		t.Errorf("display name: %q, %q by its token, %q read back; want Release Planner", a.DisplayName(), c.Agent.DisplayName(), got.DisplayName())
	}
	if w.Planner.Agent.DisplayName() != "planner" {
		t.Errorf("an agent made with no name: %q, want its slug", w.Planner.Agent.DisplayName())
	}
	if diff := cmp.Diff(hub.AllScopes, c.Scopes); diff != "" {
		t.Errorf("scopes (-want +got):\n%s", diff)
	}
	ts, _ := w.Hub.Tokens(ctx, "alice", "release-planner")
	if len(ts) != 1 || ts[0].Name != "registered" {
		t.Errorf("the agent's tokens: %+v, want one named registered", ts)
	}

	for _, tc := range []struct{ name, want string }{
		{"release planner", "alice/release-planner-2"},
		{"Release_Planner!", "alice/release-planner-3"},
		{"  --Écrivain  de__notes-- ", "alice/crivain-de-notes"},
		{"planner", "alice/planner-2"}, // the world's alice/planner
		{strings.Repeat("a", 45), "alice/" + strings.Repeat("a", 40)},
		{strings.Repeat("a", 45), "alice/" + strings.Repeat("a", 38) + "-2"},
		{strings.Repeat("b", 39) + " c", "alice/" + strings.Repeat("b", 39)},
		{"R2-D2", "alice/r2-d2"},
	} {
		a, _, err := w.rooms.RegisterAgent(ctx, alice, tc.name, "an agent")
		if err != nil || a.Handle() != tc.want {
			t.Errorf("%q: %+v, %v; want %s", tc.name, a, err, tc.want)
		}
	}
	// An archived agent keeps its slug.
	if _, err := w.Hub.ArchiveAgent(ctx, "alice/r2-d2"); err != nil {
		t.Fatal(err)
	}
	if a, _, err := w.rooms.RegisterAgent(ctx, alice, "r2 d2", "an agent"); err != nil || a.Handle() != "alice/r2-d2-2" {
		t.Errorf("after archiving: %+v, %v; want alice/r2-d2-2", a, err)
	}

	for _, tc := range []struct{ name, desc, code, msg string }{
		{"!!!", "an agent", "invalid_argument", `the name "!!!" gives no handle: use letters or digits, like "Release Planner" (the agent becomes alice/release-planner)`},
		{"", "an agent", "invalid_argument", "name is required"},
		{"Helper", "", "invalid_argument", "description is required"},
		{"Helper", "  ", "invalid_argument", "description is required"},
		{"Helper", strings.Repeat("d", hub.MaxDescription+1), "too_long", "the limit is 1000 characters"},
	} {
		_, _, err := w.rooms.RegisterAgent(ctx, alice, tc.name, tc.desc)
		if code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q / %.20q: %v, want %s saying %q", tc.name, tc.desc, err, tc.code, tc.msg)
		}
	}
	if _, err := w.Hub.Agent(ctx, "alice/helper"); code(err) != "not_found" {
		t.Errorf("a refused registration made an agent: %v", err)
	}
}
