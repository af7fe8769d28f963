package mcpserver_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestToolCallsCounted: every tool call is counted by tool and outcome
// (§14), whether the lean path or the SDK served it.
func TestToolCallsCounted(t *testing.T) {
	ts := newTestServer(t)
	for _, era := range []string{older, modern} {
		s := ts.client(t, "alice/planner", era)
		conv := mustCall(t, s, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"]
		for range 3 { // the third time, the duplicate brake refuses the same words
			call(t, s, "send_message", map[string]any{"conversation_id": conv, "body": "the same words in " + era})
		}
		call(t, s, "send_message", map[string]any{"conversation_id": "conv_nope", "body": "x"})
	}
	families, err := ts.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "palaver_tool_calls_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			key := ""
			for _, l := range m.GetLabel() {
				key += l.GetValue() + " "
			}
			got[key] = m.GetHistogram().GetSampleCount()
		}
	}
	want := map[string]uint64{"error send_message ": 2, "ok send_message ": 4, "refused send_message ": 2, "ok open_conversation ": 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool calls counted (-want +got):\n%s", diff)
	}
}
