// Type-checked by the consumer test with the strictest common settings and skipLibCheck: false.
import { createHarness, createMemoryEventLog, createOpenAIModel, defineTool, type RunOutcome } from "arbor-agent";
import { defineAgent } from "arbor-agent/agent";
import { ofType } from "arbor-agent/log";
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
harness.events$.pipe(ofType("tool.ended")).subscribe((event) => {
  // Typed by the event catalogue: no cast.
  const outcome: "succeeded" | "failed" | "aborted" | "timed_out" | "blocked" | "invalid" | "not_found" | "skipped" | "interrupted" | "denied" = event.data.outcome;
  console.log(event.data.toolName, outcome, event.globalPosition);
});
const outcome: RunOutcome = await harness.prompt("hello");
console.log(outcome.status);
// A typed agent: the outcome's output is the output schema's type (checked here, not run).
const triage = defineAgent({
  name: "triage",
  instructions: "Label the issue.",
  input: z.object({ title: z.string() }),
  output: z.object({ label: z.enum(["bug", "feature"]), priority: z.number() }),
});
export async function label(title: string): Promise<string> {
  const result = await triage.run({ title }, { harness });
  if (result.status === "suspended") return "awaiting approval";
  if (result.status !== "done") return result.error.code;
  const typed: { label: "bug" | "feature"; priority: number } = result.output;
  return typed.label;
}
await harness.close();
await server.close();
