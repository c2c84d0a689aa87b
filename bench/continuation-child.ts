/**
 * The owner process of the F2 bench (`fleet-continuation.bench.ts`): runs one prompt on a SQLite
 * log with a scripted model that calls a `step` tool `steps` times, then never answers; once its
 * model is asked for the answer after the last step (every step's result is logged) it prints
 * "AT <sessionId>", and the bench kills it with SIGKILL, leaving a run open at that step.
 * Usage: node --import tsx bench/continuation-child.ts '<json>' with `{ db, steps }`.
 */
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { createAiSdkModelClient } from "../src/adapters/model/ai-sdk-client.ts";
import { defineTool } from "../src/core/tools.ts";
import { createHarness } from "../src/harness/create-harness.ts";
import { streamPartsOf } from "../src/testing/scripted-model.ts";

const config = JSON.parse(process.argv[2]) as { db: string; steps: number };
let sessionId = "";

const model = new MockLanguageModelV4({
  doStream: async (options: LanguageModelV4CallOptions) => {
    const results = options.prompt.filter((message) => message.role === "tool").length;
    if (results >= config.steps) {
      process.stdout.write(`AT ${sessionId}\n`);
      return { stream: new ReadableStream({ start() {} }) };
    }
    const parts = streamPartsOf({ text: `Step ${results}: checking the next file.`, toolCalls: [{ id: `c${results}`, name: "step", arguments: { n: results } }] });
    return { stream: new ReadableStream({ start(controller) { for (const part of parts) controller.enqueue(part); controller.close(); } }) };
  },
});
const step = defineTool({
  name: "step",
  description: "one step",
  parameters: z.object({ n: z.number() }),
  replay: "safe",
  execute: async (args) => ({ content: [{ type: "text", text: `step ${args.n}: 12 lines, nothing to change` }] }),
});
const harness = await createHarness({ eventLogPath: config.db, models: { main: createAiSdkModelClient(model) }, tools: [step], retry: { maxRetries: 0 } });
sessionId = harness.id;
await harness.prompt("Walk through the files one step at a time.");
