// Type-checked by the consumer test with the strictest common settings and skipLibCheck: false.
import { createHarness, createMemoryEventLog, createOpenAIModel, defineTool, type RunOutcome } from "arbor-agent";
import { startOpenAIServer, textResponse } from "arbor-agent/testing";
import { z } from "zod";

const server = await startOpenAIServer({ responses: [textResponse("hi")] });
const harness = await createHarness({
  eventLog: createMemoryEventLog(),
  models: { main: createOpenAIModel({ modelId: "gpt-4o-mini", baseURL: server.url, apiKey: "test" }) },
  tools: [
    defineTool({
      name: "echo",
      description: "Echo the text",
      parameters: z.object({ text: z.string() }),
      execute: async ({ text }) => ({ content: [{ type: "text", text }] }),
    }),
  ],
});
harness.events$.subscribe((event) => {
  const position: number = event.globalPosition;
  console.log(event.type, position);
});
const outcome: RunOutcome = await harness.prompt("hello");
console.log(outcome.status);
await harness.close();
await server.close();
