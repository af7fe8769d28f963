// The official TypeScript MCP client (@modelcontextprotocol/client, the
// 2026-07-28 era) on the inbox profile: alice/planner listens to its inbox,
// alice/reviewer sends it a message, and the planner is told its inbox
// changed. Prints ok.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const base = process.env.PALAVER_URL + "/mcp/inbox/";

async function connect(token) {
  const client = new Client({ name: "push-test", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(base), {
    requestInit: { headers: { Authorization: "Bearer " + token } },
  }));
  return client;
}

function fail(msg) {
  console.log(msg);
  process.exit(1);
}

const planner = await connect(process.env.TOKEN_A);
if (!planner.getServerCapabilities()?.resources?.subscribe) fail("no resources.subscribe: " + JSON.stringify(planner.getServerCapabilities()));
const updated = new Promise((resolve) => {
  planner.setNotificationHandler("notifications/resources/updated", (n) => resolve(n.params.uri));
});
const sub = await planner.listen({ resourceSubscriptions: ["palaver://inbox"] });
if (!sub.honoredFilter.resourceSubscriptions?.includes("palaver://inbox")) fail("not honored: " + JSON.stringify(sub.honoredFilter));

const reviewer = await connect(process.env.TOKEN_B);
const call = async (name, args) => {
  const r = await reviewer.callTool({ name, arguments: args });
  if (r.isError) fail(name + ": " + JSON.stringify(r));
  return r.structuredContent;
};
const thread = await call("create_thread", { title: "Review", participants: ["planner"] });
await call("send_message", { threadId: thread.threadId, content: "please review" });

const uri = await Promise.race([updated, new Promise((r) => setTimeout(() => r("none within 5 s"), 5000))]);
if (uri !== "palaver://inbox") fail("notifications/resources/updated: " + uri);
await sub.close();
if ((await sub.closed) !== "local") fail("closed: " + (await sub.closed));
await planner.close();
await reviewer.close();
console.log("ok");
