package hub_test

import (
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestSetAgentPublic: only the owner marks their agent public or private;
// another's agent is not_found, and setting it again is not an error (§1).
func TestSetAgentPublic(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	if _, err := w.Hub.SetAgentPublic(ctx, alice, "helper", true); code(err) != "not_found" {
		t.Fatalf("alice making bob's helper public: %v, want not_found", err)
	}
	if _, err := w.Hub.SetAgentPublic(ctx, alice, "bob/helper", true); code(err) != "not_found" {
		t.Fatalf("alice making bob/helper public: %v, want not_found", err)
	}
	for _, tc := range []struct {
		slug string
		on   bool
	}{{"helper", true}, {"bob/helper", true}, {"helper", false}, {"helper", false}} {
		a, err := w.Hub.SetAgentPublic(ctx, bob, tc.slug, tc.on)
		if err != nil || a.Public != tc.on {
			t.Fatalf("bob setting %s public=%v: %+v, %v", tc.slug, tc.on, a, err)
		}
		if a, err := w.Hub.Agent(ctx, "bob/helper"); err != nil || a.Public != tc.on {
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
		_, err := w.Hub.CreateOwnAgent(ctx, alice, slug, "", "")
		if e := hub.AsError(err); e.Kind != hub.KindInvalid || !strings.HasPrefix(e.Text(nil, nil), want) {
			t.Errorf("slug %q: %v, want invalid starting %q", slug, err, want)
		}
	}
	if a, err := w.Hub.CreateOwnAgent(ctx, alice, "Writer", "", ""); err != nil || a.Handle() != "alice/writer" {
		t.Errorf("slug Writer: %v, %v; want alice/writer", a, err)
	}
}
