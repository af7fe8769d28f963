package reach_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/reach"
)

// peersWorld is the world with alice's public front desk, bob's public desk,
// bob's archived public agent, carol (alice's contact, named) with a public
// kiosk and a private agent, and dave, a stranger to alice.
func peersWorld(t *testing.T) *world {
	t.Helper()
	w := newWorld(t)
	for _, u := range []struct{ handle, name string }{{"carol", "Carol Crane"}, {"dave", ""}} {
		if _, err := w.Hub.CreateUser(ctx, u.handle, u.name); err != nil {
			t.Fatal(err)
		}
	}
	w.Public(t, "alice/front")
	w.Public(t, "bob/desk")
	w.Public(t, "bob/old")
	if _, err := w.Hub.ArchiveAgent(ctx, "bob/old"); err != nil {
		t.Fatal(err)
	}
	w.Public(t, "carol/kiosk")
	w.Agent(t, "carol/secret")
	alice, carol := w.Person(t, "alice"), w.Person(t, "carol")
	w.reach.RequestContact(ctx, alice, "carol", "")
	w.reach.RequestContact(ctx, carol, "alice", "")
	w.reach.RequestContact(ctx, w.Person(t, "dave"), "alice", "") // pending: not a contact
	return w
}

// handles is the peers as "kind:handle" (with "+public" for a public agent).
func handles(ps []reach.Peer) string {
	var out []string
	for _, p := range ps {
		s := p.Kind + ":" + p.Handle
		if p.Public {
			s += "+public"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestPeers: an agent may recruit its siblings and every public agent, never
// itself nor an archived agent, by handle; with notIn, minus who is there
// (§1, §3).
func TestPeers(t *testing.T) {
	w := peersWorld(t)
	desk := w.Agent(t, "bob/desk")
	for _, tc := range []struct {
		who  *hub.Caller
		want string
	}{
		{w.Planner, "agent:alice/front+public agent:alice/reviewer agent:bob/desk+public agent:carol/kiosk+public"},
		{desk, "agent:alice/front+public agent:bob/helper agent:carol/kiosk+public"},
		{w.Helper, "agent:alice/front+public agent:bob/desk+public agent:carol/kiosk+public"},
	} {
		ps, err := w.reach.Peers(ctx, tc.who, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := handles(ps); got != tc.want {
			t.Errorf("peers of %s:\n got %s\nwant %s", tc.who.Agent.Handle(), got, tc.want)
		}
	}
	ps, _ := w.reach.Peers(ctx, w.Planner, "")
	want := reach.Peer{Kind: hub.PrincipalAgent, Handle: "bob/desk", Name: "desk", Description: "test agent bob/desk", Public: true}
	if diff := cmp.Diff(want, ps[2], cmpIgnoreID); diff != "" || !strings.HasPrefix(ps[2].ID, "agt_") {
		t.Errorf("bob's desk as the planner's peer (-want +got):\n%s(id %q)", diff, ps[2].ID)
	}

	conv := w.Direct(t, w.Planner, "bob/desk")
	v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "front", Participants: []string{"alice/front"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		notIn, want string
	}{
		{conv, "agent:alice/front+public agent:alice/reviewer agent:carol/kiosk+public"},
		{v.Conversation.ID, "agent:alice/reviewer agent:bob/desk+public agent:carol/kiosk+public"},
	} {
		ps, err := w.reach.Peers(ctx, w.Planner, tc.notIn)
		if err != nil {
			t.Fatal(err)
		}
		if got := handles(ps); got != tc.want {
			t.Errorf("peers of the planner not in %s:\n got %s\nwant %s", tc.notIn, got, tc.want)
		}
	}
	for _, tc := range []struct {
		who   *hub.Caller
		notIn string
	}{{w.Reviewer, conv}, {w.Planner, "conv_nothing"}} {
		if _, err := w.reach.Peers(ctx, tc.who, tc.notIn); code(err) != "not_found" {
			t.Errorf("peers of %s not in %s: %v, want not_found", tc.who.Agent.Handle(), tc.notIn, err)
		}
	}
}

var cmpIgnoreID = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ID" }, cmp.Ignore())

// TestPersonPeers: a person may bring in their accepted contacts, their own
// agents and every public agent, by kind then handle; kind filters; notIn
// leaves out who is there; and personMayAdd agrees, naming the step when
// it says no.
func TestPersonPeers(t *testing.T) {
	w := peersWorld(t)
	alice := w.Person(t, "alice")
	all := "agent:alice/front+public agent:alice/planner agent:alice/reviewer agent:bob/desk+public agent:carol/kiosk+public user:carol"
	for _, tc := range []struct{ kind, want string }{
		{"", all},
		{"agent", "agent:alice/front+public agent:alice/planner agent:alice/reviewer agent:bob/desk+public agent:carol/kiosk+public"},
		{"USER", "user:carol"},
		{" User ", "user:carol"},
	} {
		ps, err := w.reach.PersonPeers(ctx, alice, "", tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		if got := handles(ps); got != tc.want {
			t.Errorf("alice's peers of kind %q:\n got %s\nwant %s", tc.kind, got, tc.want)
		}
	}
	ps, _ := w.reach.PersonPeers(ctx, alice, "", "user")
	if diff := cmp.Diff([]reach.Peer{{Kind: hub.PrincipalUser, Handle: "carol", Name: "Carol Crane"}}, ps, cmpIgnoreID); diff != "" || !strings.HasPrefix(ps[0].ID, "usr_") {
		t.Errorf("carol as alice's peer (-want +got):\n%s", diff)
	}
	_, err := w.reach.PersonPeers(ctx, alice, "", "robots")
	if code(err) != "invalid_argument" || !strings.Contains(err.Error(), `"user"`) || !strings.Contains(err.Error(), `"agent"`) {
		t.Errorf("kind robots: %v; want invalid_argument naming user and agent", err)
	}

	conv := w.Direct(t, w.Planner, "bob/desk")
	ps, err = w.reach.PersonPeers(ctx, alice, conv, "")
	if got, want := handles(ps), "agent:alice/front+public agent:alice/reviewer agent:carol/kiosk+public user:carol"; err != nil || got != want {
		t.Errorf("alice's peers not in the planner's conversation with the desk: %s, %v\nwant %s", got, err, want)
	}
	// bob acts in it through his desk.
	ps, err = w.reach.PersonPeers(ctx, w.Person(t, "bob"), conv, "agent")
	if got, want := handles(ps), "agent:alice/front+public agent:bob/helper agent:carol/kiosk+public"; err != nil || got != want {
		t.Errorf("bob's agent peers not in the conversation: %s, %v\nwant %s", got, err, want)
	}
	for _, notIn := range []string{conv, "conv_nothing"} {
		if _, err := w.reach.PersonPeers(ctx, w.Person(t, "carol"), notIn, ""); code(err) != "not_found" {
			t.Errorf("carol's peers not in %s: %v, want not_found", notIn, err)
		}
	}

	// personMayAdd says yes to exactly the peers (and alice herself), and
	// otherwise what to do.
	listed, _ := w.reach.PersonPeers(ctx, alice, "", "")
	for _, tc := range []struct{ handle, want string }{
		{"alice", ""},
		{"carol", ""},
		{"bob", "denied:contact"},
		{"dave", "denied:contact"},
		{"alice/planner", ""},
		{"alice/front", ""},
		{"bob/desk", ""},
		{"carol/kiosk", ""},
		{"bob/helper", "not_found"}, // another's private agent is as good as none (§15)
		{"carol/secret", "not_found"},
		{"bob/old", "not_found"},
	} {
		err := w.Hub.PersonMayAdd(ctx, alice, tc.handle)
		if code(err) != tc.want {
			t.Errorf("may alice bring in %s: %v, want %q", tc.handle, err, tc.want)
		}
		inPeers := slices.ContainsFunc(listed, func(p reach.Peer) bool { return p.Handle == tc.handle })
		if (err == nil) != (inPeers || tc.handle == "alice") {
			t.Errorf("%s: personMayAdd says %v but PersonPeers lists it: %v", tc.handle, err, inPeers)
		}
	}
	if helper, old := w.Hub.PersonMayAdd(ctx, alice, "bob/helper"), w.Hub.PersonMayAdd(ctx, alice, "bob/nope"); helper.Error() != strings.ReplaceAll(old.Error(), "bob/nope", "bob/helper") {
		t.Errorf("bob's private agent (%v) is told apart from none (%v)", helper, old)
	}
	err = w.Hub.PersonMayAdd(ctx, alice, "dave")
	if !strings.Contains(err.Error(), "contact request") {
		t.Errorf("bringing in dave: %v; want the step (a contact request)", err)
	}
}
