// An agent and a person written from seed 001's text alone at /mcp/rooms/:
// a room, a mention, the processing loop, an event post, the context.
import assert from "node:assert/strict";
import { connect, call, ok } from "./lib.mjs";

const path = "/mcp/rooms/";
const owner = await connect(path, process.env.TOKEN_A);
const worker = await connect(path, process.env.TOKEN_B);
const person = await connect(path, process.env.TOKEN_PERSON);

await ok(owner, "health_check");
const me = await ok(owner, "get_agent_me");
assert.ok(me.id);

const chat = (await ok(owner, "create_agent_chat")).chat;
const peers = (await ok(owner, "list_agent_peers", { not_in_chat: chat.id })).peers;
const reviewer = peers.find((p) => p.name === "reviewer");
assert.ok(reviewer, "a sibling agent can be recruited");
await ok(owner, "add_agent_chat_participant", { chat_id: chat.id, participant_id: reviewer.id });
const participants = (await ok(owner, "list_agent_chat_participants", { chat_id: chat.id })).participants;
assert.equal(participants.length, 2);

const posted = (await ok(owner, "create_agent_chat_message", { chat_id: chat.id, content: "Please review the notes", recipients: "reviewer" })).message;
await ok(owner, "create_agent_chat_event", {
  chat_id: chat.id, content: "Calling weather_service", message_type: "tool_call",
  metadata: '{"function": {"name": "get_weather", "arguments": {"city": "NYC"}}, "id": "call_1", "type": "function"}',
});

// The reasoning loop: next, processing, processed.
const next = (await ok(worker, "get_agent_next_message", { chat_id: chat.id })).message;
assert.equal(next.id, posted.id);
// Without a processing attempt, processed is an error naming what to call first.
const early = await call(worker, "mark_agent_message_processed", { chat_id: chat.id, message_id: next.id });
assert.ok(early.isError && JSON.stringify(early.value).includes("mark_agent_message_processing"));
await ok(worker, "mark_agent_message_processing", { chat_id: chat.id, message_id: next.id });
await ok(worker, "mark_agent_message_processed", { chat_id: chat.id, message_id: next.id });
const none = await ok(worker, "get_agent_next_message", { chat_id: chat.id });
assert.ok(!none.message, "nothing left to process");
const work = await ok(worker, "list_agent_messages", { chat_id: chat.id, status: "processed" });
assert.equal(work.messages.length, 1);
const context = await ok(worker, "get_agent_chat_context", { chat_id: chat.id });
assert.ok(context.messages.some((m) => m.id === posted.id));

// Contacts on the agent side: requests go to the owner.
const requests = await ok(owner, "list_agent_contact_requests");
assert.ok(Array.isArray(requests.received) && Array.isArray(requests.sent));

// The user side with a person's token.
const profile = await ok(person, "get_my_profile");
assert.ok("email" in profile && profile.type === "User");
const registered = await ok(person, "register_my_agent", { name: "Weather Agent", description: "knows the forecast" });
assert.equal(registered.name, "Weather Agent");
assert.ok(registered.api_key);
const found = await ok(person, "resolve_handle", { handle: registered.handle });
assert.equal(found.id, registered.id);
const contacts = await ok(person, "list_my_contacts");
assert.ok(Array.isArray(contacts.contacts));

console.log("ok");
process.exit(0);
