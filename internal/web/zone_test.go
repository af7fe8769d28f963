package web_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestTimesInThePersonsZone: a page says each exact time in the reader's
// own time zone once they chose one, and in UTC before.
func TestTimesInThePersonsZone(t *testing.T) {
	s := newSite(t)
	b := s.person(t, "alice")
	planner, _ := s.agent(t, "alice/planner")
	s.agent(t, "alice/reviewer")
	v, err := s.hub.OpenConversation(ctx, planner, []string{"alice/reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: v.Conversation.ID, Body: "what time is it?"}); err != nil {
		t.Fatal(err)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	times := regexp.MustCompile(`<time datetime="([^"]+)" title="([^"]+)"`)
	check := func(loc *time.Location) {
		t.Helper()
		p := b.get("/conversations/" + v.Conversation.ID)
		found := times.FindAllStringSubmatch(p.raw, -1)
		if len(found) == 0 {
			t.Fatalf("no times on the conversation page:\n%s", p.raw)
		}
		for _, m := range found {
			at, err := time.Parse(time.RFC3339, m[1])
			if err != nil {
				t.Fatal(err)
			}
			if want := at.In(loc).Format("2006-01-02 15:04:05 MST"); m[2] != want {
				t.Errorf("a time %s says %q, want %q", m[1], m[2], want)
			}
		}
	}
	check(time.UTC)
	alice, err := s.hub.User(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.notices.SetTimeZone(ctx, alice, "Europe/Berlin"); err != nil {
		t.Fatal(err)
	}
	check(berlin)
}
