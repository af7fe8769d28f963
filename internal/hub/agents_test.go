package hub_test

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
	alice := w.person(t, "alice")
	a, secret, err := w.hub.RegisterAgent(ctx, alice, "Release Planner", "plans the releases")
	if err != nil || a.Handle() != "alice/release-planner" || a.Description != "plans the releases" || a.OwnerID != alice.ID {
		t.Fatalf("registering: %+v, %v", a, err)
	}
	c, err := w.hub.Authenticate(ctx, secret)
	if err != nil || c.Agent.ID != a.ID {
		t.Fatalf("the registered token: %+v, %v; want it to authenticate as %s", c, err, a.Handle())
	}
	// The name given is kept as the display name, read back every way.
	if got, _ := w.hub.Agent(ctx, "alice/release-planner"); a.DisplayName() != "Release Planner" || c.Agent.DisplayName() != "Release Planner" || got.DisplayName() != "Release Planner" {
		t.Errorf("display name: %q, %q by its token, %q read back; want Release Planner", a.DisplayName(), c.Agent.DisplayName(), got.DisplayName())
	}
	if w.planner.Agent.DisplayName() != "planner" {
		t.Errorf("an agent made with no name: %q, want its slug", w.planner.Agent.DisplayName())
	}
	if diff := cmp.Diff(hub.AllScopes, c.Scopes); diff != "" {
		t.Errorf("scopes (-want +got):\n%s", diff)
	}
	ts, _ := w.hub.Tokens(ctx, "alice", "release-planner")
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
		a, _, err := w.hub.RegisterAgent(ctx, alice, tc.name, "an agent")
		if err != nil || a.Handle() != tc.want {
			t.Errorf("%q: %+v, %v; want %s", tc.name, a, err, tc.want)
		}
	}
	// An archived agent keeps its slug.
	if _, err := w.hub.ArchiveAgent(ctx, "alice/r2-d2"); err != nil {
		t.Fatal(err)
	}
	if a, _, err := w.hub.RegisterAgent(ctx, alice, "r2 d2", "an agent"); err != nil || a.Handle() != "alice/r2-d2-2" {
		t.Errorf("after archiving: %+v, %v; want alice/r2-d2-2", a, err)
	}

	for _, tc := range []struct{ name, desc, code, msg string }{
		{"!!!", "an agent", "invalid_argument", `the name "!!!" gives no handle: use letters or digits, like "Release Planner" (the agent becomes alice/release-planner)`},
		{"", "an agent", "invalid_argument", "name is required"},
		{"Helper", "", "invalid_argument", "description is required"},
		{"Helper", "  ", "invalid_argument", "description is required"},
		{"Helper", strings.Repeat("d", hub.MaxDescription+1), "too_long", "the limit is 1000 characters"},
	} {
		_, _, err := w.hub.RegisterAgent(ctx, alice, tc.name, tc.desc)
		if code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q / %.20q: %v, want %s saying %q", tc.name, tc.desc, err, tc.code, tc.msg)
		}
	}
	if _, err := w.hub.Agent(ctx, "alice/helper"); code(err) != "not_found" {
		t.Errorf("a refused registration made an agent: %v", err)
	}
}

// public makes the agent handle (created when missing) public and returns
// it signed in afresh.
func public(t *testing.T, w *world, handle string) *hub.Caller {
	t.Helper()
	c := w.agent(t, handle)
	a, err := w.hub.SetAgentPublic(ctx, c.Owner, c.Agent.Slug, true)
	if err != nil || !a.Public {
		t.Fatalf("making %s public: %+v, %v", handle, a, err)
	}
	if c, err = w.hub.Authenticate(ctx, w.tokens[handle]); err != nil || !c.Agent.Public {
		t.Fatalf("%s signed in: %+v, %v; want it public", handle, c, err)
	}
	return c
}

// TestSetAgentPublic: only the owner marks their agent public or private;
// another's agent is not_found, and setting it again is not an error (§1).
func TestSetAgentPublic(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	if _, err := w.hub.SetAgentPublic(ctx, alice, "helper", true); code(err) != "not_found" {
		t.Fatalf("alice making bob's helper public: %v, want not_found", err)
	}
	if _, err := w.hub.SetAgentPublic(ctx, alice, "bob/helper", true); code(err) != "not_found" {
		t.Fatalf("alice making bob/helper public: %v, want not_found", err)
	}
	for _, tc := range []struct {
		slug string
		on   bool
	}{{"helper", true}, {"bob/helper", true}, {"helper", false}, {"helper", false}} {
		a, err := w.hub.SetAgentPublic(ctx, bob, tc.slug, tc.on)
		if err != nil || a.Public != tc.on {
			t.Fatalf("bob setting %s public=%v: %+v, %v", tc.slug, tc.on, a, err)
		}
		if a, err := w.hub.Agent(ctx, "bob/helper"); err != nil || a.Public != tc.on {
			t.Fatalf("bob/helper read back: %+v, %v; want public=%v", a, err, tc.on)
		}
	}
}

// TestCreateOwnAgentSaysWhatASlugIs: a person naming a new agent is told
// what a slug is, never what a person's handle is.
func TestCreateOwnAgentSaysWhatASlugIs(t *testing.T) {
	w := newWorld(t)
	alice := w.owner(t)
	for slug, want := range map[string]string{
		"":         "slug is required: the agent's name after alice/, like planner",
		"  ":       "slug is required",
		"Bad Name": `the slug "Bad Name" is not a name an agent can have: give 1–40 of a-z, 0-9 and -`,
		"-x":       `the slug "-x" is not a name an agent can have`,
		"bob/x":    "give the name after alice/",
	} {
		_, err := w.hub.CreateOwnAgent(ctx, alice, slug, "", "")
		if e := hub.AsError(err); e.Kind != hub.KindInvalid || !strings.HasPrefix(e.Text(nil, nil), want) {
			t.Errorf("slug %q: %v, want invalid starting %q", slug, err, want)
		}
	}
	if a, err := w.hub.CreateOwnAgent(ctx, alice, "Writer", "", ""); err != nil || a.Handle() != "alice/writer" {
		t.Errorf("slug Writer: %v, %v; want alice/writer", a, err)
	}
}
