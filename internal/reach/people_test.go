package reach_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/reach"
)

// TestContactRequestMessage: a contact request may say why in up to 500
// code points (§3, §10.5); blank is none, one character more is refused
// with the limit, and the person asked hears it with the request.
func TestContactRequestMessage(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")
	carol, err := w.Hub.CreateUser(ctx, "carol", "Carol")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", hub.MaxContactMessage+1)
	for _, tc := range []struct{ name, message, code, in string }{
		{"over the limit", long, "too_long", "the limit is 500 characters"},
	} {
		_, err := w.reach.RequestContact(ctx, alice, "bob", tc.message)
		if code(err) != tc.code || !strings.Contains(err.Error(), tc.in) {
			t.Errorf("%s: %v, want %s saying %q", tc.name, err, tc.code, tc.in)
		}
	}
	if cs, _ := w.Hub.Contacts(ctx, bob); len(cs) != 0 {
		t.Fatalf("a refused request left %+v", cs)
	}

	start, _ := w.Hub.LatestCursor(ctx, bob.ID)
	exact := strings.Repeat("é", hub.MaxContactMessage)
	c, err := w.reach.RequestContact(ctx, alice, "@bob", exact)
	if err != nil || c.Message != exact || c.Status != hub.ContactPending {
		t.Fatalf("a request of exactly 500 code points to @bob: %+v, %v", c, err)
	}
	r, err := w.Hub.WaitPerson(ctx, bob, start, 0)
	if err != nil || len(r.Events) != 1 || r.Events[0].Type != hub.EventContactRequest {
		t.Fatalf("bob heard %+v, %v; want one contact.request", r, err)
	}
	var data map[string]string
	json.Unmarshal(r.Events[0].Data, &data)
	if diff := cmp.Diff(map[string]string{"from": "alice", "request_id": c.ID, "message": exact}, data); diff != "" {
		t.Errorf("contact.request data (-want +got):\n%s", diff)
	}

	if c, err := w.reach.RequestContact(ctx, carol, "alice", " \t\u200b "); err != nil || c.Message != "" {
		t.Fatalf("a blank message: %+v, %v; want a request with none", c, err)
	}
	// Requests both ways accept each other at once; the reverse request is
	// its own, with its own id, time and message.
	w.Clock.Advance(time.Minute)
	if back, err := w.reach.RequestContact(ctx, bob, "alice", "and you too"); err != nil || back.Status != hub.ContactAccepted || back.Message != "and you too" ||
		back.ID == c.ID || !back.RequestedAt.After(c.RequestedAt) || back.RequestedBy != bob.ID {
		t.Fatalf("bob asking alice back: %+v, %v; want accepted, a request of its own with bob's message", back, err)
	}
}

// TestContactRequestsListed: each side lists its requests, received ones
// pending by default and sent ones all, filtered by status in either
// vocabulary ("approved" is accepted).
func TestContactRequestsListed(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")
	carol, _ := w.Hub.CreateUser(ctx, "carol", "Carol C")
	dave, _ := w.Hub.CreateUser(ctx, "dave", "")
	toBob, _ := w.reach.RequestContact(ctx, alice, "bob", "we ship together")
	w.Clock.Advance(time.Second) // listed oldest first
	fromCarol, _ := w.reach.RequestContact(ctx, carol, "alice", "hi alice")
	w.Clock.Advance(time.Second)
	toDave, _ := w.reach.RequestContact(ctx, alice, "dave", "")
	if _, err := w.Hub.DecideContact(ctx, bob, "alice", true); err != nil {
		t.Fatal(err)
	}
	if _, err := w.reach.CancelContact(ctx, alice, "dave"); err != nil {
		t.Fatal(err)
	}
	list := func(u *hub.User, sent bool, status string) string {
		t.Helper()
		rs, err := w.reach.ContactRequests(ctx, u, sent, status)
		if err != nil {
			t.Fatalf("%s sent=%v %q: %v", u.Handle, sent, status, err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.ID+" "+r.Handle+" "+r.Status+" "+r.Message)
		}
		return strings.Join(out, "; ")
	}
	for _, tc := range []struct {
		u      *hub.User
		sent   bool
		status string
		want   string
	}{
		{alice, false, "", fromCarol.ID + " carol pending hi alice"},
		{alice, true, "", toBob.ID + " bob accepted we ship together; " + toDave.ID + " dave cancelled "},
		{alice, true, "approved", toBob.ID + " bob accepted we ship together"},
		{alice, true, "accepted", toBob.ID + " bob accepted we ship together"},
		{alice, true, "cancelled", toDave.ID + " dave cancelled "},
		{alice, true, "pending", ""},
		{alice, true, "rejected", ""},
		{bob, false, "", ""},
		{bob, false, "all", toBob.ID + " alice accepted we ship together"},
		{dave, false, "cancelled", toDave.ID + " alice cancelled "},
		{carol, true, "", fromCarol.ID + " alice pending hi alice"},
	} {
		if got := list(tc.u, tc.sent, tc.status); got != tc.want {
			t.Errorf("%s sent=%v status %q: %q, want %q", tc.u.Handle, tc.sent, tc.status, got, tc.want)
		}
	}
	rs, _ := w.reach.ContactRequests(ctx, alice, false, "")
	want := []reach.ContactRequest{{ID: fromCarol.ID, UserID: carol.ID, Handle: "carol", Name: "Carol C", Message: "hi alice",
		Status: hub.ContactPending, RequestedAt: fromCarol.RequestedAt}}
	if diff := cmp.Diff(want, rs); diff != "" {
		t.Errorf("alice's received requests (-want +got):\n%s", diff)
	}
	_, err := w.reach.ContactRequests(ctx, alice, true, "maybe")
	if code(err) != "invalid_argument" || !strings.Contains(err.Error(), "pending, accepted (or approved), rejected, cancelled or all") {
		t.Errorf("an unknown status: %v", err)
	}
}

