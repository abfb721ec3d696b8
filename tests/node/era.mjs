// The protocol version the TypeScript SDK client negotiates with a server, and what it lists.
//   node era.mjs http://127.0.0.1:PORT/mcp
// Prints one JSON object: protocolVersion (as its transport sends it after `initialize`),
// serverVersion, tools.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "windtunnel-ts-era", version: "1.0.0" });
const report = {};
try {
  await client.connect(transport);
  report.protocolVersion = transport.protocolVersion ?? null;
  report.serverVersion = client.getServerVersion() ?? null;
  report.tools = (await client.listTools()).tools;
} catch (error) {
  report.fatal = String(error?.message ?? error);
  process.exitCode = 1;
} finally {
  await client.close();
}
console.log(JSON.stringify(report));
