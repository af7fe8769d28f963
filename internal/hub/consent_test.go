package hub_test

import (
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

func (w *world) person(t *testing.T, handle string) *hub.User {
	t.Helper()
	u, err := w.hub.User(ctx, handle)
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
	start, _ := w.hub.LatestCursor(ctx)

	open := func(want string) string {
		t.Helper()
		v, err := w.hub.OpenConversation(ctx, w.planner, []string{"bob/helper"})
		if code(err) != want {
			t.Fatalf("open: %v, want %q", err, want)
		}
		if v != nil {
			return v.Conversation.ID
		}
		return ""
	}
	open("denied:contact")

	if c, err := w.hub.RequestContact(ctx, alice, "bob"); err != nil || c.Status != hub.ContactPending {
		t.Fatalf("contact request: %+v, %v", c, err)
	}
	if _, err := w.hub.DecideContact(ctx, alice, "bob", true); code(err) != "not_found" {
		t.Fatalf("approving one's own request: %v", err)
	}
	if c, err := w.hub.DecideContact(ctx, bob, "alice", true); err != nil || c.Status != hub.ContactAccepted {
		t.Fatalf("contact approval: %+v, %v", c, err)
	}
	if c, err := w.hub.DecideContact(ctx, bob, "alice", true); err != nil || c.Status != hub.ContactAccepted {
		t.Fatalf("approving twice: %+v, %v", c, err)
	}
	open("denied:grant")

	req, err := w.hub.RequestGrant(ctx, w.planner, "bob", false, true, "to coordinate the release with bob's helper")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.DecideGrantRequest(ctx, bob, req.ID, true); code(err) != "not_found" {
		t.Fatalf("another person deciding alice's grant request: %v", err)
	}
	if _, err := w.hub.DecideGrantRequest(ctx, alice, req.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.DecideGrantRequest(ctx, alice, req.ID, true); err != nil {
		t.Fatalf("approving twice: %v, want the same answer", err)
	}
	if _, err := w.hub.DecideGrantRequest(ctx, alice, req.ID, false); code(err) != "conflict" {
		t.Fatalf("rejecting an approved request: %v, want conflict", err)
	}
	open("pending_approval:pending_approval")
	open("pending_approval:pending_approval") // asking again refreshes the same ask

	approvals, err := w.hub.Approvals(ctx, bob)
	if err != nil || len(approvals) != 1 || approvals[0].Kind != "inbound_ask" {
		t.Fatalf("bob's approvals: %+v, %v; want one inbound ask", approvals, err)
	}
	if _, err := w.hub.DecideInbound(ctx, bob, approvals[0].ID, true); err != nil {
		t.Fatal(err)
	}
	r, err := w.hub.Wait(ctx, w.planner, hub.WaitInput{Cursor: start})
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
	w.send(t, w.planner, opened, "hello bob's helper")
	w.send(t, w.helper, opened, "hello alice's planner")

	// Bob changes his mind: further sends and opens are refused.
	if _, err := w.hub.DecideInbound(ctx, bob, approvals[0].ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.SendMessage(ctx, w.planner, hub.SendInput{ConversationID: opened, Body: "still there?"}); code(err) != "denied:denied" {
		t.Fatalf("send after the denial: %v", err)
	}
	open("denied:denied")
}

func TestMutualContactRequests(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	if _, err := w.hub.RequestContact(ctx, alice, "bob"); err != nil {
		t.Fatal(err)
	}
	if c, err := w.hub.RequestContact(ctx, bob, "alice"); err != nil || c.Status != hub.ContactAccepted {
		t.Fatalf("requests both ways: %+v, %v; want accepted", c, err)
	}
	// A cancelled request cannot be approved.
	carol, err := w.hub.CreateUser(ctx, "carol", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.RequestContact(ctx, carol, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.CancelContact(ctx, carol, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.DecideContact(ctx, alice, "carol", true); code(err) != "not_found" {
		t.Fatalf("approving a cancelled request: %v", err)
	}
	// A denial stands until the person who denied changes it.
	if _, err := w.hub.RequestContact(ctx, carol, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.DecideContact(ctx, alice, "carol", false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.RequestContact(ctx, carol, "alice"); code(err) != "declined" {
		t.Fatalf("asking again after a denial: %v", err)
	}
	if c, err := w.hub.DecideContact(ctx, alice, "carol", true); err != nil || c.Status != hub.ContactAccepted {
		t.Fatalf("the denier changing her mind: %+v, %v", c, err)
	}
}