// TestContactRequestsByID: a request is cancelled by its id only by the
// one who sent it, and decided only by the one asked; one cannot approve
// one's own request.
func TestContactRequestsByID(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")
	carol, _ := w.Hub.CreateUser(ctx, "carol", "")
	req, err := w.reach.RequestContact(ctx, alice, "bob", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Hub.DecideContactRequest(ctx, alice, req.ID, true)
	if code(err) != "forbidden" || !strings.Contains(err.Error(), "your own contact request to bob: only bob can approve or reject it") {
		t.Fatalf("alice approving her own request: %v", err)
	}
	if _, err := w.Hub.Decide(ctx, alice, req.ID, hub.Verdict{Action: hub.VerdictApprove}); code(err) != "forbidden" {
		t.Fatalf("alice approving her own request as an approval: %v", err)
	}
	for name, tc := range map[string]struct {
		u  *hub.User
		id string
	}{
		"the one asked":   {bob, req.ID},
		"a third person":  {carol, req.ID},
		"an unknown id":   {alice, "ct_00000000000000000000000000"},
		"another kind":    {alice, "gr_00000000000000000000000000"},
		"no id, a handle": {alice, "bob"},
	} {
		if _, err := w.reach.CancelContactRequest(ctx, tc.u, tc.id); code(err) != "not_found" {
			t.Errorf("%s cancelling: %v, want not_found", name, err)
		}
	}
	if _, err := w.Hub.DecideContactRequest(ctx, carol, req.ID, true); code(err) != "not_found" {
		t.Errorf("a third person approving: %v, want not_found", err)
	}
	c, err := w.reach.CancelContactRequest(ctx, alice, req.ID)
	if err != nil || c.Status != hub.ContactCancelled || c.ID != req.ID {
		t.Fatalf("alice cancelling her request: %+v, %v", c, err)
	}
	if _, err := w.reach.CancelContactRequest(ctx, alice, req.ID); code(err) != "not_found" {
		t.Errorf("cancelling twice: %v, want not_found (no pending request)", err)
	}
	if _, err := w.Hub.DecideContactRequest(ctx, bob, req.ID, true); code(err) != "not_found" {
		t.Errorf("bob approving the cancelled request: %v, want not_found", err)
	}
	if a, _ := w.Hub.Approvals(ctx, bob); len(a) != 0 {
		t.Errorf("bob's approvals after the cancel: %+v", a)
	}
	// Asked again, it is a new request with its own id; bob approves it
	// by that id.
	again, err := w.reach.RequestContact(ctx, alice, "bob", "")
	if err != nil || again.ID == req.ID || again.Status != hub.ContactPending {
		t.Fatalf("alice asking again: %+v, %v; want a pending request with a new id", again, err)
	}
	if _, err := w.Hub.DecideContactRequest(ctx, bob, req.ID, true); code(err) != "not_found" {
		t.Errorf("bob approving by the cancelled request's id: %v, want not_found", err)
	}
	if c, err := w.Hub.DecideContactRequest(ctx, bob, again.ID, true); err != nil || c.Status != hub.ContactAccepted {
		t.Fatalf("bob approving: %+v, %v", c, err)
	}
}

// TestRemoveContact: a contact is removed by its id or the other's handle,
// for both of them, and with it their agents' reach; a request that waits
// is not a contact to remove.
func TestRemoveContact(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")
	carol, _ := w.Hub.CreateUser(ctx, "carol", "")
	conv := w.Consent(t, w.Planner, bob, "bob/helper")
	c, _ := w.reach.RequestContact(ctx, alice, "carol", "")

	for _, tc := range []struct {
		name              string
		u                 *hub.User
		contactID, handle string
		code, in          string
	}{
		{"neither", alice, "", " ", "invalid_argument", "give the contact's id"},
		{"an unknown id", alice, "ct_00000000000000000000000000", "", "not_found", "alice has no contact"},
		{"another pair's id", bob, c.ID, "", "not_found", "bob has no contact"},
		{"an unknown handle", alice, "", "nobody", "not_found", "no person has the handle"},
		{"a stranger", bob, "", "carol", "not_found", "bob and carol are not contacts"},
		{"one's own request", alice, "", "@carol", "not_found", "your request waits for carol; cancel it instead"},
		{"a request to one", carol, c.ID, "", "not_found", "alice's request waits for you; reject it instead"},
	} {
		_, err := w.reach.RemoveContact(ctx, tc.u, tc.contactID, tc.handle)
		if code(err) != tc.code || !strings.Contains(err.Error(), tc.in) {
			t.Errorf("%s: %v, want %s saying %q", tc.name, err, tc.code, tc.in)
		}
	}

	// By id, which wins over a handle that names no contact.
	ct, err := w.Hub.Contacts(ctx, bob)
	if err != nil || len(ct) != 1 {
		t.Fatalf("bob's contacts: %+v, %v", ct, err)
	}
	got, err := w.reach.RemoveContact(ctx, bob, ct[0].Contact.ID, "nobody")
	if err != nil || got.Status != hub.ContactRemoved || got.DecidedBy != bob.ID {
		t.Fatalf("bob removing alice by id: %+v, %v", got, err)
	}
	for _, u := range []*hub.User{alice, bob} {
		if rs, _ := w.reach.ContactRequests(ctx, u, u == alice, "accepted"); len(rs) != 0 {
			t.Errorf("%s still lists %+v as accepted", u.Handle, rs)
		}
	}
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "still there?"}); code(err) != "denied:contact" {
		t.Errorf("the planner's send once the contact ended: %v, want denied:contact", err)
	}
	if _, err := w.reach.RemoveContact(ctx, alice, "", "bob"); code(err) != "not_found" {
		t.Errorf("removing it again: %v, want not_found", err)
	}

	// By handle.
	if _, err := w.Hub.DecideContact(ctx, carol, "alice", true); err != nil {
		t.Fatal(err)
	}
	if got, err := w.reach.RemoveContact(ctx, alice, "", "@carol"); err != nil || got.Status != hub.ContactRemoved {
		t.Fatalf("alice removing @carol: %+v, %v", got, err)
	}
}

