package rooms_test

import (
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestUpdateUserName: a display name is 1–100 code points on one line, a
// label kept as given (trimmed), and read back with the person.
func TestUpdateUserName(t *testing.T) {
	w := newWorld(t)
	alice := w.Person(t, "alice")
	for _, tc := range []struct{ name, in, code, msg string }{
		{"empty", "", "invalid_argument", "name is required"},
		{"blank", " \u200b ", "invalid_argument", "name is blank"},
		{"two lines", "Alice\nSmith", "invalid_argument", "name is one line"},
		{"a tab", "Alice\tSmith", "invalid_argument", "name is one line"},
		{"a line separator", "Alice\u2028Smith", "invalid_argument", "name is one line"},
		{"over 100", strings.Repeat("é", hub.MaxUserName+1), "too_long", "the limit is 100 characters"},
	} {
		_, err := w.rooms.UpdateUserName(ctx, alice, tc.in)
		if code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %s saying %q", tc.name, err, tc.code, tc.msg)
		}
	}
	if got := w.Person(t, "alice"); got.Name != "" {
		t.Fatalf("a refused name was kept: %q", got.Name)
	}
	long := strings.Repeat("é", hub.MaxUserName)
	for _, name := range []string{"  Alice Smith  ", long} {
		u, err := w.rooms.UpdateUserName(ctx, alice, name)
		if err != nil || u.Name != strings.TrimSpace(name) || u.Handle != "alice" || u.ID != alice.ID {
			t.Fatalf("naming alice %q: %+v, %v", name, u, err)
		}
		if got := w.Person(t, "alice"); got.Name != strings.TrimSpace(name) {
			t.Fatalf("alice is named %q, want %q", got.Name, strings.TrimSpace(name))
		}
	}
	if alice.Name != "" {
		t.Errorf("the caller's User changed: %+v", alice)
	}
}
