package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestSearchMessages: a message is found by search_messages once the
// search index has it (within a second of send_message), as one line with a marked snippet and no body;
// searching marks nothing read; a query that cannot be read is a tool
// error saying how to write it; each call is counted as a tool call.
func TestSearchMessages(t *testing.T) {
	ts := newTestServer(t)
	for _, era := range []string{older, modern} {
		planner, reviewer := ts.client(t, "alice/planner", era), ts.client(t, "alice/reviewer", era)
		conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
		body := "Please review the retry logic in store.go (" + era + ")"
		sent := mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": body})
		storetest.SearchIndexed(t, ts.store)

		got := mustCall(t, reviewer, "search_messages", map[string]any{"query": `"retry logic" store.go "` + era + `"`, "since": "2020-01-01"})
		want := map[string]any{
			"messages": []any{map[string]any{
				"message_id": sent["message_id"], "conversation_id": conv, "seq": sent["seq"],
				"sender":  map[string]any{"handle": "alice/planner"},
				"summary": body, "snippet": "Please review the **retry** **logic** in **store**.**go** (**" + strings.ReplaceAll(era, "-", "**-**") + "**)",
				"created_at": sent["created_at"],
			}},
			"has_more": false, "untrusted": true,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: search_messages (-want +got):\n%s", era, diff)
		}
		inbox := mustCall(t, reviewer, "check_inbox", map[string]any{})
		if row := inbox["messages"].([]any)[0].(map[string]any); row["already_read"] != nil {
			t.Errorf("%s: after a search the inbox row is %v; want it not read", era, row)
		}

		for _, c := range []struct {
			args       map[string]any
			code, says string
		}{
			{map[string]any{"query": `"retry logic`}, "invalid_query", "close the phrase"},
			{map[string]any{"query": "-staging"}, "invalid_query", "add what to look for"},
			{map[string]any{"query": "   "}, "invalid_query", "query is required"},
			{map[string]any{"query": strings.Repeat("x", fulltext.MaxQuery+1)}, "too_long", "the limit is 500"},
			{map[string]any{"query": "retry", "conversation_id": "conv_nope"}, "not_found", "conv_nope"},
			{map[string]any{"query": "retry", "since": "last week"}, "invalid_argument", "ISO 8601"},
		} {
			out, isErr := call(t, reviewer, "search_messages", c.args)
			e, _ := out["error"].(map[string]any)
			if !isErr || e["code"] != c.code || !strings.Contains(e["message"].(string), c.says) {
				t.Errorf("%s: search_messages(%v) = %v; want a %s tool error saying %q", era, c.args, out, c.code, c.says)
			}
			if c.code == "invalid_query" && !strings.Contains(e["message"].(string), fulltext.Syntax) {
				t.Errorf("%s: %q does not give the syntax", era, e["message"])
			}
		}
	}
	families, err := ts.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == "palaver_tool_calls_seconds" && strings.Contains(m.String(), "search_messages") {
				got[m.GetLabel()[0].GetValue()] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	if diff := cmp.Diff(map[string]uint64{"ok": 2, "error": 12}, got); diff != "" {
		t.Errorf("search_messages calls counted by outcome (-want +got):\n%s", diff)
	}
}
