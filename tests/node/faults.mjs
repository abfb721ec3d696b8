// The TypeScript SDK client meeting injected faults (tests/faults/test_typescript_client.py).
//   node faults.mjs URL '[{"tool": "x", "args": {...}, "timeout": MS}, ...]'
//   node faults.mjs --stdio COMMAND ARG... -- '[...]'
// Prints one JSON object: {"calls": [{"result"} | {"error": {"code", "message"}}]}; a call the
// transport lost (the connection dropped, the process gone) is an error like any other.
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

const client = new Client({ name: "windtunnel-ts-faults", version: "1.0.0" });
client.onerror = () => {}; // a dropped transport is reported by the call that lost it
const report = { calls: [] };
try {
  await client.connect(transport);
  for (const step of plan) {
    const options = step.timeout ? { timeout: step.timeout } : undefined;
    try {
      const result = await client.callTool({ name: step.tool, arguments: step.args ?? {} }, undefined, options);
      report.calls.push({ result });
    } catch (error) {
      report.calls.push({ error: { code: error?.code ?? null, message: String(error?.message) } });
    }
  }
} catch (error) {
  report.fatal = String(error?.message ?? error);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(report));
