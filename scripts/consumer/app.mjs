// A plain Node ESM program that uses the installed package by name (the consumer test runs it).
import { createHarness, createMemoryEventLog, createOpenAIModel, defineTool } from "arbor-agent";
import { startOpenAIServer, textResponse, toolCallResponse } from "arbor-agent/testing";
import { z } from "zod";

const server = await startOpenAIServer({
  responses: [toolCallResponse([{ id: "call_1", name: "now", arguments: {} }]), textResponse("It is now.")],
});
const harness = await createHarness({
  eventLog: createMemoryEventLog(),
  models: { main: createOpenAIModel({ modelId: "gpt-4o-mini", baseURL: server.url, apiKey: "test" }) },
  tools: [
    defineTool({
      name: "now",
      description: "Current time",
      parameters: z.object({}),
      execute: async () => ({ content: [{ type: "text", text: new Date(0).toISOString() }] }),
    }),
  ],
});
const outcomes = [];
harness.events$.subscribe((event) => {
  if (event.type === "tool.ended") outcomes.push(event.data.outcome);
});
const outcome = await harness.prompt("what time is it?");
// arbor-agent/http from the built package: the session is served to useChat clients.
const { createChatHandler, startChatServer } = await import("arbor-agent/http");
const http = await startChatServer({ handler: createChatHandler({ harness }) });
const detail = await (await fetch(`${http.url}/api/sessions/${harness.id}`)).json();
// The inspector's built page ships in the package (dist/inspector/), found from the installed module.
const page = await fetch(`${http.url}/inspector`);
const pageHtml = await page.text();
const script = await fetch(`${http.url}/inspector/assets/inspector.js`);
await script.arrayBuffer();
await http.close();
console.log(`http inspector: page ${page.status}${pageHtml.includes('data-base="/api"') ? " with base" : ""}, script ${script.status}`);
console.log(`http messages: ${detail.messages.map((message) => message.role).join(",")}`);
await harness.close();
await server.close();
console.log(`run ${outcome.status}`);
console.log(`tool ended: ${outcomes.join(",")}`);
if (outcome.status !== "done") process.exit(1);
