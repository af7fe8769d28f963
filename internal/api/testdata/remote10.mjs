// An A2A 1.0 agent made with @a2a-js/sdk's own server (its Express
// handlers), over HTTPS on loopback, for TestJSRemoteAgent. It echoes a
// message at once; "slow …" makes a task that stays working until a line
// "finish" comes on stdin, then completes with an artifact; "fail …"
// makes a task that fails; "ask …" makes a task that asks for input
// ("which city?"), and the message sent into that task completes it
// with an artifact of text and data. Each message id it was sent is
// printed, so the test can tell nothing came twice. A line "down" on
// stdin makes it answer every call 503 until a line "up".
import fs from "node:fs";
import https from "node:https";
import readline from "node:readline";
import express from "express";
import { TaskState, Role } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";

const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const host = process.env.REMOTE_HOST;
let port = 0;
const text = (s) => ({ content: { $case: "text", value: s } });

const card = () => ({
  name: "Echo", description: "says it back", version: "1.0.0",
  provider: { organization: "Example", url: "https://example.com" },
  supportedInterfaces: [{ url: `https://${host}:${port}/a2a/jsonrpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" }],
  capabilities: { streaming: false, pushNotifications: false, extensions: [] },
  securitySchemes: {}, securityRequirements: [], defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"],
  skills: [{ id: "echo", name: "echo", description: "echoes", tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
  signatures: [],
});

const waiting = []; // finish functions of slow tasks
let down = false; // "down": every call is answered 503 until "up"
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const l = line.trim();
  if (l === "finish") waiting.splice(0).forEach((f) => f());
  if (l === "down" || l === "up") {
    down = l === "down";
    say({ step: l });
  }
});

const status = (ctx, state, words) => ({
  kind: "statusUpdate", data: { taskId: ctx.taskId, contextId: ctx.contextId, metadata: undefined,
    status: { state, timestamp: new Date().toISOString(),
      message: words ? { messageId: "s-" + ctx.taskId, contextId: ctx.contextId, taskId: ctx.taskId, role: Role.ROLE_AGENT, parts: [text(words)], metadata: undefined, extensions: [], referenceTaskIds: [] } : undefined } },
});

const executor = {
  async execute(ctx, bus) {
    const m = ctx.userMessage;
    const words = m.parts.map((p) => p.content?.$case === "text" ? p.content.value : "").join("");
    const asked = ctx.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;
    say({ step: "sent", messageId: m.messageId, contextId: ctx.contextId, taskId: asked ? ctx.taskId : "", text: words });
    if (asked) { // the answer to "which city?"
      bus.publish({ kind: "artifactUpdate", data: { taskId: ctx.taskId, contextId: ctx.contextId, append: false, lastChunk: true, metadata: undefined,
        artifact: { artifactId: "forecast", name: "forecast", description: "", metadata: undefined, extensions: [],
          parts: [text("sunny in " + words), { content: { $case: "data", value: { city: words, temp: 21 } } }] } } });
      bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED));
      bus.finished();
      return;
    }
    if (words.startsWith("ask")) {
      bus.publish({ kind: "task", data: { id: ctx.taskId, contextId: ctx.contextId, artifacts: [], history: [m], metadata: undefined,
        status: status(ctx, TaskState.TASK_STATE_INPUT_REQUIRED, "which city?").data.status } });
      bus.finished();
      return;
    }
    if (!words.startsWith("slow") && !words.startsWith("fail")) {
      bus.publish({ kind: "message", data: { messageId: "r-" + m.messageId, contextId: ctx.contextId, taskId: "", role: Role.ROLE_AGENT,
        parts: [text("echo: " + words)], metadata: undefined, extensions: [], referenceTaskIds: [] } });
      bus.finished();
      return;
    }
    bus.publish({ kind: "task", data: { id: ctx.taskId, contextId: ctx.contextId, artifacts: [], history: [m], metadata: undefined,
      status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() } } });
    if (words.startsWith("fail")) {
      bus.publish(status(ctx, TaskState.TASK_STATE_FAILED, "no such report"));
      bus.finished();
      return;
    }
    await new Promise((resolve) => waiting.push(resolve));
    bus.publish({ kind: "artifactUpdate", data: { taskId: ctx.taskId, contextId: ctx.contextId, append: false, lastChunk: true, metadata: undefined,
      artifact: { artifactId: "report", name: "report", description: "", parts: [text("the report on " + words.slice(5))], metadata: undefined, extensions: [] } } });
    bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED));
    bus.finished();
  },
  async cancelTask() {},
};

const app = express();
app.use((req, res, next) => (down && req.method === "POST" ? res.status(503).send("down for a while") : next()));
const handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor);
app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: { getAgentCard: async () => card() } }));
app.use("/a2a/jsonrpc", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const server = https.createServer({ cert: fs.readFileSync(process.env.REMOTE_CERT), key: fs.readFileSync(process.env.REMOTE_KEY) }, app);
server.listen(0, "127.0.0.1", () => {
  port = server.address().port;
  say({ step: "listening", port });
});
