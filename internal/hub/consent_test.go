package hub_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/reach"
)

func (w *world) person(t *testing.T, handle string) *hub.User {
	t.Helper()
	u, err := w.Hub.User(ctx, handle)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestConsentPath walks §3 from strangers to a conversation and back: no
// contact, contact, grant, inbound ask, approval, messages both ways, then a
// denial that stops further sends and opens.
func TestConsentPath(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	start := w.Latest(t, w.Planner)

	open := func(want string) string {
		t.Helper()
		v, err := w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/helper"})
		if code(err) != want {
			t.Fatalf("open: %v, want %q", err, want)
		}
		if v != nil {
			return v.Conversation.ID
		}
		return ""
	}
	open("denied:contact")

	if c, err := w.reach.RequestContact(ctx, alice, "bob", ""); err != nil || c.Status != hub.ContactPending {
		t.Fatalf("contact request: %+v, %v", c, err)
	}
	if _, err := w.Hub.DecideContact(ctx, alice, "bob", true); code(err) != "not_found" {
		t.Fatalf("approving one's own request: %v", err)
	}
	if c, err := w.Hub.DecideContact(ctx, bob, "alice", true); err != nil || c.Status != hub.ContactAccepted {
		t.Fatalf("contact approval: %+v, %v", c, err)
	}
	if c, err := w.Hub.DecideContact(ctx, bob, "alice", true); err != nil || c.Status != hub.ContactAccepted {
		t.Fatalf("approving twice: %+v, %v", c, err)
	}
	open("denied:grant")

	req, err := w.Hub.RequestGrant(ctx, w.Planner, "bob", false, true, "to coordinate the release with bob's helper")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideGrantRequest(ctx, bob, req.ID, true); code(err) != "not_found" {
		t.Fatalf("another person deciding alice's grant request: %v", err)
	}
	if _, err := w.Hub.DecideGrantRequest(ctx, alice, req.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideGrantRequest(ctx, alice, req.ID, true); err != nil {
		t.Fatalf("approving twice: %v, want the same answer", err)
	}
	if _, err := w.Hub.DecideGrantRequest(ctx, alice, req.ID, false); code(err) != "conflict" {
		t.Fatalf("rejecting an approved request: %v, want conflict", err)
	}
	open("pending_approval:pending_approval")
	open("pending_approval:pending_approval") // asking again refreshes the same ask

	approvals, err := w.Hub.Approvals(ctx, bob)
	if err != nil || len(approvals) != 1 || approvals[0].Kind != "inbound_ask" {
		t.Fatalf("bob's approvals: %+v, %v; want one inbound ask", approvals, err)
	}
	if _, err := w.Hub.DecideInbound(ctx, bob, approvals[0].ID, true); err != nil {
		t.Fatal(err)
	}
	r, err := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: start})
	var types []string
	var opened string
	for _, e := range r.Events {
		types = append(types, e.Type)
		if e.Type == hub.EventConversationOpened {
			opened = e.ConversationID
		}
	}
	if err != nil || opened == "" || types[len(types)-2] != hub.EventInboundDecided {
		t.Fatalf("the planner heard %v, %v; want grant.changed, inbound.decided, conversation.opened", types, err)
	}
	if conv := open(""); conv != opened {
		t.Fatalf("opening again found %s, want %s", conv, opened)
	}
	w.Send(t, w.Planner, opened, "hello bob's helper")
	w.Send(t, w.Helper, opened, "hello alice's planner")
	// The helper may answer the planner, and its list_contacts says so.
	if got := contactsOf(t, w, w.Helper); got != "alice:allowed:alice/planner" {
		t.Fatalf("the helper's contacts: %s; want alice allowed with the planner it may answer", got)
	}
	// What list_contacts says is what opening does: the helper, which may
	// answer the planner, finds their conversation by open_conversation.
	if v, err := w.Hub.OpenConversation(ctx, w.Helper, []string{"alice/planner"}); err != nil || v.Conversation.ID != opened {
		t.Fatalf("the helper opening with the planner it may answer: %+v, %v; want %s", v, err, opened)
	}
	if got := contactsOf(t, w, w.Planner); got != "bob:allowed:bob/helper" {
		t.Fatalf("the planner's contacts: %s", got)
	}

	// Bob changes his mind: further sends and opens are refused.
	if _, err := w.Hub.DecideInbound(ctx, bob, approvals[0].ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: opened, Body: "still there?"}); code(err) != "denied:denied" {
		t.Fatalf("send after the denial: %v", err)
	}
	open("denied:denied")
	if _, err := w.Hub.SendMessage(ctx, w.Helper, hub.SendInput{ConversationID: opened, Body: "still there?"}); code(err) != "denied:grant" {
		t.Fatalf("the helper's send after the denial: %v", err)
	}
	if got := contactsOf(t, w, w.Helper); got != "alice:denied:" {
		t.Fatalf("the helper's contacts after the denial: %s; want alice denied", got)
	}
}

