// An agent written from seed 004's text alone: two agents of one owner
// hand off a task in a thread at /mcp/inbox/.
import assert from "node:assert/strict";
import { connect, call, ok } from "./lib.mjs";

const path = "/mcp/inbox/";
const planner = await connect(path, process.env.TOKEN_A);
const reviewer = await connect(path, process.env.TOKEN_B);
assert.ok(planner.getInstructions().length > 0, "instructions arrive at connect");

const { tools } = await planner.listTools();
assert.equal(tools.length, 10);
const readOnly = tools.filter((t) => t.annotations?.readOnlyHint).map((t) => t.name).sort();
assert.deepEqual(readOnly, ["check_inbox", "list_agents", "list_threads", "read_thread"]);

// "Verify it worked": a bare array of the other agents, never the caller.
const agents = await ok(planner, "list_agents");
assert.ok(Array.isArray(agents));
const writer = agents.find((a) => a.username === "reviewer");
assert.ok(writer && "name" in writer && "description" in writer && "goal" in writer);

const thread = await ok(planner, "create_thread", { title: "Review the plan", goal: "the plan is approved", participants: [writer.username] });
assert.ok(thread.threadId && thread.participants.length === 2);

// Over 200 characters without a summary is rejected with an error.
const long = "x".repeat(201);
const refused = await call(planner, "send_message", { threadId: thread.threadId, content: long });
assert.ok(refused.isError);
const sent = await ok(planner, "send_message", { threadId: thread.threadId, content: long, summary: "Please review the plan" });
assert.ok(sent.messageId && sent.threadId === thread.threadId && sent.createdAt);
assert.equal(sent.recipients, 1);

let inbox = await ok(reviewer, "check_inbox", { limit: 20 });
assert.equal(inbox.total, 1);
assert.equal(inbox.messages[0].messageId, sent.messageId);
assert.equal(inbox.messages[0].alreadyRead, false);

const history = await ok(reviewer, "read_thread", { threadId: thread.threadId });
assert.ok(history.messages.every((m) => !("body" in m) && !("content" in m)));
const msg = await ok(reviewer, "read_message", { messageId: sent.messageId });
assert.equal(msg.body, long);
inbox = await ok(reviewer, "check_inbox");
assert.equal(inbox.messages[0].alreadyRead, true, "read, not acknowledged: still there");
await ok(reviewer, "acknowledge", { messageId: sent.messageId });
inbox = await ok(reviewer, "check_inbox");
assert.equal(inbox.total, 0);

const threads = await ok(planner, "list_threads");
assert.ok(JSON.stringify(threads).includes(thread.threadId));

// Resources at the seed's URIs, summaries only.
const res = await reviewer.readResource({ uri: "inbots://inbox" });
assert.ok(!res.contents[0].text.includes(long));
await reviewer.readResource({ uri: `inbots://threads/${thread.threadId}` });
const prompts = (await planner.listPrompts()).prompts.map((p) => p.name).sort();
assert.deepEqual(prompts, ["handoff", "triage_inbox"]);

// request_close: only the opener asks; while pending, sending is rejected.
assert.ok((await call(reviewer, "request_close", { threadId: thread.threadId })).isError);
await ok(planner, "request_close", { threadId: thread.threadId });
assert.ok((await call(reviewer, "send_message", { threadId: thread.threadId, content: "thanks!" })).isError);

console.log("ok");
process.exit(0);
