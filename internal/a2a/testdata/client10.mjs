// An A2A 1.0 client on the A2A project's JavaScript SDK (@a2a-js/sdk), run
// by TestJSClient against a real Palaver server: the SDK as it is, with no
// compatibility layer. It prints one JSON line per step for the test to
// check and to act on:
//
//   card            the exposed agent's card, fetched and parsed by the SDK,
//                   and the revision the client speaks
//   event           each event of a SendStreamingMessage (the test drives
//                   the agent over MCP as they arrive)
//   blocking        before a SendMessage that waits for its answer
//   answered        that task, once the agent answered
//   queued          a SendMessage that returns at once (returnImmediately)
//   subscribed      each event of a SubscribeToTask of that task
//   got             that task by GetTask, with historyLength 1
//   listed          the caller's tasks by ListTasks, two to a page
//   canceled        a new task, canceled by CancelTask
//   not-cancelable  CancelTask of the first, answered task
//   final           SubscribeToTask of that task
//   unknown         GetTask of a task of no one's
//   refused         a SendMessage by a principal without reach
//   missing         an unexposed agent's card
//
// Environment: PALAVER_URL (the server), A2A_TOKEN (the caller's bearer),
// A2A_STRANGER_TOKEN (one without reach).
import { createInterface } from "node:readline";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";

const base = process.env.PALAVER_URL;
const say = (step, fields) => console.log(JSON.stringify({ step, ...fields }));
createInterface({ input: process.stdin }); // keeps stdin open until the test closes it

function bearerFetch(token) {
  return (url, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Authorization", "Bearer " + token);
    return fetch(url, { ...init, headers });
  };
}

function factory(token) {
  const fetchImpl = bearerFetch(token);
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
}

// message is a SendMessage's request; returnImmediately answers with the
// task as it stands instead of waiting for it to end or ask something.
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
const refusal = (e) => ({ name: e?.name ?? "", error: String(e?.message ?? e), data: JSON.stringify(e?.data ?? null) });

function eventOf(ev) {
  const p = ev.payload;
  switch (p?.$case) {
    case "task":
      return { kind: "task", id: p.value.id, contextId: p.value.contextId, state: state(p.value.status) };
    case "statusUpdate":
      return { kind: "status", state: state(p.value.status), text: text(p.value.status?.message?.parts) };
    case "artifactUpdate":
      return { kind: "artifact", text: text(p.value.artifact?.parts), mediaType: p.value.artifact?.parts?.[0]?.mediaType ?? "" };
    default:
      return { kind: p?.$case ?? "none" };
  }
}

const client = await factory(process.env.A2A_TOKEN).createFromUrl(cardPath("alice/reviewer"), "");
const card = await client.getAgentCard();
say("card", {
  name: card.name, description: card.description, skills: card.skills.map((s) => s.id + "=" + s.name),
  interfaces: card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`),
  streaming: card.capabilities?.streaming ?? false, version: client.protocolVersion,
});

let first;
for await (const ev of client.sendMessageStream(message("Please review PR 12"))) {
  const e = eventOf(ev);
  first ??= e;
  say("event", e);
}
const contextId = first.contextId;

say("blocking", {});
const answered = await client.sendMessage(message("Which nit?", contextId));
say("answered", { id: answered.id, contextId: answered.contextId, state: state(answered.status), text: text(answered.status?.message?.parts) });

const queued = await client.sendMessage(message("Also PR 13", contextId, true));
say("queued", { id: queued.id, state: state(queued.status) });
for await (const ev of client.resubscribeTask({ tenant: "", id: queued.id })) {
  say("subscribed", eventOf(ev));
}

const got = await client.getTask({ tenant: "", id: queued.id, historyLength: 1 });
say("got", { state: state(got.status), history: got.history.length, artifacts: got.artifacts.map((a) => text(a.parts)) });

const list = (pageToken) => client.listTasks({ tenant: "", contextId: "", status: 0, pageSize: 2, pageToken, historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: undefined });
const page1 = await list("");
const page2 = await list(page1.nextPageToken);
say("listed", {
  pages: [page1.tasks.map((t) => t.id), page2.tasks.map((t) => t.id)], states: page1.tasks.map((t) => state(t.status)),
  artifacts: page1.tasks.map((t) => t.artifacts.length), total: page1.totalSize, size: page1.pageSize, last: page2.nextPageToken,
});

const fourth = await client.sendMessage(message("Never mind PR 14", contextId, true));
const canceled = await client.cancelTask({ tenant: "", id: fourth.id, metadata: undefined });
say("canceled", { id: canceled.id, state: state(canceled.status) });

try {
  await client.cancelTask({ tenant: "", id: first.id, metadata: undefined });
  say("not-cancelable", { name: "", error: "" });
} catch (e) {
  say("not-cancelable", refusal(e));
}
try {
  for await (const ev of client.resubscribeTask({ tenant: "", id: first.id })) {
    say("final", { name: "", error: "", event: eventOf(ev) });
  }
  say("final", { name: "", error: "" });
} catch (e) {
  say("final", refusal(e.cause ?? e));
}
try {
  await client.getTask({ tenant: "", id: "msg_nothing", historyLength: undefined });
  say("unknown", { name: "", error: "" });
} catch (e) {
  say("unknown", refusal(e));
}

try {
  const stranger = await factory(process.env.A2A_STRANGER_TOKEN).createFromUrl(cardPath("alice/reviewer"), "");
  await stranger.sendMessage(message("hello", "", true));
  say("refused", { name: "", error: "" });
} catch (e) {
  say("refused", refusal(e));
}

try {
  await factory(process.env.A2A_TOKEN).createFromUrl(cardPath("alice/planner"), "");
  say("missing", { error: "" });
} catch (e) {
  say("missing", { error: String(e?.message ?? e) });
}
process.exit(0);
