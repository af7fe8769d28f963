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
