package mcpserver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The argument names of each profile's tools as its seed document writes
// them (/work/shared/reference: 000 the default profile, 004 the inbox
// profile, 001 the rooms profile): "name" is required, "name?" optional.
// Where DESIGN §10 decides otherwise the line says so.

// defaultSeed is seed 000's twenty tools: its tables, and the arguments
// its text names (client_msg_id, takeover, instance on check_inbox and
// read_messages, ask_owner's).
var defaultSeed = map[string]string{
	"whoami":             "instance? instance_note?",
	"list_contacts":      "",
	"list_conversations": "after? limit?", // after: §10.1 pages are cut by has_more, the next page starts after
	"read_messages":      "conversation_id after_seq? limit? mark_read? instance?",
	"open_conversation":  "handles",
	// summary, kind, metadata and mentions: §4 and §10.3.
	"send_message":           "conversation_id body reply_to_seq? instance? to_instance? format? no_reply? client_msg_id? summary? kind? metadata? mentions?",
	"wait_for_messages":      "cursor? timeout_s? instance?",
	"request_grant":          "contact_handle allow_human? allow_agents? reason",
	"check_inbox":            "limit? instance?",
	"mark_unread":            "conversation_id seq instance?",      // §10.3
	"claim_conversation":     "conversation_id instance takeover?", // §10.3
	"ask_owner":              "question instance? conversation_id? options?",
	"list_projects":          "",
	"create_project":         "name description? reason? instance?",
	"request_project_access": "project_id reason?",
	"get_project":            "project_id",
	"open_thread":            "project_id title? item_id?",
	"add_item":               "project_id title kind? note? url? instance?",
	"update_item":            "project_id item_id status? title? note? url? instance?",
	"upload_image":           "project_id data_base64 filename? alt?",
}

// inboxSeed is seed 004's ten tools, exactly.
var inboxSeed = map[string]string{
	"list_agents":     "",
	"list_threads":    "",
	"check_inbox":     "limit?",
	"read_thread":     "threadId limit?",
	"read_message":    "messageId",
	"create_thread":   "title goal? participants?",
	"send_message":    "threadId content summary?",
	"acknowledge":     "messageId",
	"add_participant": "threadId username",
	"request_close":   "threadId",
}

// roomsAgentSeed is seed 001's agent-side tools, exactly.
var roomsAgentSeed = map[string]string{
	"health_check":                     "",
	"list_agent_chats":                 "page? page_size?",
	"get_agent_chat":                   "chat_id",
	"create_agent_chat":                "task_id? title?", // title: a room has one, as every conversation may (§4)
	"list_agent_contacts":              "page? page_size?",
	"add_agent_contact":                "handle message?",
	"remove_agent_contact":             "contact_id? handle?",
	"list_agent_contact_requests":      "page? page_size? sent_status?",
	"respond_to_agent_contact_request": "action handle? request_id?",
	"create_agent_chat_event":          "chat_id content message_type metadata?",
	"get_agent_me":                     "",
	"list_agent_peers":                 "not_in_chat? page? page_size?",
	"mark_agent_message_processing":    "chat_id message_id",
	"mark_agent_message_processed":     "chat_id message_id",
	"mark_agent_message_failed":        "chat_id message_id error",
	"list_agent_messages":              "chat_id status? page? page_size?",
	"get_agent_next_message":           "chat_id",
	"get_agent_chat_context":           "chat_id page? page_size?",
	"create_agent_chat_message":        "chat_id content recipients? mentions?",
	"list_agent_chat_participants":     "chat_id",
	"add_agent_chat_participant":       "chat_id participant_id role?",
	"remove_agent_chat_participant":    "chat_id participant_id",
}

// roomsPeopleSeed is seed 001's user-side tools, exactly (health_check
// serves both sides).
var roomsPeopleSeed = map[string]string{
	"health_check":                   "",
	"list_my_agents":                 "page? page_size?",
	"register_my_agent":              "name description",
	"list_my_chats":                  "page? page_size?",
	"get_my_chat":                    "chat_id",
	"create_my_chat":                 "task_id? title?", // title: as create_agent_chat
	"list_my_contacts":               "page? page_size?",
	"create_contact_request":         "recipient_handle message?",
	"list_received_contact_requests": "page? page_size?",
	"list_sent_contact_requests":     "status? page? page_size?",
	"approve_contact_request":        "request_id",
	"reject_contact_request":         "request_id",
	"cancel_contact_request":         "request_id",
	"resolve_handle":                 "handle",
	"remove_my_contact":              "contact_id? handle?",
	"list_my_chat_messages":          "chat_id page? page_size? message_type? since?",
	"send_my_chat_message":           "chat_id content recipients",
	"list_my_chat_participants":      "chat_id participant_type?",
	"add_my_chat_participant":        "chat_id participant_id role?",
	"remove_my_chat_participant":     "chat_id participant_id",
	"get_my_profile":                 "",
	"update_my_profile":              "first_name? last_name?",
	"list_my_peers":                  "not_in_chat? peer_type? page? page_size?",
}

// TestToolArgumentsAsTheSeedsWrite: each profile's tools/list names the
// arguments its seed names, required where the seed requires them and
// nothing else; the inbox and rooms profiles have exactly the seed's
// tools, the default profile every tool of its seed.
func TestToolArgumentsAsTheSeedsWrite(t *testing.T) {
	ts := newTestServer(t)
	ts.person(t, "alice")
	for _, p := range []struct {
		path, as string
		seed     map[string]string
		exactly  bool
	}{
		{"/mcp/", "alice/planner", defaultSeed, false},
		{"/mcp/inbox/", "alice/planner", inboxSeed, true},
		{"/mcp/rooms/", "alice/planner", roomsAgentSeed, true},
		{"/mcp/rooms/", "alice", roomsPeopleSeed, true},
	} {
		got := map[string]string{}
		for _, tool := range rpcAt(t, ts, p.path, ts.tokens[p.as], "tools/list", map[string]any{}).(map[string]any)["tools"].([]any) {
			tool := tool.(map[string]any)
			schema := tool["inputSchema"].(map[string]any)
			required := map[string]bool{}
			for _, r := range asSlice(schema["required"]) {
				required[r.(string)] = true
			}
			var args []string
			for name := range asMap(schema["properties"]) {
				if !required[name] {
					name += "?"
				}
				args = append(args, name)
			}
			got[tool["name"].(string)] = sortedWords(strings.Join(args, " "))
		}
		want := map[string]string{}
		for name, args := range p.seed {
			want[name] = sortedWords(args)
		}
		if !p.exactly {
			for name := range got {
				if _, ok := want[name]; !ok {
					delete(got, name) // the default profile's tools beyond its seed (§10.3)
				}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s as %s: tools and arguments differ from the seed (-seed +served):\n%s", p.path, p.as, diff)
		}
	}
}

func sortedWords(s string) string {
	w := strings.Fields(s)
	slices.Sort(w)
	return strings.Join(w, " ")
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
