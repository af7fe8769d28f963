package hub_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestContactRequestMessage: a contact request may say why in up to 500
// code points (§3, §10.5); blank is none, a NUL and one character more are
// refused with the limit, and the person asked hears it with the request.
func TestContactRequestMessage(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	carol, err := w.hub.CreateUser(ctx, "carol", "Carol")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", hub.MaxContactMessage+1)
	for _, tc := range []struct{ name, message, code, in string }{
		{"over the limit", long, "too_long", "the limit is 500 characters"},
		{"a NUL", "hello\x00there", "invalid_argument", "NUL"},
	} {
		_, err := w.hub.RequestContact(ctx, alice, "bob", tc.message)
		if code(err) != tc.code || !strings.Contains(err.Error(), tc.in) {
			t.Errorf("%s: %v, want %s saying %q", tc.name, err, tc.code, tc.in)
		}
	}
	if cs, _ := w.hub.Contacts(ctx, bob); len(cs) != 0 {
		t.Fatalf("a refused request left %+v", cs)
	}

	start, _ := w.hub.LatestCursor(ctx, bob.ID)
	exact := strings.Repeat("é", hub.MaxContactMessage)
	c, err := w.hub.RequestContact(ctx, alice, "@bob", exact)
	if err != nil || c.Message != exact || c.Status != hub.ContactPending {
		t.Fatalf("a request of exactly 500 code points to @bob: %+v, %v", c, err)
	}
	r, err := w.hub.WaitPerson(ctx, bob, start, 0)
	if err != nil || len(r.Events) != 1 || r.Events[0].Type != hub.EventContactRequest {
		t.Fatalf("bob heard %+v, %v; want one contact.request", r, err)
	}
	var data map[string]string
	json.Unmarshal(r.Events[0].Data, &data)
	if diff := cmp.Diff(map[string]string{"from": "alice", "request_id": c.ID, "message": exact}, data); diff != "" {
		t.Errorf("contact.request data (-want +got):\n%s", diff)
	}

	if c, err := w.hub.RequestContact(ctx, carol, "alice", " \t\u200b "); err != nil || c.Message != "" {
		t.Fatalf("a blank message: %+v, %v; want a request with none", c, err)
	}
	// Requests both ways accept each other at once; the first one's
	// message stays with it.
	if c, err := w.hub.RequestContact(ctx, bob, "alice", "and you too"); err != nil || c.Status != hub.ContactAccepted || c.Message != exact {
		t.Fatalf("bob asking alice back: %+v, %v; want accepted with alice's message", c, err)
	}
}