// TestEndingAContactTakesItsConsent: when either of two contacts ends it
// (Remove, or rejecting the accepted contact), the grants and inbound asks
// that stood on it go too: neither one's agents reach the other's side,
// the agents hear grant.changed, nobody can accept the ended contact
// after all, and becoming contacts again brings no reach back by itself —
// each grant and each letting in is given anew.
func TestEndingAContactTakesItsConsent(t *testing.T) {
	for _, how := range []string{"remove", "reject"} {
		t.Run(how, func(t *testing.T) {
			w := newWorld(t)
			alice, bob := w.Person(t, "alice"), w.Person(t, "bob")
			conv := w.Consent(t, w.Planner, bob, "bob/helper") // the planner reaches bob's helper
			// And the helper reaches alice herself, let in by her.
			if _, err := w.Hub.SetGrant(ctx, bob, "bob/helper", "alice", true, false); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Hub.OpenConversation(ctx, w.Helper, []string{"alice"}); code(err) != "pending_approval:pending_approval" {
				t.Fatalf("the helper asking alice: %v", err)
			}
			asks, _ := w.Hub.Approvals(ctx, alice)
			if _, err := w.Hub.DecideInbound(ctx, alice, asks[len(asks)-1].ID, true); err != nil {
				t.Fatal(err)
			}
			// And the planner asks for reach to bob himself, which waits.
			asked, err := w.Hub.RequestGrant(ctx, w.Planner, "bob", true, false, "to ask bob")
			if err != nil {
				t.Fatal(err)
			}
			w.Send(t, w.Planner, conv, "before the end")
			plannerFrom, helperFrom := w.Latest(t, w.Planner), w.Latest(t, w.Helper)

			// bob, who did not ask, ends it.
			var c *hub.Contact
			if how == "remove" {
				c, err = w.reach.RemoveContact(ctx, bob, "", "alice")
			} else {
				c, err = w.Hub.DecideContact(ctx, bob, "alice", false)
			}
			if err != nil || c.Status != hub.ContactRemoved || c.DecidedBy != bob.ID {
				t.Fatalf("bob ending the contact: %+v, %v", c, err)
			}
			for _, tc := range []struct {
				from    *hub.Caller
				handles []string
			}{{w.Planner, []string{"bob/helper"}}, {w.Planner, []string{"bob"}}, {w.Helper, []string{"alice/planner"}}, {w.Helper, []string{"alice"}}} {
				if _, err := w.Hub.OpenConversation(ctx, tc.from, tc.handles); code(err) != "denied:contact" {
					t.Errorf("%s opening with %v after the contact ended: %v, want denied:contact", tc.from.Agent.Handle(), tc.handles, err)
				}
			}
			if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "still there?"}); code(err) != "denied:contact" {
				t.Errorf("the planner's send after the contact ended: %v", err)
			}
			for _, g := range []struct {
				agent   *hub.Caller
				contact *hub.User
			}{{w.Planner, bob}, {w.Helper, alice}} {
				got, err := w.Store.Grant(ctx, g.agent.Agent.ID, g.contact.ID)
				if err != nil || got.AllowHuman || got.AllowAgents {
					t.Errorf("%s's grant to %s after the contact ended: %+v, %v; want withdrawn", g.agent.Agent.Handle(), g.contact.Handle, got, err)
				}
				if ask, err := w.Store.InboundAsk(ctx, g.agent.Agent.ID, g.contact.ID); !errors.Is(err, hub.ErrNoRows) {
					t.Errorf("%s's ask of %s after the contact ended: %+v, %v; want it gone", g.agent.Agent.Handle(), g.contact.Handle, ask, err)
				}
			}
			for _, heard := range []struct {
				who     *hub.Caller
				from    *string
				contact string
			}{{w.Planner, plannerFrom, "bob"}, {w.Helper, helperFrom, "alice"}} {
				r, err := w.Hub.Wait(ctx, heard.who, hub.WaitInput{Cursor: heard.from})
				if err != nil || len(r.Events) != 1 || r.Events[0].Type != hub.EventGrantChanged ||
					string(r.Events[0].Data) != `{"allow_agents":false,"allow_human":false,"contact":"`+heard.contact+`","contact_ended":true}` {
					t.Errorf("%s heard %+v, %v; want grant.changed saying the contact ended", heard.who.Agent.Handle(), r, err)
				}
			}
			// The request for reach waits no more: granted, it would give
			// back what ending the contact took.
			if as, _ := w.Hub.Approvals(ctx, alice); slices.ContainsFunc(as, func(a hub.Approval) bool { return a.ID == asked.ID }) {
				t.Errorf("alice's approvals still hold the planner's grant request after the contact ended")
			}
			if _, err := w.Hub.DecideGrantRequest(ctx, alice, asked.ID, true); code(err) != "conflict" || !strings.Contains(err.Error(), "the contact ended") {
				t.Errorf("alice granting the request after the contact ended: %v, want a conflict saying it was withdrawn", err)
			}
			for _, u := range []*hub.User{alice, bob} {
				if _, err := w.Hub.DecideContact(ctx, u, map[*hub.User]string{alice: "bob", bob: "alice"}[u], true); code(err) != "not_found" {
					t.Errorf("%s accepting the ended contact after all: %v, want not_found", u.Handle, err)
				}
			}

			// Contacts again: a new request, answered by the other.
			if c, err := w.reach.RequestContact(ctx, alice, "bob", ""); err != nil || c.Status != hub.ContactPending || c.RequestedBy != alice.ID {
				t.Fatalf("alice asking again: %+v, %v; want a new request for bob to answer", c, err)
			}
			if c, err := w.Hub.DecideContact(ctx, bob, "alice", true); err != nil || c.Status != hub.ContactAccepted {
				t.Fatalf("bob accepting: %+v, %v", c, err)
			}
			if _, err := w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/helper"}); code(err) != "denied:grant" {
				t.Errorf("the planner once contacts again: %v, want denied:grant (granted anew, not kept)", err)
			}
			if _, err := w.Hub.SetGrant(ctx, alice, "alice/planner", "bob", false, true); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/helper"}); code(err) != "pending_approval:pending_approval" {
				t.Errorf("the planner granted again: %v, want pending_approval (bob lets it in anew)", err)
			}
		})
	}
}
