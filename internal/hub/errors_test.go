package hub_test

import (
	"reflect"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestHintsNameTheActionNotACommand: a hinted error's message is what is
// wrong, in no face's way; its hint says what to do and names the action,
// which each face says its own way (a page, a route, a command).
func TestHintsNameTheActionNotACommand(t *testing.T) {
	w := newWorld(t)
	_, noPerson := w.Hub.User(ctx, "nobody")
	_, noToken := w.Hub.RevokeToken(ctx, "tok_nope")
	for _, tc := range []struct {
		err       error
		msg, lead string
		action    hub.Action
	}{
		{noPerson, `no person has the handle "nobody"`, "create one", hub.Action{Name: hub.ActionCreatePerson, Args: map[string]string{"handle": "nobody"}}},
		{noToken, `no token has the id "tok_nope"`, "list them", hub.Action{Name: hub.ActionListTokens}},
	} {
		e := hub.AsError(tc.err)
		if e.Text(nil, nil) != tc.msg || e.Hint == nil || e.Hint.Lead != tc.lead || !reflect.DeepEqual(e.Hint.Action, tc.action) {
			t.Errorf("%q with hint %+v, want %q, %q naming %+v", e.Text(nil, nil), e.Hint, tc.msg, tc.lead, tc.action)
		}
		way := func(a hub.Action) string { return "at the " + a.Name + " place" }
		if got, want := e.Text(nil, way), tc.msg+"; "+tc.lead+" at the "+tc.action.Name+" place"; got != want {
			t.Errorf("Text = %q, want %q", got, want)
		}
	}
}

// TestWordsSay: a face says each placeholder in its words, a name it has
// no word for as the hub writes it, and {{ as {; a value someone gave,
// quoted by the hub, keeps its braces as they were.
func TestWordsSay(t *testing.T) {
	w := hub.Words{"conversation_id": "threadId", "conversation": "thread", "or name them in mentions": "or name them in recipients"}
	for in, want := range map[string]string{
		"{conversation_id} is required":                     "threadId is required",
		"this {conversation} is paused":                     "this thread is paused",
		"call {check_inbox} first":                          "call check_inbox first",
		"mention them, {or name them in mentions}":          "mention them, or name them in recipients",
		`metadata must be a JSON object, like {"a": 1}`:     `metadata must be a JSON object, like {"a": 1}`,
		"the title {{conversation} is yours":                "the title {conversation} is yours",
		"{Capitalised} and { spaced} and {} and { and }":    "{Capitalised} and { spaced} and {} and { and }",
		"conversation.opened and {conversation}.opened too": "conversation.opened and thread.opened too",
	} {
		if got := w.Say(in); got != want {
			t.Errorf("Say(%q) = %q, want %q", in, got, want)
		}
	}
	if got := hub.Words(nil).Say(`{conversation} "` + hub.Echo("{conversation}") + `"`); got != `conversation "{conversation}"` {
		t.Errorf("an echoed value: %q", got)
	}
}
