package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/palaverhq/palaver/internal/servertest"
)

// TestSessionsOverMCP: claims, addressing in events, and waits of named
// sessions over the wire.
func TestSessionsOverMCP(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.client(t, "alice/planner", modern)
	reviewer := ts.client(t, "alice/reviewer", modern)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
	start := mustCall(t, reviewer, "whoami", map[string]any{"instance": "desk"})["latest_cursor"].(string)

	if got := mustCall(t, reviewer, "claim_conversation", map[string]any{"conversation_id": conv, "instance": "desk"}); got["status"] != "claimed" {
		t.Fatalf("claim = %v", got)
	}
	refused := mustCall(t, reviewer, "claim_conversation", map[string]any{"conversation_id": conv, "instance": "laptop"})
	trace, _ := refused["trace"].(string)
	if refused["status"] != "held_by_other" || refused["held_by"] != "desk" || !strings.HasPrefix(refused["reason"].(string), "held_by_other:") || len(ts.logLines(trace)) != 1 {
		t.Fatalf("claim while desk holds = %v", refused)
	}
	mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "who takes this?"})
	for _, tc := range []struct {
		session string
		forYou  bool
		by      string
	}{{"desk", true, ""}, {"laptop", false, "desk"}} {
		got := mustCall(t, reviewer, "wait_for_messages", map[string]any{"cursor": start, "instance": tc.session, "timeout_s": 0})
		var ev map[string]any
		for _, e := range got["events"].([]any) {
			if e.(map[string]any)["type"] == "message.new" {
				ev = e.(map[string]any)
			}
		}
		if ev["for_you"] != tc.forYou || ev["from_you"] != false || (tc.by != "" && ev["held_by"] != tc.by) {
			t.Errorf("%s's message.new = %v, want for_you %v held_by %q", tc.session, ev, tc.forYou, tc.by)
		}
		// The message itself says so too, as the event does.
		m := ev["message"].(map[string]any)
		if m["for_you"] != tc.forYou || m["from_you"] != false || m["held_by"] != ev["held_by"] || m["untrusted"] != true {
			t.Errorf("%s's message.new message = %v, want for_you %v, from_you false, held_by %q, untrusted", tc.session, m, tc.forYou, tc.by)
		}
		inbox := mustCall(t, reviewer, "check_inbox", map[string]any{"instance": tc.session})
		if want := map[bool]float64{true: 1, false: 0}[tc.forYou]; inbox["total"] != want {
			t.Errorf("%s's check_inbox total = %v, want %v", tc.session, inbox["total"], want)
		}
		if tc.forYou {
			row := inbox["messages"].([]any)[0].(map[string]any)
			if row["held_by"] != "desk" || row["unclaimed"] != nil || row["for_you"] != true {
				t.Errorf("desk's check_inbox row = %v, want held_by desk, for_you, not unclaimed", row)
			}
		}
	}
	// A conversation nobody holds waits for every session, unclaimed.
	thread := mustCall(t, planner, "create_thread", map[string]any{"title": "Unheld", "participants": []string{"alice/reviewer"}})["conversation_id"].(string)
	mustCall(t, planner, "send_message", map[string]any{"conversation_id": thread, "body": "anyone?"})
	for _, session := range []string{"desk", "laptop"} {
		var row map[string]any
		for _, r := range mustCall(t, reviewer, "check_inbox", map[string]any{"instance": session})["messages"].([]any) {
			if r.(map[string]any)["conversation_id"] == thread {
				row = r.(map[string]any)
			}
		}
		if row["unclaimed"] != true || row["held_by"] != nil {
			t.Errorf("%s's row of the unheld thread = %v, want unclaimed", session, row)
		}
	}

	// Five sessions park; a sixth session is refused; the same named session
	// starting a new wait ends its old one at once with nothing consumed.
	newest := mustCall(t, reviewer, "whoami", nil)["latest_cursor"].(string)
	token := ts.tokens["alice/reviewer"]
	var wg sync.WaitGroup
	results := make([]map[string]any, 5)
	for i := range 5 {
		wg.Go(func() {
			results[i] = rawWait(t, ts, context.Background(), token, modern, map[string]any{"cursor": newest, "timeout_s": 55, "instance": fmt.Sprintf("s%d", i)})
		})
	}
	servertest.Parked(t, ts.waker, 5)
	sixth := rawWait(t, ts, context.Background(), token, modern, map[string]any{"cursor": newest, "timeout_s": 0, "instance": "s9"})
	if e, _ := sixth["error"].(map[string]any); e == nil || e["retry_after_s"] == nil {
		t.Fatalf("6th wait across sessions = %v, want an error with retry_after_s", sixth)
	}
	again := rawWait(t, ts, context.Background(), token, modern, map[string]any{"cursor": newest, "timeout_s": 0, "instance": "s0"})
	if again["timed_out"] != true {
		t.Fatalf("s0's new wait = %v", again)
	}
	ts.hub.Shutdown() // end the other four
	wg.Wait()
	if results[0]["superseded"] != true || len(results[0]["events"].([]any)) != 0 || results[0]["cursor"] != newest {
		t.Fatalf("s0's old wait = %v, want superseded with nothing consumed", results[0])
	}
}
