// What the TypeScript SDK client sees of a server's whole surface (issue 25).
//   node surface.mjs http://127.0.0.1:PORT/mcp '{"reads": [URI...], "gets": [{name, arguments}], "completions": [{ref, argument}]}'
// Prints one JSON object: serverVersion, capabilities, instructions, tools, resources,
// resourceTemplates, reads, prompts, gets, completions (each answer, or {"error": {code, message}}).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, planText] = process.argv.slice(2);
const plan = JSON.parse(planText ?? "{}");
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "windtunnel-ts-surface", version: "1.0.0" });

async function answer(ask) {
  try {
    return await ask();
  } catch (error) {
    return { error: { code: error?.code ?? null, message: String(error?.message) } };
  }
}

const report = {};
try {
  await client.connect(transport);
  report.serverVersion = client.getServerVersion() ?? null;
  report.capabilities = client.getServerCapabilities() ?? null;
  report.instructions = client.getInstructions() ?? null;
  report.tools = (await client.listTools()).tools;
  report.resources = (await client.listResources()).resources;
  report.resourceTemplates = (await client.listResourceTemplates()).resourceTemplates;
  report.prompts = (await client.listPrompts()).prompts;
  report.reads = [];
  for (const uri of plan.reads ?? []) report.reads.push(await answer(() => client.readResource({ uri })));
  report.gets = [];
  for (const get of plan.gets ?? []) report.gets.push(await answer(() => client.getPrompt(get)));
  report.completions = [];
  for (const params of plan.completions ?? []) report.completions.push(await answer(() => client.complete(params)));
  report.logging = await answer(() => client.setLoggingLevel("info"));
  report.subscribe = await answer(() => client.subscribeResource({ uri: (plan.reads ?? [])[0] }));
} catch (error) {
  report.fatal = String(error?.message ?? error);
  process.exitCode = 1;
} finally {
  await client.close();
}
console.log(JSON.stringify(report));
