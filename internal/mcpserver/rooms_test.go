package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rooms profile (§10.5), driven with the official Go SDK client in both
// eras the way an agent written for the chat-room product drives it: by
// the tool names and arguments that product documents.

// TestRoomsProcessingLoop: an agent creates a room, adds its sibling as a
// member and mentions it by name; the sibling takes the message as its
// next work, starts processing it, "crashes", gets the same message again,
// processes it in a second attempt and finds nothing left. A text message
// with no mention is refused with what to do; a thought event shows in the
// history and in its sender's context but is nobody's work; the context
// holds exactly the sender's own posts and those that mention it.
func TestRoomsProcessingLoop(t *testing.T) {
	for _, era := range []string{modern, older} {
		t.Run(era, func(t *testing.T) {
			ts := newTestServer(t)
			planner := ts.clientAt(t, "/mcp/rooms/", "alice/planner", era)
			reviewer := ts.clientAt(t, "/mcp/rooms/", "alice/reviewer", era)

			chat := mustCall(t, planner, "create_agent_chat", map[string]any{})["chat"].(map[string]any)
			chatID := chat["id"].(string)
			if chat["type"] != "room" {
				t.Errorf("create_agent_chat: type %v, want room", chat["type"])
			}
			me := mustCall(t, reviewer, "get_agent_me", map[string]any{})
			mustCall(t, planner, "add_agent_chat_participant", map[string]any{"chat_id": chatID, "participant_id": me["id"], "role": "member"})
			parts := mustCall(t, reviewer, "list_agent_chat_participants", map[string]any{"chat_id": chatID})["participants"].([]any)
			if len(parts) != 2 {
				t.Fatalf("participants: %v", parts)
			}

			// No mention: refused, saying how to mention and where events go.
			out, isErr := call(t, planner, "create_agent_chat_message", map[string]any{"chat_id": chatID, "content": "hello"})
			msg := errMessage(out)
			if !isErr || !strings.Contains(msg, "recipients") || !strings.Contains(msg, "create_agent_chat_event") {
				t.Errorf("a message without mention: %v, want a refusal naming recipients and create_agent_chat_event", out)
			}
			thought := mustCall(t, planner, "create_agent_chat_event", map[string]any{"chat_id": chatID, "content": "the reviewer knows the code best",
				"message_type": "thought", "metadata": `{"confidence": 0.9}`})["message"].(map[string]any)
			hello := mustCall(t, planner, "create_agent_chat_message", map[string]any{"chat_id": chatID, "content": "hello", "recipients": "reviewer"})["message"].(map[string]any)
			if got := hello["mentions"].([]any); len(got) != 1 || got[0] != "alice/reviewer" {
				t.Errorf("hello mentions %v, want alice/reviewer", got)
			}

			next := mustCall(t, reviewer, "get_agent_next_message", map[string]any{"chat_id": chatID})["message"].(map[string]any)
			if next["id"] != hello["id"] || next["status"] != "pending" {
				t.Fatalf("next message: %v, want hello pending", next)
			}
			started := mustCall(t, reviewer, "mark_agent_message_processing", map[string]any{"chat_id": chatID, "message_id": hello["id"]})
			if started["attempt_number"] != 1.0 || started["status"] != "processing" {
				t.Errorf("first attempt: %v", started)
			}

			// The reviewer crashes: a new session finds the same message.
			again := ts.clientAt(t, "/mcp/rooms/", "alice/reviewer", era)
			next = mustCall(t, again, "get_agent_next_message", map[string]any{"chat_id": chatID})["message"].(map[string]any)
			if next["id"] != hello["id"] || next["status"] != "processing" || next["attempts"] != 1.0 {
				t.Fatalf("after a crash: %v, want hello processing after 1 attempt", next)
			}
			if started := mustCall(t, again, "mark_agent_message_processing", map[string]any{"chat_id": chatID, "message_id": hello["id"]}); started["attempt_number"] != 2.0 {
				t.Errorf("second attempt: %v", started)
			}
			mustCall(t, again, "mark_agent_message_processed", map[string]any{"chat_id": chatID, "message_id": hello["id"]})
			if left := mustCall(t, again, "get_agent_next_message", map[string]any{"chat_id": chatID}); left["message"] != nil {
				t.Errorf("after processing: %v, want no message", left)
			}
			// Finishing with no attempt running is refused, saying to start one.
			out, isErr = call(t, again, "mark_agent_message_processed", map[string]any{"chat_id": chatID, "message_id": hello["id"]})
			if !isErr || !strings.Contains(errMessage(out), "mark_agent_message_processing") {
				t.Errorf("processed twice: %v, want a refusal naming mark_agent_message_processing", out)
			}

			// The thought: in the history (both profiles show the same
			// conversation) and the sender's context, in nobody's work.
			history := mustCall(t, ts.clientAt(t, "/mcp/", "alice/reviewer", era), "read_messages", map[string]any{"conversation_id": chatID, "mark_read": false})
			if n := len(history["messages"].([]any)); n != 2 {
				t.Errorf("the default profile's history has %d messages, want the thought and hello", n)
			}
			all := mustCall(t, reviewer, "list_agent_messages", map[string]any{"chat_id": chatID, "status": "all"})["messages"].([]any)
			if len(all) != 1 || all[0].(map[string]any)["id"] != hello["id"] || all[0].(map[string]any)["status"] != "processed" {
				t.Errorf("the reviewer's work: %v, want hello alone, processed", all)
			}
			contextOf := func(s *mcp.ClientSession) []string {
				var got []string
				for _, m := range mustCall(t, s, "get_agent_chat_context", map[string]any{"chat_id": chatID})["messages"].([]any) {
					got = append(got, m.(map[string]any)["id"].(string))
				}
				return got
			}
			if got := contextOf(planner); strings.Join(got, " ") != thought["id"].(string)+" "+hello["id"].(string) {
				t.Errorf("the planner's context %v, want its thought and hello", got)
			}
			if got := contextOf(reviewer); strings.Join(got, " ") != hello["id"].(string) {
				t.Errorf("the reviewer's context %v, want hello alone", got)
			}
		})
	}
}

// errMessage is a tool error's message.
func errMessage(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}
