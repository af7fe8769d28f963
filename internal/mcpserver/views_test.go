package mcpserver

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestRowBytes holds listing rows to a byte budget, since every byte is paid
// from an agent's context window: a realistic check_inbox row within 200
// bytes, a read_messages row within 370 without its body (provenance whole,
// and untrusted on every message object).
func TestRowBytes(t *testing.T) {
	at := time.Date(2026, 12, 1, 11, 24, 14, 123e6, time.UTC)
	m := &hub.Message{ID: hub.NewID(hub.IDMessage, at), ConversationID: hub.NewID(hub.IDConversation, at), Seq: 12, Status: hub.MessageSent,
		SenderID: hub.NewID(hub.IDAgent, at), SenderKind: hub.PrincipalAgent, SenderHandle: "alice/planner",
		Body:    "The plan is in docs/plan.md: five steps, the second rewrites the messages table. Does the order hold up?",
		Summary: "Review the migration plan for v2", Format: hub.FormatText, Kind: hub.MessageText,
		Author: hub.AuthorAgent, Authority: "agent", OwnerID: hub.NewID(hub.IDUser, at), OwnerHandle: "alice", CreatedAt: at}
	row := viewInboxItem(hub.InboxItem{Message: m, Delivery: hub.Delivery{MessageID: m.ID, State: hub.DeliveryWaiting}}, "", false)
	inbox := mustJSON(t, row)
	t.Logf("check_inbox row, %d bytes: %s", len(inbox), inbox)
	if len(inbox) > 200 {
		t.Errorf("a check_inbox row is %d bytes, over 200: %s", len(inbox), inbox)
	}

	v := messageIn(m)
	full := mustJSON(t, v)
	body := len(`"body":`) + len(mustJSON(t, m.Body)) + len(`,`)
	t.Logf("read_messages row, %d bytes without its body: %s", len(full)-body, full)
	if len(full)-body > 370 {
		t.Errorf("a read_messages row is %d bytes without its body, over 370: %s", len(full)-body, full)
	}
	var got struct {
		Provenance map[string]any `json:"provenance"`
	}
	json.Unmarshal(full, &got)
	if len(got.Provenance) != 5 || got.Provenance["on_behalf_of"] == nil {
		t.Errorf("provenance is not whole: %v", got.Provenance)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAgentRowsLeaveOutEmpty: an agent without a description or goal is
// listed by its handle alone.
func TestAgentRowsLeaveOutEmpty(t *testing.T) {
	got := string(mustJSON(t, viewAgents([]*hub.Agent{{Slug: "w1", OwnerHandle: "alice"}}, nil)))
	if want := `[{"handle":"alice/w1"}]`; got != want {
		t.Errorf("an agent with nothing said of it: %s, want %s", got, want)
	}
}
