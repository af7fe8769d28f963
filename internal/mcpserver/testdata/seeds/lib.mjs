// Shared by the seed scripts: connect with the official TypeScript MCP
// client, call a tool, read a result. Only what each seed's text says.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export async function connect(path, token) {
  const client = new Client({ name: "seed-script", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(path, process.env.PALAVER_URL), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

// call returns a tool's result as JSON, and whether it was an error.
export async function call(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  const value = r.structuredContent ?? JSON.parse(r.content[0].text);
  return { value, isError: r.isError === true };
}

// ok calls a tool that must succeed.
export async function ok(client, name, args = {}) {
  const { value, isError } = await call(client, name, args);
  if (isError) throw new Error(`${name}: ${JSON.stringify(value)}`);
  return value;
}
