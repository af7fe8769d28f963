package hub_test

import (
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestHintsSayTheCommandLine: a hinted error's message ends with the
// command line's way to mend it (what the command line, the dashboard and
// agents are told), and its hint names the action for the faces that say
// it their own way.
func TestHintsSayTheCommandLine(t *testing.T) {
	w := newWorld(t)
	_, noPerson := w.hub.User(ctx, "nobody")
	_, noToken := w.hub.RevokeToken(ctx, "tok_nope")
	for _, tc := range []struct {
		err         error
		msg, action string
		base, lead  string
	}{
		{noPerson, `no person has the handle "nobody"; create one with: palaver user create nobody`, hub.ActionCreatePerson, `no person has the handle "nobody"`, "create one"},
		{noToken, `no token has the id "tok_nope"; list them with: palaver token list --user OWNER`, hub.ActionListTokens, `no token has the id "tok_nope"`, "list them"},
	} {
		e := hub.AsError(tc.err)
		if e.Msg != tc.msg || e.Hint == nil || e.Hint.Action.Name != tc.action || e.Hint.Base != tc.base || e.Hint.Lead != tc.lead {
			t.Errorf("%q with hint %+v, want %q naming %s", e.Msg, e.Hint, tc.msg, tc.action)
		}
	}
}
