package web

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestMessageParts: how every page shows who a message is from (§4), one
// rule in templates/parts.html: an agent by its handle and a person with
// @, the session after it, "AI agent for @owner" for an agent's words
// and nothing for a person's, and a badge for how it was sent unless as
// its sender wrote it (human_interject, owner_approved, owner_edited).
func TestMessageParts(t *testing.T) {
	w, err := New(Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	agent := func(instance, authority string) *hub.Message {
		return &hub.Message{SenderKind: hub.PrincipalAgent, SenderHandle: "alice/planner", SenderInstance: instance,
			Author: hub.AuthorAgent, Authority: authority, OwnerHandle: "alice"}
	}
	person := func(authority string) *hub.Message {
		return &hub.Message{SenderKind: hub.PrincipalUser, SenderHandle: "alice", Author: hub.AuthorHuman, Authority: authority, OwnerHandle: "alice"}
	}
	for _, c := range []struct {
		name                       string
		m                          *hub.Message
		byline, sender, provenance string
	}{
		{"an agent's words", agent("", hub.AuthorityAgent),
			`<strong>alice/planner</strong> <span class="provenance">AI agent for @alice</span>`, "alice/planner", `<span class="provenance">AI agent for @alice</span>`},
		{"from a session, approved", agent("desk", hub.AuthorityApproved),
			`<strong>alice/planner</strong> <span class="instance">· desk</span> <span class="provenance">AI agent for @alice</span> <mark class="badge badge-owner_approved">owner_approved</mark>`,
			"alice/planner", `<span class="provenance">AI agent for @alice</span>`},
		{"edited", agent("", hub.AuthorityEdited),
			`<strong>alice/planner</strong> <span class="provenance">AI agent for @alice</span> <mark class="badge badge-owner_edited">owner_edited</mark>`,
			"alice/planner", `<span class="provenance">AI agent for @alice</span>`},
		{"a person's words", person(hub.AuthorityHuman), `<strong>@alice</strong>`, "@alice", ""},
		{"a person's interjection", person(hub.AuthorityInterject),
			`<strong>@alice</strong> <mark class="badge badge-human_interject">human_interject</mark>`, "@alice", ""},
	} {
		for part, want := range map[string]string{"byline": c.byline, "sender": c.sender, "provenance": c.provenance} {
			var b strings.Builder
			if err := w.pages["conversation"].ExecuteTemplate(&b, part, c.m); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(strings.Fields(b.String()), " "); got != want {
				t.Errorf("%s, %s:\n got %s\nwant %s", c.name, part, got, want)
			}
		}
	}
}
