// An A2A 0.3 client on the A2A project's JavaScript SDK (@a2a-js/sdk), run
// by TestJSClient against a real Palaver server. The SDK speaks A2A 1.0;
// this script is the 0.3 client it also is through its compatibility
// layer (legacyCompat): it fetches the card as 0.3 clients do, naming no
// A2A-Version, gets 0.3's card and so speaks 0.3 (testdata/client10.mjs
// is the native 1.0 client). It prints one JSON line per step for the
// test to check and to act on:
//
//   card      the exposed agent's card, fetched and parsed by the SDK, and
//             the revision the client speaks
//   event     each event of a message/stream (the test drives the agent
//             over MCP as they arrive)
//   second    a second message in the same context, by message/send
//   got       that task by tasks/get, once the test says "go" on stdin
//   refused   the same call by a principal without reach
//   missing   an unexposed agent's card
//
// Environment: PALAVER_URL (the server), A2A_TOKEN (the caller's bearer),
// A2A_STRANGER_TOKEN (one without reach).
import { createInterface } from "node:readline";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";

const base = process.env.PALAVER_URL;
const say = (step, fields) => console.log(JSON.stringify({ step, ...fields }));
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function bearerFetch(token) {
  return (url, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Authorization", "Bearer " + token);
    return fetch(url, { ...init, headers });
  };
}

// unversioned fetches as a 0.3 client does: naming no A2A-Version.
function unversioned(fetchImpl) {
  return (url, init = {}) => {
    const headers = new Headers(init.headers);
    headers.delete("A2A-Version");
    return fetchImpl(url, { ...init, headers });
  };
}

function factory(token) {
  const fetchImpl = bearerFetch(token);
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: unversioned(fetchImpl), legacyCompat: { enabled: true } }),
    }),
  );
}

// message is a message/send's request; returnImmediately answers with the
// task as it stands (blocking: false) instead of waiting for it to end.
function message(text, contextId = "", returnImmediately = false) {
  return {
    message: {
      messageId: crypto.randomUUID(), contextId, taskId: "", role: Role.ROLE_USER,
      parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
      metadata: undefined, extensions: [], referenceTaskIds: [],
    },
    configuration: returnImmediately ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately } : undefined,
    metadata: undefined, tenant: "",
  };
}

const state = (s) => TaskState[s?.state] ?? String(s?.state);
const text = (parts) => (parts ?? []).map((p) => p.content?.value ?? "").join("\n");
const cardPath = (agent) => `${base}/a2a/${agent}/.well-known/agent-card.json`;

const client = await factory(process.env.A2A_TOKEN).createFromUrl(cardPath("alice/reviewer"), "");
const card = await client.getAgentCard();
say("card", { name: card.name, description: card.description, skills: card.skills.map((s) => s.id + "=" + s.name), version: client.protocolVersion });

let contextId = "";
for await (const ev of client.sendMessageStream(message("Please review PR 12"))) {
  const p = ev.payload;
  switch (p?.$case) {
    case "task":
      contextId = p.value.contextId;
      say("event", { kind: "task", id: p.value.id, contextId, state: state(p.value.status) });
      break;
    case "statusUpdate":
      say("event", { kind: "status", state: state(p.value.status), text: text(p.value.status?.message?.parts) });
      break;
    case "artifactUpdate":
      say("event", { kind: "artifact", text: text(p.value.artifact?.parts) });
      break;
    default:
      say("event", { kind: p?.$case ?? "none" });
  }
}

const second = await client.sendMessage(message("Which nit?", contextId, true));
const task = second.payload?.value ?? second;
say("second", { id: task.id, contextId: task.contextId, state: state(task.status) });
await lines.next(); // the test started the agent on it
const got = await client.getTask({ id: task.id, historyLength: undefined, tenant: "" });
say("got", { state: state(got.status), history: got.history.length });

try {
  const stranger = await factory(process.env.A2A_STRANGER_TOKEN).createFromUrl(cardPath("alice/reviewer"), "");
  await stranger.sendMessage(message("hello", "", true));
  say("refused", { error: "" });
} catch (e) {
  say("refused", { error: String(e?.message ?? e) });
}

try {
  await factory(process.env.A2A_TOKEN).createFromUrl(cardPath("alice/planner"), "");
  say("missing", { error: "" });
} catch (e) {
  say("missing", { error: String(e?.message ?? e) });
}
process.exit(0);
