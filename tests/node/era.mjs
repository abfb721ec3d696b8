// The protocol version a TypeScript SDK client negotiates with a server, and what it lists.
//   node era.mjs http://127.0.0.1:PORT/mcp
//   node era.mjs [--auto] --stdio COMMAND ARG...
// The client is @modelcontextprotocol/sdk's (a handshake-era client: `initialize` only), or with
// --auto the dual-era client of @modelcontextprotocol/client in `auto` negotiation mode: it probes
// with `server/discover` (over stdio on a sibling process spawned from the same command) and
// falls back to `initialize` on any error.
// Prints one JSON object: protocolVersion (as negotiated), serverVersion, tools.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as DualEraClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as DualEraStdioTransport } from "@modelcontextprotocol/client/stdio";

// The handshake-era client tells its transport the negotiated version only if the transport asks
// (HTTP sends it as a header): this stdio transport asks, to report it.
class VersionedStdioTransport extends StdioClientTransport {
  setProtocolVersion(version) {
    this.protocolVersion = version;
  }
}

const argv = process.argv.slice(2);
const auto = argv[0] === "--auto";
const target = auto ? argv.slice(1) : argv;
const info = { name: "windtunnel-ts-era", version: "1.0.0" };
let transport;
let client;
let negotiated;
if (target[0] === "--stdio") {
  const [command, ...args] = target.slice(1);
  if (auto) {
    transport = new DualEraStdioTransport({ command, args, stderr: "ignore" });
    client = new DualEraClient(info, { versionNegotiation: { mode: "auto" } });
    negotiated = () => client.getNegotiatedProtocolVersion();
  } else {
    transport = new VersionedStdioTransport({ command, args, stderr: "ignore" });
    client = new Client(info);
    negotiated = () => transport.protocolVersion;
  }
} else {
  transport = new StreamableHTTPClientTransport(new URL(target[0]));
  client = new Client(info);
  negotiated = () => transport.protocolVersion;
}
const report = {};
try {
  await client.connect(transport);
  report.protocolVersion = negotiated() ?? null;
  report.serverVersion = client.getServerVersion() ?? null;
  report.tools = (await client.listTools()).tools;
} catch (error) {
  report.fatal = String(error?.message ?? error);
  process.exitCode = 1;
} finally {
  await client.close();
}
console.log(JSON.stringify(report));
