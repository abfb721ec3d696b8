// The TypeScript SDK client receiving a recording's server messages over Streamable HTTP (issue 25).
//   node messages.mjs http://127.0.0.1:PORT/mcp '{"tool": NAME, "arguments": {...}, "elicit": "accept"|"decline", "sampled": {...}}'
// Logs at "info", calls the tool with a progress callback, answers sampling with `sampled` and
// elicitation with `elicit`, then ends its session (DELETE). Prints one JSON object: `session`
// (whether the server handed one out), `events` (notifications, requests and the answer, in the
// order they arrived) and `terminated` (the DELETE went through, or its error).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [url, planText] = process.argv.slice(2);
const plan = JSON.parse(planText);
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client(
  { name: "windtunnel-ts-messages", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: {} } },
);
const events = [];

client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
  events.push(["log", notification.params.level, notification.params.data]);
});
client.setRequestHandler(CreateMessageRequestSchema, (request) => {
  events.push(["sample", request.params.messages[0].content.text]);
  return plan.sampled;
});
client.setRequestHandler(ElicitRequestSchema, (request) => {
  events.push(["elicit", request.params.message]);
  return plan.elicit === "accept" ? { action: "accept", content: {} } : { action: "decline" };
});

const report = {};
try {
  await client.connect(transport);
  report.session = transport.sessionId !== undefined;
  await client.setLoggingLevel("info");
  const result = await client.callTool(
    { name: plan.tool, arguments: plan.arguments },
    CallToolResultSchema,
    { onprogress: (progress) => events.push(["progress", progress.progress, progress.total]) },
  );
  events.push(["answer", result]);
  report.events = events;
  try {
    await transport.terminateSession();
    report.terminated = transport.sessionId === undefined;
  } catch (error) {
    report.terminated = String(error?.message ?? error);
  }
} catch (error) {
  report.fatal = String(error?.message ?? error);
  report.events = events;
  process.exitCode = 1;
} finally {
  await client.close();
}
console.log(JSON.stringify(report));
