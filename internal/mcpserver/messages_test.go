package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestReadMessagesPagesContinue: read_messages' pages of a long
// conversation are cut by size, and next_after_seq starts the next one
// exactly where a page stops: walking them hands over each of 1,000
// messages once.
func TestReadMessagesPagesContinue(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.client(t, "alice/planner", modern)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice"}})["conversation_id"].(string)
	alice, err := ts.hub.User(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for i := 1; i <= n; i++ {
		if _, err := ts.hub.PostAsPerson(context.Background(), alice, conv, fmt.Sprintf("message %04d %s", i, strings.Repeat("x", 176)), ""); err != nil {
			t.Fatal(err)
		}
	}
	var seqs []int
	var sizes []int
	for after := 0; ; {
		got := mustCall(t, planner, "read_messages", map[string]any{"conversation_id": conv, "after_seq": after})
		msgs, _ := got["messages"].([]any)
		for _, m := range msgs {
			seqs = append(seqs, int(m.(map[string]any)["seq"].(float64)))
		}
		sizes = append(sizes, len(msgs))
		if got["has_more"] != true {
			break
		}
		if len(msgs) == 0 || len(msgs) >= 100 || len(sizes) > n {
			t.Fatalf("a page of %d messages that has more; want one cut by size (pages %v)", len(msgs), sizes)
		}
		after = int(got["next_after_seq"].(float64))
	}
	if len(seqs) != n {
		t.Fatalf("read_messages handed over %d messages in pages of %v, want %d", len(seqs), sizes, n)
	}
	for i, seq := range seqs {
		if seq != i+1 {
			t.Fatalf("the %dth message handed over is #%d (pages of %v)", i+1, seq, sizes)
		}
	}
}

// TestMarkUnreadAgreesEverywhere: after mark_unread to seq 2, the
// messages from 2 on show already_read false in the default profile's
// check_inbox and alreadyRead false in the inbox profile's, and
// list_conversations counts as many unread.
func TestMarkUnreadAgreesEverywhere(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.client(t, "alice/planner", modern)
	reviewer := ts.client(t, "alice/reviewer", modern)
	inboxed := ts.clientAt(t, "/mcp/inbox/", "alice/reviewer", modern)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
	for i := 1; i <= 3; i++ {
		mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": fmt.Sprintf("step %d", i)})
	}
	flags := func() (string, string, float64) {
		t.Helper()
		var def, inb []string
		for _, r := range mustCall(t, reviewer, "check_inbox", nil)["messages"].([]any) {
			row := r.(map[string]any)
			def = append(def, fmt.Sprintf("%v:%v", row["seq"], row["already_read"] == true))
		}
		for _, r := range mustCall(t, inboxed, "check_inbox", nil)["messages"].([]any) {
			row := r.(map[string]any)
			inb = append(inb, fmt.Sprint(row["alreadyRead"]))
		}
		var n float64 = -1
		for _, c := range mustCall(t, reviewer, "list_conversations", nil)["conversations"].([]any) {
			if c.(map[string]any)["conversation_id"] == conv {
				n = c.(map[string]any)["unread"].(float64)
			}
		}
		return strings.Join(def, " "), strings.Join(inb, " "), n
	}
	mustCall(t, reviewer, "read_messages", map[string]any{"conversation_id": conv})
	if def, inb, n := flags(); def != "1:true 2:true 3:true" || inb != "true true true" || n != 0 {
		t.Fatalf("after read_messages: check_inbox %s, the inbox profile's %s, unread %v", def, inb, n)
	}
	if got := mustCall(t, reviewer, "mark_unread", map[string]any{"conversation_id": conv, "seq": 2}); got["last_read_seq"] != 1.0 {
		t.Fatalf("mark_unread: %v", got)
	}
	if def, inb, n := flags(); def != "1:true 2:false 3:false" || inb != "true false false" || n != 2 {
		t.Fatalf("after mark_unread to 2: check_inbox %s, the inbox profile's %s, unread %v; want 2 and 3 unread everywhere", def, inb, n)
	}
}
