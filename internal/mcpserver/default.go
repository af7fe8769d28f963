package mcpserver

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/projects"
)

// defaultProfile is the default tool surface at /mcp/ (§10.3, §10.4).
func (s *Server) defaultProfile() profileSpec {
	return profileSpec{name: "default", path: "/mcp", instructions: instructions, tools: s.defaultTools(),
		resources: s.defaultResources(), prompts: defaultPrompts(),
		// The seed product's name for palaver://me.
		aliases: map[string]string{"crowdedsea://me": "palaver://me"},
		threads: &threadsDef{template: "palaver://threads/{conversation_id}", read: s.threadHistory}}
}

// defaultTools is the default profile's tool list (§10.3), in one place.
func (s *Server) defaultTools() []toolDef {
	return []toolDef{
		newTool(toolSpec{name: "whoami", title: "Who am I",
			description: "Your handle, owner, sibling agents, scopes, session names in use, and latest_cursor (where wait_for_messages starts). With instance, registers this session's name (and instance_note) first.",
			scope:       "", readOnly: false, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) { withMaxLength(p, "instance_note", hub.MaxNote) },
		}, s.whoami),
		newTool(toolSpec{name: "list_contacts", title: "List contacts",
			description: "Who you may reach: your owner, your sibling agents (with what each is for), and contacts of your owner.",
			scope:       hub.ScopeContacts, readOnly: true, idempotent: true,
		}, s.listContacts),
		newTool(toolSpec{name: "list_conversations", title: "List conversations",
			description: "Your open conversations, most recently active first, with participants, unread count and the last message's summary. Check it before opening a new conversation. Page on by passing next as after while has_more.",
			scope:       hub.ScopeRead, readOnly: true, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) { withPage(p, hub.ConversationsPage) },
		}, s.listConversations),
		newTool(toolSpec{name: "open_conversation", title: "Open a direct conversation",
			description: "Opens the direct conversation between you and the given handles (\"alice\" for a person, \"alice/planner\" for an agent); the same set returns the same conversation. Returns status open with conversation_id, or denied with a reason saying what would allow it.",
			scope:       hub.ScopeWrite, idempotent: true,
		}, s.openConversation),
		newTool(toolSpec{name: "create_thread", title: "Create a group conversation",
			description: "Starts a new group conversation for one task, with you as its owner and the given participants. Give it a goal so the others know why they are there.",
			scope:       hub.ScopeWrite,
			schema: func(p map[string]*jsonschema.Schema) {
				withMaxLength(p, "title", hub.MaxTitle)
				withMaxLength(p, "goal", hub.MaxGoal)
			},
		}, s.createThread),
		newTool(toolSpec{name: "add_participant", title: "Add a participant",
			description: "Brings a person or agent you may reach into a group conversation you take part in; they see its whole history.",
			scope:       hub.ScopeWrite, idempotent: true,
		}, s.addParticipant),
		newTool(toolSpec{name: "send_message", title: "Send a message",
			description: "Posts into a conversation; every other participant receives it. A body over " + strconv.Itoa(hub.SummaryNeeded) + " characters needs a summary saying what you ask for. Pass client_msg_id to make a retry safe. Returns status sent (seq, message_id, recipients); held when your owner reviews your messages first (you hear pending.decided); or denied with a reason whose first word names the brake (" + strings.Join(hub.BrakeWords(), ", ") + ") — a denied send is never queued: do not retry it.",
			scope:       hub.ScopeWrite,
			schema: func(p map[string]*jsonschema.Schema) {
				withMaxLength(p, "body", hub.MaxBody)
				withMaxLength(p, "summary", hub.MaxSummary)
				p["summary"].Description = fmt.Sprintf("what you ask the reader for, up to %d characters; required when body is over %d", hub.MaxSummary, hub.SummaryNeeded)
				withMaxLength(p, "client_msg_id", hub.MaxClientMsgID)
				withDefault(p, "format", hub.FormatText)
				withEnum(p, "format", hub.FormatText, hub.FormatMarkdown)
				withDefault(p, "kind", hub.MessageText)
				withEnum(p, "kind", append([]string{hub.MessageText}, hub.EventPostKinds...)...)
				withRange(p, "reply_to_seq", hub.SeqRange)
				// json.RawMessage would infer a byte array.
				p["metadata"] = &jsonschema.Schema{Type: "object", Description: fmt.Sprintf("a JSON object for event posts, up to %d KiB", hub.MaxMetadata>>10)}
			},
		}, s.sendMessage),
		newTool(toolSpec{name: "read_messages", title: "Read a conversation",
			description: "Messages after after_seq, oldest first, with bodies. With mark_read (default) moves your place to the last one returned and records each as fetched. Page on with next_after_seq while has_more. reads shows how far each participant has read.",
			scope:       hub.ScopeRead,
			schema: func(p map[string]*jsonschema.Schema) {
				withDefault(p, "after_seq", 0)
				withRange(p, "after_seq", hub.AfterSeqRange)
				withPage(p, hub.MessagesPage)
				withDefault(p, "mark_read", true)
			},
		}, s.readMessages),
		newTool(toolSpec{name: "read_message", title: "Read one message",
			description: "One message with its body and provenance; records that you fetched it. It stays in your inbox until you acknowledge it.",
			scope:       hub.ScopeRead,
		}, s.readMessage),
		newTool(toolSpec{name: "check_inbox", title: "Check inbox",
			description: "Every message waiting for you (not yet acknowledged), oldest first, one line each with its summary, and total. Marks nothing read; already_read tells a second look from new mail.",
			scope:       hub.ScopeRead, readOnly: true, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) { withPage(p, hub.InboxPage) },
		}, s.checkInbox),
		newTool(toolSpec{name: "search_messages", title: "Search messages",
			description: "Finds messages in the conversations you take part in: full text, best match first, one line each with a snippet of its body where the matching words are marked **like this**. Write words (every one must match), \"a phrase\", a OR b, and -word to leave out; narrow with conversation_id, project_id, from (a sender's handle) and since. Marks nothing read: read a hit with read_message.",
			scope:       hub.ScopeRead, readOnly: true, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) {
				withMaxLength(p, "query", fulltext.MaxQuery)
				withPage(p, hub.SearchPage)
			},
		}, s.searchMessages),
		newTool(toolSpec{name: "acknowledge", title: "Acknowledge a message",
			description: "Says you have acted on a message (outcome done, the default) — acknowledge declined ones too: the acknowledgement is the answer. outcome processing starts an attempt when you begin work on it (it stays in your inbox, marked processing); failed with error ends the attempt and leaves it waiting for the next one. An attempt left running too long is stuck and comes back first in check_inbox.",
			scope:       hub.ScopeRead, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) {
				withDefault(p, "outcome", hub.OutcomeDone)
				withEnum(p, "outcome", hub.OutcomeDone, hub.OutcomeProcessing, hub.OutcomeFailed)
				withMaxLength(p, "error", hub.MaxErrorText)
			},
		}, s.acknowledge),
		newParkingTool(toolSpec{name: "wait_for_messages", title: "Wait for messages",
			description: "Returns every event after cursor at once, or waits until one arrives or timeout_s passes (timed_out). Always pass back the cursor you received last; start from whoami's latest_cursor. Events: message.new (the message), conversation.opened, and more.",
			scope:       hub.ScopeRead, readOnly: true,
			schema: func(p map[string]*jsonschema.Schema) {
				withDefault(p, "timeout_s", int(hub.DefaultWait/time.Second))
				withRange(p, "timeout_s", hub.WaitRange)
			},
		}, s.startWait),
		newTool(toolSpec{name: "mark_unread", title: "Mark unread",
			description: "Moves your place in a conversation back so that seq and what follows read as new again: the named session's place with instance, otherwise the agent's. Returns the new place.",
			scope:       hub.ScopeRead, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) { withRange(p, "seq", hub.SeqRange) },
		}, s.markUnread),
		newTool(toolSpec{name: "claim_conversation", title: "Claim a conversation",
			description: "Makes this session the one that answers what is addressed to nobody in a conversation (the session that last spoke holds it too). Refused with status held_by_other while another live session of yours holds it, unless takeover is true.",
			scope:       hub.ScopeWrite, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) { withDefault(p, "takeover", false) },
		}, s.claimConversation),
		newTool(toolSpec{name: "request_grant", title: "Request a grant",
			description: "Asks your owner for reach to one of their contacts: the person (allow_human, the default) and/or their agents (allow_agents). Returns status pending with request_id; you hear grant.changed when your owner decides.",
			scope:       hub.ScopeWrite,
			schema: func(p map[string]*jsonschema.Schema) {
				withDefault(p, "allow_human", hub.DefaultAllowHuman)
				withDefault(p, "allow_agents", false)
				withMaxLength(p, "reason", hub.MaxQuestion)
			},
		}, s.requestGrant),
		newTool(toolSpec{name: "ask_owner", title: "Ask your owner",
			description: "Puts a question to your owner (with options, they pick one). Returns status pending with question_id; the answer arrives as an owner.answer event and under answers in check_inbox until you acknowledge it (acknowledge with the question_id).",
			scope:       hub.ScopeWrite,
			schema: func(p map[string]*jsonschema.Schema) {
				withMaxLength(p, "question", hub.MaxQuestion)
				p["options"].Description = fmt.Sprintf("the choices, up to %d; the owner picks one", hub.MaxOptions)
			},
		}, s.askOwner),
		newTool(toolSpec{name: "request_permission", title: "Ask your owner for a permission",
			description: "Relays a permission prompt of Claude Code (its request_id, tool_name, description and input_preview) to your owner, who allows or denies it; palaver channel calls it for you. Returns status pending with permission_id; the verdict arrives as a permission.decided event for your session (request_id, behavior allow or deny). Undecided after " + strconv.Itoa(int(hub.DefaultPermissionTTL/time.Minute)) + " minutes (a server setting), it expires.",
			scope:       hub.ScopeWrite, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) {
				p["request_id"].Pattern = "^[a-z]{5}$"
				withMaxLength(p, "tool_name", hub.MaxToolName)
				withMaxLength(p, "description", hub.MaxPermissionText)
				withMaxLength(p, "input_preview", hub.MaxPermissionText)
			},
		}, s.requestPermission),
		newTool(toolSpec{name: "request_close", title: "Request close",
			description: "Asks your owner to close a group conversation you created whose goal is met (the owner confirms it); while it is pending, participants may read and acknowledge but not send. Prefer this to polite closing replies.",
			scope:       hub.ScopeWrite, idempotent: true,
		}, s.requestClose),
		newTool(toolSpec{name: "list_projects", title: "List projects",
			description: "The projects you were brought into, each with your access there (speak or listen), your owner's home project first; and not_joined, your owner's projects you are not in (ask to join one with request_project_access).",
			scope:       hub.ScopeRead, readOnly: true, idempotent: true,
		}, s.listProjects),
		newTool(toolSpec{name: "get_project", title: "Get a project",
			description: "One of your projects: its members, its agents with their access, its threads (each a conversation to read and send in) and its items.",
			scope:       hub.ScopeRead, readOnly: true, idempotent: true,
		}, s.getProject),
		newTool(toolSpec{name: "create_project", title: "Propose a project",
			description: "Proposes a project to your owner, who approves or rejects it; returns status pending_approval with request_id, and you hear project.approved (with the new project_id) or project.rejected.",
			scope:       hub.ScopeWrite,
			schema: func(p map[string]*jsonschema.Schema) {
				withMaxLength(p, "name", hub.MaxProjectName)
				withMaxLength(p, "description", hub.MaxProjectDescription)
				withMaxLength(p, "reason", hub.MaxQuestion)
			},
		}, s.createProject),
		newTool(toolSpec{name: "request_project_access", title: "Ask to join a project",
			description: "Asks your owner to bring you into one of their projects (its id from not_joined in list_projects); returns status pending_approval with request_id, and you hear project.approved or project.rejected.",
			scope:       hub.ScopeWrite,
			schema:      func(p map[string]*jsonschema.Schema) { withMaxLength(p, "reason", hub.MaxQuestion) },
		}, s.requestProjectAccess),
		newTool(toolSpec{name: "open_thread", title: "Open a project thread",
			description: "The thread of a project with this title (the same title, whatever its case, finds the same thread) or of one item, started when there is none (starting one needs speak). Returns its conversation_id: read and send there as in any conversation; everyone in the project takes part, with no grant needed. Sessions of one agent meet here, in the home project.",
			scope:       hub.ScopeWrite, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) { withMaxLength(p, "title", hub.MaxTitle) },
		}, s.openThread),
		newTool(toolSpec{name: "add_item", title: "Add an item",
			description: "Adds a tracked item to a project you may speak in: a task, repo, site, asset, link or note, with status open. Every change is recorded with you and your session. Returns the item and its history.",
			scope:       hub.ScopeWrite,
			schema: func(p map[string]*jsonschema.Schema) {
				withMaxLength(p, "title", hub.MaxTitle)
				withDefault(p, "kind", hub.ItemKinds[0])
				withEnum(p, "kind", hub.ItemKinds...)
				withMaxLength(p, "note", projects.MaxItemNote)
				withMaxLength(p, "url", hub.MaxURL)
			},
		}, s.addItem),
		newTool(toolSpec{name: "update_item", title: "Update an item",
			description: "Changes an item's status (open, doing, done, dropped), title, note or url; only what changes is recorded, with you and your session. Returns the item and its history.",
			scope:       hub.ScopeWrite, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) {
				withEnum(p, "status", hub.ItemStatuses...)
				withMaxLength(p, "title", hub.MaxTitle)
				withMaxLength(p, "note", projects.MaxItemNote)
				withMaxLength(p, "url", hub.MaxURL)
			},
		}, s.updateItem),
		newTool(toolSpec{name: "upload_image", title: "Upload an image",
			description: "Stores a PNG, JPEG, GIF or WebP image (at most " + strconv.Itoa(projects.MaxImageBytes>>20) + " MB and " + strconv.Itoa(projects.MaxImagePixels/1_000_000) + " megapixels, its kind read from the bytes) in a project you may speak in, shown only to the project's people. Returns a markdown snippet to place in a post with format markdown.",
			scope:       hub.ScopeWrite, idempotent: true,
			schema: func(p map[string]*jsonschema.Schema) {
				withMaxLength(p, "filename", hub.MaxNote)
				withMaxLength(p, "alt", hub.MaxNote)
			},
		}, s.uploadImage),
	}
}
