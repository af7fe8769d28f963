// An agent written from seed 000's text alone: two sibling agents at /mcp/,
// one of them in two named sessions.
import assert from "node:assert/strict";
import { connect, call, ok } from "./lib.mjs";

const path = "/mcp/";
const planner = await connect(path, process.env.TOKEN_A);
const reviewer = await connect(path, process.env.TOKEN_B);

// Typical loop: whoami, list_contacts, open_conversation, send, wait.
const me = await ok(reviewer, "whoami", { instance: "desk" });
assert.ok(me.latest_cursor && me.siblings.length > 0);
const contacts = await ok(planner, "list_contacts");
assert.ok(contacts.owner && Array.isArray(contacts.sibling_agents) && Array.isArray(contacts.contacts));

const opened = await ok(planner, "open_conversation", { handles: ["alice/reviewer"] });
assert.equal(opened.status, "open");
const conv = opened.conversation_id;
const sent = await ok(planner, "send_message", { conversation_id: conv, body: "Please review docs/plan.md", client_msg_id: "plan-1" });
assert.equal(sent.status, "sent");
assert.ok(sent.seq >= 1);
const again = await ok(planner, "send_message", { conversation_id: conv, body: "Please review docs/plan.md", client_msg_id: "plan-1" });
assert.equal(again.seq, sent.seq, "the same client_msg_id returns the message already sent");

// With instance, each message gains from_you and for_you; every message
// includes untrusted: true.
const waited = await ok(reviewer, "wait_for_messages", { cursor: me.latest_cursor, timeout_s: 25, instance: "desk" });
const event = waited.events.find((e) => e.type === "message.new");
assert.ok(event, "message.new arrives");
assert.equal(event.message.for_you, true);
assert.equal(event.message.from_you, false);
assert.equal(event.message.untrusted, true);
assert.ok(waited.cursor);

const read = await ok(reviewer, "read_messages", { conversation_id: conv, after_seq: 0, limit: 100, mark_read: true });
assert.ok(read.messages.length >= 1 && read.messages.every((m) => m.untrusted === true && m.provenance.attested_by === "server"));
assert.equal(read.has_more, false);

// check_inbox(instance): a conversation nobody holds is unclaimed.
const inbox = await ok(reviewer, "check_inbox", { instance: "laptop" });
assert.ok(inbox.messages.some((m) => m.unclaimed === true));

// claim_conversation refuses with held_by_other while a live session holds it.
await ok(reviewer, "claim_conversation", { conversation_id: conv, instance: "desk" });
const held = await ok(reviewer, "claim_conversation", { conversation_id: conv, instance: "laptop" });
assert.equal(held.status, "held_by_other");
assert.ok(held.trace, "every refusal carries a trace");

// Resource crowdedsea://me mirrors whoami.
const res = await reviewer.readResource({ uri: "crowdedsea://me" });
assert.equal(JSON.parse(res.contents[0].text).agent.handle, "alice/reviewer");

console.log("ok");
process.exit(0);