// contactsOf is c's list_contacts as "person:status:agents" lines.
func contactsOf(t *testing.T, w *world, c *hub.Caller) string {
	t.Helper()
	ct, err := reach.New(w.Hub, w.Store).ListContacts(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range ct.Contacts {
		var agents []string
		for _, a := range r.Agents {
			agents = append(agents, a.Handle())
		}
		lines = append(lines, r.Person.Handle+":"+r.Status+":"+strings.Join(agents, ","))
	}
	return strings.Join(lines, "\n")
}

func TestMutualContactRequests(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	if _, err := w.reach.RequestContact(ctx, alice, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if c, err := w.reach.RequestContact(ctx, bob, "alice", ""); err != nil || c.Status != hub.ContactAccepted {
		t.Fatalf("requests both ways: %+v, %v; want accepted", c, err)
	}
	// A cancelled request cannot be approved.
	carol, err := w.Hub.CreateUser(ctx, "carol", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.reach.RequestContact(ctx, carol, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.reach.CancelContact(ctx, carol, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideContact(ctx, alice, "carol", true); code(err) != "not_found" {
		t.Fatalf("approving a cancelled request: %v", err)
	}
	// A denial stands until the person who denied changes it.
	if _, err := w.reach.RequestContact(ctx, carol, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideContact(ctx, alice, "carol", false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.reach.RequestContact(ctx, carol, "alice", ""); code(err) != "declined" {
		t.Fatalf("asking again after a denial: %v", err)
	}
	if c, err := w.Hub.DecideContact(ctx, alice, "carol", true); err != nil || c.Status != hub.ContactAccepted {
		t.Fatalf("the denier changing her mind: %+v, %v", c, err)
	}
	// Either of the two may end an accepted contact.
	if c, err := w.Hub.DecideContact(ctx, carol, "alice", false); err != nil || c.Status != hub.ContactRemoved {
		t.Fatalf("the one who asked ending the contact: %+v, %v", c, err)
	}
	if c, err := w.reach.RequestContact(ctx, carol, "alice", ""); err != nil || c.Status != hub.ContactPending {
		t.Fatalf("asking again after ending it: %+v, %v; want a new request for alice to answer", c, err)
	}
}

// consent makes owner a's agent able to reach owner b's agents (contact,
// grant, let in) and returns the conversation it opened with target.
func consent(t *testing.T, w *world, from *hub.Caller, b *hub.User, target string) string {
	t.Helper()
	a := w.person(t, from.Owner.Handle)
	if _, err := w.reach.RequestContact(ctx, a, b.Handle, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.reach.RequestContact(ctx, b, a.Handle, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SetGrant(ctx, a, from.Agent.Handle(), b.Handle, true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.OpenConversation(ctx, from, []string{target}); code(err) != "pending_approval:pending_approval" {
		t.Fatalf("open: %v", err)
	}
	asks, _ := w.Hub.Approvals(ctx, b)
	if _, err := w.Hub.DecideInbound(ctx, b, asks[len(asks)-1].ID, true); err != nil {
		t.Fatal(err)
	}
	v, err := w.Hub.OpenConversation(ctx, from, []string{target})
	if err != nil {
		t.Fatal(err)
	}
	return v.Conversation.ID
}

// TestNoThirdOwnerWithoutContact: an agent reaching two owners cannot bring
// them together in one conversation unless they are contacts themselves.
func TestNoThirdOwnerWithoutContact(t *testing.T) {
	w := newWorld(t)
	carol, err := w.Hub.CreateUser(ctx, "carol", "")
	if err != nil {
		t.Fatal(err)
	}
	w.Agent(t, "carol/spy")
	consent(t, w, w.Helper, w.person(t, "alice"), "alice/planner")
	consent(t, w, w.Helper, carol, "carol/spy")
	v, err := w.Hub.CreateThread(ctx, w.Helper, hub.ThreadSpec{Title: "private", Participants: []string{"alice/planner"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AddParticipant(ctx, w.Helper, v.Conversation.ID, "carol/spy"); code(err) != "denied:contact" {
		t.Fatalf("bringing carol's agent in with alice's: %v, want denied:contact", err)
	}
	if _, err := w.Hub.CreateThread(ctx, w.Helper, hub.ThreadSpec{Title: "mix", Participants: []string{"alice/planner", "carol/spy"}}); code(err) != "denied:contact" {
		t.Fatalf("a thread mixing alice's and carol's agents: %v, want denied:contact", err)
	}
}

// TestInboundDecisionsAreIdempotent: deciding the same way twice tells the
// agent once.
func TestInboundDecisionsAreIdempotent(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	w.reach.RequestContact(ctx, alice, "bob", "")
	w.reach.RequestContact(ctx, bob, "alice", "")
	w.Hub.SetGrant(ctx, alice, "alice/planner", "bob", false, true)
	start := w.Latest(t, w.Planner)
	w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/helper"})
	asks, _ := w.Hub.Approvals(ctx, bob)
	for range 3 {
		if _, err := w.Hub.DecideInbound(ctx, bob, asks[0].ID, true); err != nil {
			t.Fatal(err)
		}
	}
	r, _ := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: start})
	n := 0
	for _, e := range r.Events {
		if e.Type == hub.EventInboundDecided || e.Type == hub.EventConversationOpened {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("the planner heard %d inbound.decided/conversation.opened events, want one of each", n)
	}
}

// TestParallelDecisionsDecideOnce: ten approvals of one grant request at
// once all succeed and the agent hears one grant.changed.
func TestParallelDecisionsDecideOnce(t *testing.T) {
	w := newWorld(t)
	alice := w.person(t, "alice")
	req, err := w.Hub.RequestGrant(ctx, w.Planner, "bob", true, false, "talk to bob")
	if err != nil {
		t.Fatal(err)
	}
	start := w.Latest(t, w.Planner)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range 10 {
		wg.Go(func() { _, errs[i] = w.Hub.DecideGrantRequest(ctx, alice, req.ID, true) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("approval %d: %v", i, err)
		}
	}
	r, err := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: start})
	if err != nil || len(r.Events) != 1 || r.Events[0].Type != hub.EventGrantChanged {
		t.Fatalf("the planner heard %+v, %v; want one grant.changed", r, err)
	}
}

// TestPublicAgentNeedsNoGrant: alice's planner opens a conversation with
// bob's public desk and both speak, with no contact, grant or inbound ask
// between alice and bob; bob's other agent is denied as before; the desk
// gains no reach of its own; archiving the desk puts it out of everyone's
// reach (§1, §3 "anyone → a public agent").
func TestPublicAgentNeedsNoGrant(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	w.Agent(t, "bob/desk")
	_, before := w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/desk"})
	if code(before) != "denied:contact" {
		t.Fatalf("opening with bob's desk before it is public: %v, want denied:contact", before)
	}
	_, helperBefore := w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/helper"})
	desk := w.Public(t, "bob/desk")

	// (a) a direct conversation, both ways, with nothing between the owners.
	conv := w.Direct(t, w.Planner, "bob/desk")
	w.Send(t, w.Planner, conv, "hello desk")
	w.Send(t, desk, conv, "hello planner, how can I help?")
	if again := w.Direct(t, w.Planner, "bob/desk"); again != conv {
		t.Fatalf("opening again found %s, want %s", again, conv)
	}
	if cs, err := w.Hub.Contacts(ctx, alice); err != nil || len(cs) != 0 {
		t.Fatalf("alice's contacts: %+v, %v; want none", cs, err)
	}
	if approvals, err := w.Hub.Approvals(ctx, bob); err != nil || len(approvals) != 0 {
		t.Fatalf("bob's approvals: %+v, %v; want nothing asked", approvals, err)
	}

	// A group with the desk, alice herself and alice's other agent: the
	// desk answers everyone in it, and joining it needs no contact with bob.
	v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "ask the desk", Participants: []string{"alice", "bob/desk"}})
	if err != nil {
		t.Fatalf("a thread with alice and bob's public desk: %v", err)
	}
	group := v.Conversation.ID
	if _, err := w.Hub.AddParticipant(ctx, w.Planner, group, "alice/reviewer"); err != nil {
		t.Fatalf("adding alice's reviewer to a thread with bob's public desk: %v", err)
	}
	w.Send(t, w.Reviewer, group, "reviewer here")
	w.Send(t, desk, group, "hello all")

	// (b) bob's other agent stays out of reach, with the same reason.
	_, helperAfter := w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/helper"})
	if code(helperAfter) != "denied:contact" || helperAfter.Error() != helperBefore.Error() {
		t.Fatalf("opening with bob's helper: %v; want as before the desk was public: %v", helperAfter, helperBefore)
	}
	if _, err := w.Hub.AddParticipant(ctx, w.Planner, group, "bob/helper"); code(err) != "denied:contact" {
		t.Fatalf("adding bob's helper to the thread: %v, want denied:contact", err)
	}
	// Being public is consent to be reached, not reach: the desk may not
	// open a conversation with alice's agents or alice.
	for _, to := range []string{"alice/planner", "alice/reviewer", "alice"} {
		if _, err := w.Hub.OpenConversation(ctx, desk, []string{to}); code(err) != "denied:contact" {
			t.Errorf("the desk opening with %s: %v, want denied:contact", to, err)
		}
	}
	if got := contactsOf(t, w, desk); got != "" {
		t.Errorf("the desk's contacts: %q, want none", got)
	}
	// An agent still cannot message itself.
	if _, err := w.Hub.OpenConversation(ctx, desk, []string{"bob/desk"}); code(err) != "denied:self" {
		t.Errorf("the desk opening with itself: %v, want denied:self", err)
	}

	// Made private again, the desk is out of reach from the next send on.
	if _, err := w.Hub.SetAgentPublic(ctx, bob, "desk", false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "still there?"}); code(err) != "denied:contact" {
		t.Fatalf("a send to the desk made private: %v, want denied:contact", err)
	}
	if _, err := w.Hub.SendMessage(ctx, desk, hub.SendInput{ConversationID: conv, Body: "I am"}); code(err) != "denied:contact" {
		t.Fatalf("the private desk's send: %v, want denied:contact", err)
	}
	desk = w.Public(t, "bob/desk")
	w.Send(t, w.Planner, conv, "public again?")
	w.Send(t, desk, conv, "yes, public again")

	// (c) archiving wins: an archived public agent is reachable by nobody.
	if _, err := w.Hub.ArchiveAgent(ctx, "bob/desk"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/desk"}); code(err) != "not_found" {
		t.Fatalf("opening with the archived public desk: %v, want not_found", err)
	}
	if _, err := w.Hub.AddParticipant(ctx, w.Planner, group, "bob/desk"); code(err) != "not_found" {
		t.Fatalf("adding the archived public desk: %v, want not_found", err)
	}
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "anyone?"}); code(err) != "no_recipients" {
		t.Fatalf("a send to the archived desk: %v, want no_recipients", err)
	}
	if got := reachable(t, w, w.Planner); got != "alice/reviewer" {
		t.Fatalf("the planner's reachable agents with the desk archived: %s", got)
	}
}

// TestPublicAgentKeepsItsOwnReach: in a conversation a public agent started
// itself, by consent, its own reach applies: when the person it reached
// declines it, its sends there are denied as any agent's would be (§3).
func TestPublicAgentKeepsItsOwnReach(t *testing.T) {
	w := newWorld(t)
	carol, err := w.Hub.CreateUser(ctx, "carol", "")
	if err != nil {
		t.Fatal(err)
	}
	desk := w.Public(t, "bob/desk")
	conv := consent(t, w, desk, carol, "carol")
	w.Send(t, desk, conv, "hello carol")
	cv, err := w.reach.Consent(ctx, carol)
	if err != nil || len(cv.Inbound) != 1 {
		t.Fatalf("carol's inbound asks: %+v, %v; want the desk's", cv, err)
	}
	if _, err := w.Hub.DecideInbound(ctx, carol, cv.Inbound[0].Ask.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SendMessage(ctx, desk, hub.SendInput{ConversationID: conv, Body: "still there?"}); code(err) != "denied:denied" {
		t.Fatalf("the public desk's send after carol declined it: %v, want denied:denied", err)
	}
}

// reachable is ReachableAgents of c as handles.
func reachable(t *testing.T, w *world, c *hub.Caller) string {
	t.Helper()
	as, err := reach.New(w.Hub, w.Store).ReachableAgents(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var hs []string
	for _, a := range as {
		hs = append(hs, a.Handle())
	}
	return strings.Join(hs, ",")
}

// TestPublicAgentsListed: list_agents and list_contacts tell the truth about
// public agents: a stranger's public agent is listed as reachable, a
// contact's among that contact's agents, each once.
func TestPublicAgentsListed(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	w.Public(t, "bob/desk")
	if got := reachable(t, w, w.Planner); got != "alice/reviewer,bob/desk" {
		t.Fatalf("the planner's reachable agents: %s; want its sibling and bob's public desk", got)
	}
	ct, err := reach.New(w.Hub, w.Store).ListContacts(ctx, w.Planner)
	if err != nil || len(ct.Public) != 1 || ct.Public[0].Handle() != "bob/desk" {
		t.Fatalf("the planner's list_contacts: %+v, %v; want bob/desk among the public agents", ct, err)
	}
	// bob's own agents see the desk as a sibling, not twice.
	if got := reachable(t, w, w.Helper); got != "bob/desk" {
		t.Fatalf("the helper's reachable agents: %s; want its sibling once", got)
	}
	// Once alice and bob are contacts, the desk is bob's agent the planner
	// may reach, and listed there only.
	w.reach.RequestContact(ctx, alice, "bob", "")
	w.reach.RequestContact(ctx, bob, "alice", "")
	if got := contactsOf(t, w, w.Planner); got != "bob:allowed:bob/desk" {
		t.Fatalf("the planner's contacts: %s; want bob allowed through the desk", got)
	}
	if got := reachable(t, w, w.Planner); got != "alice/reviewer,bob/desk" {
		t.Fatalf("the planner's reachable agents with bob a contact: %s", got)
	}
}

// TestPublicAgentJoinsThirdOwners: a public agent joins a conversation of
// two other owners who are contacts, and a third owner's agent joins one it
// is in, with no contact between the desk's owner and theirs (§3); a
// non-public agent of the desk's owner still cannot.
func TestPublicAgentJoinsThirdOwners(t *testing.T) {
	w := newWorld(t)
	carol, err := w.Hub.CreateUser(ctx, "carol", "")
	if err != nil {
		t.Fatal(err)
	}
	w.Agent(t, "carol/scout")
	w.Public(t, "bob/desk")
	consent(t, w, w.Planner, carol, "carol/scout")
	v, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "with the desk", Participants: []string{"bob/desk"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AddParticipant(ctx, w.Planner, v.Conversation.ID, "carol/scout"); err != nil {
		t.Fatalf("adding carol's scout to a thread with bob's public desk: %v", err)
	}
	if _, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "all", Participants: []string{"carol/scout", "bob/desk"}}); err != nil {
		t.Fatalf("a thread of carol's scout and bob's public desk: %v", err)
	}
	scout := w.Agent(t, "carol/scout")
	w.Send(t, scout, v.Conversation.ID, "scout here")
	if _, err := w.Hub.CreateThread(ctx, scout, hub.ThreadSpec{Title: "helper", Participants: []string{"alice/planner", "bob/helper"}}); code(err) != "denied:contact" {
		t.Fatalf("carol's scout bringing bob's helper in: %v, want denied:contact", err)
	}
}
