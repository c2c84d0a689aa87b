// An agent whose tools come from an MCP server: here the reference server
// `@modelcontextprotocol/server-everything` over stdio (install it beside this file:
// `npm install @modelcontextprotocol/server-everything`). Its tools appear as `everything__<tool>`.
// With ARBOR_EXAMPLE_SELF_TEST=1 the model is Arbor's loopback test server.
import { createRequire } from "node:module";
import { createHarness, createMemoryEventLog, createOpenAIModel } from "arbor-agent";
import { startOpenAIServer, textResponse, toolCallResponse } from "arbor-agent/testing";

const selfTest = process.env.ARBOR_EXAMPLE_SELF_TEST === "1";
const require = createRequire(import.meta.url);
const everything = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");
const model = selfTest
  ? await startOpenAIServer({
      responses: [toolCallResponse([{ id: "call_echo", name: "everything__echo", arguments: { message: "ping" } }]), textResponse("The server said ping.")],
    })
  : undefined;

const harness = await createHarness({
  eventLog: createMemoryEventLog(),
  models: { main: createOpenAIModel({ modelId: "gpt-4o-mini", api: "chat", ...(model ? { baseURL: model.url, apiKey: "test" } : {}) }) },
  mcpServers: [{ name: "everything", transport: "stdio", command: process.execPath, args: [everything, "stdio"] }],
});
const results = [];
harness.events$.subscribe((event) => {
  if (event.type === "entry.appended" && event.data.entry.type === "message" && event.data.entry.message.role === "toolResult") {
    results.push(event.data.entry.message.content.map((part) => part.text ?? "").join(""));
  }
});
const outcome = await harness.prompt("echo ping through the MCP server");
await harness.close();
await model?.close();
console.log(`run ${outcome.status}; tool results: ${JSON.stringify(results)}`);
if (selfTest) {
  if (outcome.status !== "done" || !results.some((text) => text.includes("ping"))) process.exit(1);
  console.log("example ok");
}
