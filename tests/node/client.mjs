// A real TypeScript SDK client for the compatibility tests.
//   node client.mjs http://127.0.0.1:PORT/mcp '[{"tool": "x", "args": {...}}, ...]'
//   node client.mjs --stdio COMMAND ARG... -- '[...]'
// Prints one JSON object: {"protocolVersion", "tools": [...], "calls": [{"result"} | {"error"}]}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
let transport;
let plan;
if (argv[0] === "--stdio") {
  const end = argv.indexOf("--");
  const [command, ...args] = argv.slice(1, end);
  transport = new StdioClientTransport({ command, args, stderr: "ignore" });
  plan = JSON.parse(argv[end + 1] ?? "[]");
} else {
  transport = new StreamableHTTPClientTransport(new URL(argv[0]));
  plan = JSON.parse(argv[1] ?? "[]");
}

const client = new Client({ name: "windtunnel-ts-compat", version: "1.0.0" });
const report = { tools: [], calls: [] };
try {
  await client.connect(transport);
  report.protocolVersion = transport.protocolVersion ?? null;
  const listed = await client.listTools();
  report.tools = listed.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema }));
  for (const step of plan) {
    try {
      report.calls.push({ result: await client.callTool({ name: step.tool, arguments: step.args ?? {} }) });
    } catch (error) {
      report.calls.push({ error: { code: error?.code ?? null, message: String(error?.message) } });
    }
  }
} catch (error) {
  report.fatal = String(error?.message ?? error);
  process.exitCode = 1;
} finally {
  await client.close();
}
console.log(JSON.stringify(report));
