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
  if (event.type === "tool.finished") outcomes.push(event.data.outcome);
});
const outcome = await harness.prompt("what time is it?");
await harness.close();
await server.close();
console.log(`run ${outcome.status}`);
console.log(`tool ended: ${outcomes.join(",")}`);
if (outcome.status !== "done") process.exit(1);
