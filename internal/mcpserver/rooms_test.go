package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/reach"
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
			// Finishing again is refused: nothing is left to finish.
			out, isErr = call(t, again, "mark_agent_message_processed", map[string]any{"chat_id": chatID, "message_id": hello["id"]})
			if !isErr || !strings.Contains(errMessage(out), "is processed already") {
				t.Errorf("processed twice: %v, want a refusal saying it is processed already", out)
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

// person gives the person a token of their own (plu_…), remembered under
// their handle.
func (ts *testServer) person(t *testing.T, handle string) {
	t.Helper()
	_, secret, err := ts.hub.MintUserToken(context.Background(), handle, "rooms", 0)
	if err != nil {
		t.Fatal(err)
	}
	ts.tokens[handle] = secret
}

// TestRoomsUserSide: with a person's token the rooms profile serves the
// user side. register_my_agent shows a key once, and that key connects as
// the new agent at once; two people's crossed contact requests approve
// each other; list_my_chats lists the rooms the person takes part in.
func TestRoomsUserSide(t *testing.T) {
	for _, era := range []string{modern, older} {
		t.Run(era, func(t *testing.T) {
			ts := newTestServer(t)
			ts.person(t, "alice")
			ts.person(t, "bob")
			alice := ts.clientAt(t, "/mcp/rooms/", "alice", era)
			bob := ts.clientAt(t, "/mcp/rooms/", "bob", era)

			reg := mustCall(t, alice, "register_my_agent", map[string]any{"name": "Weather Agent", "description": "knows the forecast"})
			if reg["handle"] != "alice/weather-agent" || reg["name"] != "Weather Agent" || !strings.HasPrefix(reg["api_key"].(string), "plv_") {
				t.Fatalf("register_my_agent: %v, want the handle made from the name, and the name kept", reg)
			}
			ts.tokens["alice/weather-agent"] = reg["api_key"].(string)
			weather := ts.clientAt(t, "/mcp/rooms/", "alice/weather-agent", era)
			if me := mustCall(t, weather, "get_agent_me", map[string]any{}); me["handle"] != "alice/weather-agent" || me["name"] != "Weather Agent" {
				t.Errorf("the new key connects as %v named %v", me["handle"], me["name"])
			}
			agents := mustCall(t, alice, "list_my_agents", map[string]any{})["agents"].([]any)
			for _, a := range agents {
				if _, shown := a.(map[string]any)["api_key"]; shown {
					t.Errorf("list_my_agents shows a key again: %v", a)
				}
			}

			first := mustCall(t, alice, "create_contact_request", map[string]any{"recipient_handle": "@bob", "message": "let's work together"})
			if first["status"] != "pending" {
				t.Fatalf("alice's request: %v", first)
			}
			received := mustCall(t, bob, "list_received_contact_requests", map[string]any{})["requests"].([]any)
			if len(received) != 1 || received[0].(map[string]any)["message"] != "let's work together" {
				t.Errorf("bob's received requests: %v", received)
			}
			// The crossed request is approved at once, and is a request of
			// its own: its id, its time, its (empty) message.
			if crossed := mustCall(t, bob, "create_contact_request", map[string]any{"recipient_handle": "alice"}); crossed["status"] != "approved" ||
				crossed["id"] == first["id"] || crossed["message"] != "" || crossed["recipient_handle"] != "alice" {
				t.Errorf("bob's crossed request: %v, want approved at once with its own id and no message", crossed)
			}
			if _, err := ts.hub.UpdateUserEmail(context.Background(), must2(ts.hub.User(context.Background(), "bob")), "bob@example.com"); err != nil {
				t.Fatal(err)
			}
			contacts := mustCall(t, alice, "list_my_contacts", map[string]any{})["contacts"].([]any)
			if len(contacts) != 1 || contacts[0].(map[string]any)["handle"] != "bob" || contacts[0].(map[string]any)["email"] != "bob@example.com" ||
				contacts[0].(map[string]any)["type"] != "User" {
				t.Errorf("alice's contacts: %v, want bob with his email and type User", contacts)
			}
			if me := mustCall(t, bob, "get_my_profile", nil); me["email"] != "bob@example.com" {
				t.Errorf("bob's profile: %v, want his email", me)
			}
			if sent := mustCall(t, bob, "list_sent_contact_requests", map[string]any{"status": "approved"})["requests"].([]any); len(sent) != 1 {
				t.Errorf("bob's approved sent requests: %v", sent)
			}

			room := mustCall(t, alice, "create_my_chat", map[string]any{"title": "Forecasts"})["chat"].(map[string]any)
			mustCall(t, alice, "add_my_chat_participant", map[string]any{"chat_id": room["id"], "participant_id": "alice/weather-agent"})
			if ps := mustCall(t, alice, "list_my_chat_participants", map[string]any{"chat_id": room["id"], "participant_type": "Agent"})["participants"].([]any); len(ps) != 1 || ps[0].(map[string]any)["handle"] != "alice/weather-agent" {
				t.Errorf("the room's agents: %v", ps)
			}
			if got := mustCall(t, alice, "get_my_chat", map[string]any{"chat_id": room["id"]})["chat"].(map[string]any); got["title"] != "Forecasts" {
				t.Errorf("get_my_chat: %v", got)
			}
			chats := mustCall(t, alice, "list_my_chats", map[string]any{})["chats"].([]any)
			if len(chats) != 1 || chats[0].(map[string]any)["id"] != room["id"] {
				t.Errorf("alice's chats: %v", chats)
			}
			if chats := mustCall(t, bob, "list_my_chats", map[string]any{})["chats"].([]any); len(chats) != 0 {
				t.Errorf("bob's chats: %v, want none", chats)
			}
			if out, isErr := call(t, alice, "send_my_chat_message", map[string]any{"chat_id": room["id"], "content": "rain?", "recipients": ""}); !isErr || !strings.Contains(errMessage(out), "recipients") {
				t.Errorf("a send with empty recipients: %v", out)
			}
			mustCall(t, alice, "send_my_chat_message", map[string]any{"chat_id": room["id"], "content": "rain tomorrow?", "recipients": "weather agent"})
			next := mustCall(t, weather, "get_agent_next_message", map[string]any{"chat_id": room["id"]})["message"].(map[string]any)
			if next["content"] != "rain tomorrow?" || next["sender"].(map[string]any)["type"] != "User" {
				t.Errorf("the weather agent's next message: %v", next)
			}
			if msgs := mustCall(t, alice, "list_my_chat_messages", map[string]any{"chat_id": room["id"], "message_type": "text"})["messages"].([]any); len(msgs) != 1 {
				t.Errorf("the room's text messages: %v", msgs)
			}
			if p := mustCall(t, alice, "update_my_profile", map[string]any{"first_name": "Alice", "last_name": "Liddell"}); p["name"] != "Alice Liddell" {
				t.Errorf("update_my_profile: %v", p)
			}
		})
	}
}

// TestRoomsAgentContactsAreTheOwners: an agent's contact request asks its
// owner, who sees it under Approvals; an agent approving one is refused
// with who decides.
func TestRoomsAgentContactsAreTheOwners(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	alice, _ := ts.hub.User(ctx, "alice")
	bob, _ := ts.hub.User(ctx, "bob")
	if _, err := reach.New(ts.hub, ts.store).RequestContact(ctx, alice, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := reach.New(ts.hub, ts.store).RequestContact(ctx, bob, "alice", ""); err != nil {
		t.Fatal(err)
	}
	planner := ts.clientAt(t, "/mcp/rooms/", "alice/planner", modern)
	asked := mustCall(t, planner, "add_agent_contact", map[string]any{"handle": "bob", "message": "I need bob's review"})
	if asked["status"] != "pending" || asked["request_id"] == nil {
		t.Fatalf("add_agent_contact: %v", asked)
	}
	out, isErr := call(t, planner, "respond_to_agent_contact_request", map[string]any{"action": "approve", "request_id": asked["request_id"]})
	if !isErr || !strings.Contains(errMessage(out), "@alice") || !strings.Contains(errMessage(out), "Approvals") {
		t.Errorf("an agent approving: %v, want a refusal saying @alice decides under Approvals", out)
	}
	approvals, err := ts.hub.Approvals(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range approvals {
		found = found || a.ID == asked["request_id"]
	}
	if !found {
		t.Errorf("alice's approvals %v lack the request %v", approvals, asked["request_id"])
	}
	sent := mustCall(t, planner, "list_agent_contact_requests", map[string]any{"sent_status": "pending"})["sent"].([]any)
	if len(sent) != 1 || sent[0].(map[string]any)["handle"] != "bob" {
		t.Errorf("the planner's pending requests: %v", sent)
	}
	if c := mustCall(t, planner, "respond_to_agent_contact_request", map[string]any{"action": "cancel", "handle": "bob"}); c["status"] != "cancelled" {
		t.Errorf("cancel: %v", c)
	}

	// Another owner's agent asking to reach the planner is received: the
	// ask its owner decides, with that decision.
	if _, err := ts.hub.SetGrant(ctx, bob, "bob/helper", "alice", false, true); err != nil {
		t.Fatal(err)
	}
	helper, err := ts.hub.Authenticate(ctx, ts.tokens["bob/helper"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.hub.OpenConversation(ctx, helper, []string{"alice/planner"}); err == nil {
		t.Fatal("bob/helper reached alice/planner without alice letting it in")
	}
	received := mustCall(t, planner, "list_agent_contact_requests", nil)["received"].([]any)
	if len(received) != 1 || received[0].(map[string]any)["handle"] != "bob/helper" || received[0].(map[string]any)["status"] != "pending" {
		t.Errorf("the planner's received requests: %v, want bob/helper's ask, pending", received)
	}

	// Ending a contact asks the owner too: pending, under Approvals.
	if out, isErr := call(t, planner, "remove_agent_contact", map[string]any{"handle": "bob"}); !isErr || errCode(out) != "not_found" {
		t.Errorf("removing bob before any reach: %v, want not_found", out)
	}
	if _, err := ts.hub.SetGrant(ctx, alice, "alice/planner", "bob", true, false); err != nil {
		t.Fatal(err)
	}
	removed := mustCall(t, planner, "remove_agent_contact", map[string]any{"handle": "@bob"})
	if removed["status"] != "pending" || removed["handle"] != "bob" || removed["request_id"] == nil || !strings.Contains(removed["reason"].(string), "Approvals page") {
		t.Fatalf("remove_agent_contact: %v, want pending with the ask's id and where alice decides", removed)
	}
	approvals, _ = ts.hub.Approvals(ctx, alice)
	found = false
	for _, a := range approvals {
		found = found || (a.Question != nil && a.Question.ID == removed["request_id"])
	}
	if !found {
		t.Errorf("alice's approvals %v lack the ask %v", approvals, removed["request_id"])
	}
}

func errCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// TestRoomsPublicAgent: a public agent of bob's is among alice's agent's
// peers, joins its room and answers there, with no contact or grant; bob's
// other agents stay out of reach.
func TestRoomsPublicAgent(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	ts.agent(t, "bob/helpdesk", "", nil)
	bob, _ := ts.hub.User(ctx, "bob")
	if _, err := ts.hub.SetAgentPublic(ctx, bob, "helpdesk", true); err != nil {
		t.Fatal(err)
	}
	planner := ts.clientAt(t, "/mcp/rooms/", "alice/planner", modern)
	helpdesk := ts.clientAt(t, "/mcp/rooms/", "bob/helpdesk", modern)
	room := mustCall(t, planner, "create_agent_chat", map[string]any{"title": "Support"})["chat"].(map[string]any)
	peers := map[string]bool{}
	for _, p := range mustCall(t, planner, "list_agent_peers", map[string]any{"not_in_chat": room["id"]})["peers"].([]any) {
		peers[p.(map[string]any)["handle"].(string)] = true
	}
	if !peers["bob/helpdesk"] || !peers["alice/reviewer"] || peers["bob/helper"] || peers["alice/planner"] {
		t.Errorf("the planner's peers %v, want its sibling and bob's public agent only", peers)
	}
	mustCall(t, planner, "add_agent_chat_participant", map[string]any{"chat_id": room["id"], "participant_id": "bob/helpdesk"})
	mustCall(t, planner, "create_agent_chat_message", map[string]any{"chat_id": room["id"], "content": "my build fails", "recipients": "helpdesk"})
	asked := mustCall(t, helpdesk, "get_agent_next_message", map[string]any{"chat_id": room["id"]})["message"].(map[string]any)
	if asked["content"] != "my build fails" {
		t.Fatalf("the helpdesk's next message: %v", asked)
	}
	mustCall(t, helpdesk, "create_agent_chat_message", map[string]any{"chat_id": room["id"], "content": "clear the cache", "recipients": "planner"})
	answer := mustCall(t, planner, "get_agent_next_message", map[string]any{"chat_id": room["id"]})["message"].(map[string]any)
	if answer["content"] != "clear the cache" || answer["sender"].(map[string]any)["handle"] != "bob/helpdesk" {
		t.Errorf("the planner's next message: %v, want the helpdesk's answer", answer)
	}
	out := mustCall(t, planner, "add_agent_chat_participant", map[string]any{"chat_id": room["id"], "participant_id": "bob/helper"})
	if reason, _ := out["reason"].(string); out["status"] != "denied" || !strings.HasPrefix(reason, "contact:") {
		t.Errorf("adding bob's other agent: %v, want denied for want of a contact", out)
	}
}

func must2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
