package hub_test

import (
	"strings"
	"testing"
)

// TestUpdateUserEmail: one address as written, or blank for none, read
// back with the person; anything else is refused and changes nothing.
func TestUpdateUserEmail(t *testing.T) {
	w := newWorld(t)
	alice := w.person(t, "alice")
	u, err := w.Hub.UpdateUserEmail(ctx, alice, " alice@example.com ")
	if err != nil || u.Email != "alice@example.com" {
		t.Fatalf("setting an email: %+v, %v", u, err)
	}
	for _, bad := range []string{"alice", "Alice <alice@example.com>", "a@example.com, b@example.com", strings.Repeat("a", 250) + "@example.com"} {
		if _, err := w.Hub.UpdateUserEmail(ctx, alice, bad); code(err) != "invalid_argument" {
			t.Errorf("%q: %v, want invalid_argument", bad, err)
		}
	}
	if got, _ := w.Hub.User(ctx, "alice"); got.Email != "alice@example.com" {
		t.Errorf("after the refusals: %q, want the email unchanged", got.Email)
	}
	if u, err := w.Hub.UpdateUserEmail(ctx, alice, ""); err != nil || u.Email != "" {
		t.Errorf("clearing: %+v, %v", u, err)
	}
	if got, _ := w.Hub.User(ctx, "alice"); got.Email != "" {
		t.Errorf("cleared, read back: %q", got.Email)
	}
}
