// server-everything's own server behind the TS SDK's stateful Streamable HTTP transport, as its
// `streamableHttp` mode serves it, but on a port the OS picks (printed as the URL once bound).
import http from "node:http";
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createServer } from "@modelcontextprotocol/server-everything/dist/server/index.js";

const transports = new Map();
const listener = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  const body = text ? JSON.parse(text) : undefined;
  const sessionId = req.headers["mcp-session-id"];
  let transport = sessionId ? transports.get(sessionId) : undefined;
  if (!transport) {
    const { server } = createServer();
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    await server.connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
listener.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${listener.address().port}/mcp`);
});
