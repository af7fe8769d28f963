package api_test

import (
	"fmt"
	"strings"
	"testing"
)

// history is n messages of about 190 characters from alice in a
// conversation with her planner: more than one page's words.
func (s *server) history(t *testing.T, n int) string {
	t.Helper()
	conv := s.tool(t, "alice/planner", "open_conversation", map[string]any{"handles": []string{"alice"}})["conversation_id"].(string)
	alice, err := s.hub.User(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := s.hub.PostAsPerson(ctx, alice, conv, fmt.Sprintf("message %04d %s", i, strings.Repeat("x", 176)), ""); err != nil {
			t.Fatal(err)
		}
	}
	return conv
}

// seqsOf lists a page's seqs and checks that it was cut by size.
func seqsOf(t *testing.T, got map[string]any) []int {
	t.Helper()
	msgs, _ := got["messages"].([]any)
	var out []int
	for _, m := range msgs {
		out = append(out, int(m.(map[string]any)["seq"].(float64)))
	}
	if len(out) == 0 || len(out) >= 100 {
		t.Fatalf("a page of %d messages; want one cut by size: %v", len(out), got["error"])
	}
	return out
}

// TestMessagePagesContinue: a conversation's pages over REST are cut by
// size and say where the next one starts — next_after_seq for newer
// pages, prev_before_seq for older ones (from the conversation's latest
// page too) — so walking either way sees each of 1,000 messages once.
func TestMessagePagesContinue(t *testing.T) {
	s := newServer(t)
	const n = 1000
	conv := s.history(t, n)
	once := func(how string, seqs []int) {
		t.Helper()
		if len(seqs) != n {
			t.Fatalf("%s: %d messages, want %d", how, len(seqs), n)
		}
		for i, seq := range seqs {
			if seq != i+1 {
				t.Fatalf("%s: the %dth message is #%d", how, i+1, seq)
			}
		}
	}

	var seqs []int
	for after := 0; ; {
		code, got := s.rest(t, "alice", "GET", fmt.Sprintf("/conversations/%s/messages?after_seq=%d", conv, after), nil)
		if code != 200 {
			t.Fatalf("after_seq=%d: %d %v", after, code, got)
		}
		page := seqsOf(t, got)
		if got["has_older"] != (after > 0) || got["prev_before_seq"] != float64(page[0]) || got["next_after_seq"] != float64(page[len(page)-1]) {
			t.Fatalf("the page after %d: %v…%v, has_older %v, prev_before_seq %v, next_after_seq %v", after, page[0], page[len(page)-1], got["has_older"], got["prev_before_seq"], got["next_after_seq"])
		}
		seqs = append(seqs, page...)
		if got["has_more"] != true {
			break
		}
		after = int(got["next_after_seq"].(float64))
	}
	once("newer pages", seqs)

	code, got := s.rest(t, "alice", "GET", "/conversations/"+conv, nil)
	if code != 200 {
		t.Fatalf("the conversation: %d %v", code, got)
	}
	seqs = nil
	for pages := 0; ; pages++ {
		page := seqsOf(t, got)
		if page[len(page)-1] != n-len(seqs) {
			t.Fatalf("a page ends at #%d; want #%d, just before the page after it", page[len(page)-1], n-len(seqs))
		}
		seqs = append(page, seqs...)
		if got["has_older"] != true {
			break
		}
		if pages > n {
			t.Fatal("older pages never end")
		}
		before := got["prev_before_seq"]
		if code, got = s.rest(t, "alice", "GET", fmt.Sprintf("/conversations/%s/messages?before_seq=%v", conv, before), nil); code != 200 || got["has_more"] != true {
			t.Fatalf("before_seq=%v: %d %v", before, code, got)
		}
	}
	once("older pages", seqs)

	for path, want := range map[string]string{
		"?before_seq=0":             `before_seq must be an integer between 1 and 9007199254740991 (got "0")`,
		"?before_seq=9&after_seq=3": "give after_seq (a page of newer messages) or before_seq (a page of older ones), not both",
	} {
		code, got := s.rest(t, "alice", "GET", "/conversations/"+conv+"/messages"+path, nil)
		if msg, _ := got["error"].(map[string]any)["message"].(string); code != 400 || msg != want {
			t.Errorf("GET …/messages%s: %d %q, want 400 %q", path, code, msg, want)
		}
	}
}
