package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestSessionsMeetInTheHomeThread: two named sessions of one agent open
// the home project's thread "Plan" with open_thread and land in the same
// conversation; answering each other there, they trip the loop brake at
// the §7 thresholds (30 turns, two voices with 3 or more, both the
// sender's); a sibling agent still posts, and a person posting lifts it.
func TestSessionsMeetInTheHomeThread(t *testing.T) {
	ts := newTestServer(t)
	for _, era := range []string{modern, older} {
		t.Run(era, func(t *testing.T) {
			planner := ts.client(t, "alice/planner", era)
			home := mustCall(t, planner, "whoami", map[string]any{"instance": "east"})["home_project"].(map[string]any)
			if home["your_access"] != "speak" || home["name"] != "Home" {
				t.Fatalf("home_project: %v", home)
			}
			title := "Plan " + era
			east := mustCall(t, planner, "open_thread", map[string]any{"project_id": home["id"], "title": title})["conversation_id"]
			west := mustCall(t, planner, "open_thread", map[string]any{"project_id": home["id"], "title": strings.ToUpper(title)})["conversation_id"]
			if east == nil || east != west {
				t.Fatalf("the two sessions opened %v and %v, want one thread", east, west)
			}
			send := func(instance, body string) map[string]any {
				return mustCall(t, planner, "send_message", map[string]any{"conversation_id": east, "body": body, "instance": instance})
			}
			for i := range 30 {
				if got := send([]string{"east", "west"}[i%2], fmt.Sprintf("turn %d", i+1)); got["status"] != "sent" {
					t.Fatalf("turn %d: %v", i+1, got)
				}
			}
			got := send("east", "turn 31")
			if got["status"] != "denied" || !strings.HasPrefix(got["reason"].(string), "loop:") || got["trace"] == nil {
				t.Fatalf("turn 31: %v, want denied with loop", got)
			}
			reviewer := ts.client(t, "alice/reviewer", era)
			if got := mustCall(t, reviewer, "send_message", map[string]any{"conversation_id": east, "body": "I can still post"}); got["status"] != "sent" {
				t.Fatalf("the sibling agent: %v", got)
			}
			alice, err := ts.hub.User(context.Background(), "alice")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ts.hub.PostAsPerson(context.Background(), alice, east.(string), "summarize and stop", ""); err != nil {
				t.Fatal(err)
			}
			if got := send("east", "summary"); got["status"] != "sent" {
				t.Fatalf("after the person wrote: %v", got)
			}
		})
	}
}
