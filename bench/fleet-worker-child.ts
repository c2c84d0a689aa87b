/**
 * A worker process of the fleet benches (F1, F3): `createWorker` over a PostgreSQL schema with a
 * CPU-bound scripted model (each call spins `burnMs` of CPU, then answers from the request: a
 * `step` tool call until `turns` results, then text).
 * Usage: node --import tsx bench/fleet-worker-child.ts '<json>' with
 * `{ url, schema, burnMs?, turns?, concurrency?, sweepIntervalMs?, hangAfterTurn? }`; prints "ready".
 */
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { createAiSdkModelClient } from "../src/adapters/model/ai-sdk-client.ts";
import { defineTool } from "../src/core/tools.ts";
import { createWorker } from "../src/harness/worker.ts";
import { createPostgresEventLog } from "../src/store/postgres/pg-event-log.ts";
import { streamPartsOf } from "../src/testing/scripted-model.ts";

const config = JSON.parse(process.argv[2]) as { url: string; schema: string; burnMs?: number; turns?: number; concurrency?: number; sweepIntervalMs?: number; hang?: boolean };
const burnMs = config.burnMs ?? 10;
const turns = config.turns ?? 3;

function burn(ms: number): void {
  const until = performance.now() + ms;
  let x = 0;
  while (performance.now() < until) x += Math.sqrt(x + 1);
}

const model = new MockLanguageModelV4({
  doStream: async (options: LanguageModelV4CallOptions) => {
    const results = options.prompt.filter((message) => message.role === "tool").length;
    if (config.hang) return { stream: new ReadableStream({ start() {} }) };
    burn(burnMs);
    const turn = results >= turns ? { text: "done" } : { toolCalls: [{ id: `c${results}_${Math.random().toString(36).slice(2, 8)}`, name: "step", arguments: { n: results } }] };
    const parts = streamPartsOf(turn);
    return { stream: new ReadableStream({ start(controller) { for (const part of parts) controller.enqueue(part); controller.close(); } }) };
  },
});
const step = defineTool({
  name: "step",
  description: "one step",
  parameters: z.object({ n: z.number() }),
  execute: async (args) => ({ content: [{ type: "text", text: `step ${args.n}` }] }),
});
const eventLog = createPostgresEventLog({ connectionString: config.url, schema: config.schema, poolSize: 4 });
const worker = createWorker({
  eventLog,
  durability: "continue",
  models: { main: createAiSdkModelClient(model) },
  tools: [step],
  retry: { maxRetries: 0 },
  concurrency: config.concurrency ?? 4,
  ...(config.sweepIntervalMs !== undefined ? { sweepIntervalMs: config.sweepIntervalMs } : {}),
  onError: (error) => process.stderr.write(`worker error: ${String(error)}\n`),
});
console.log("ready");
process.on("SIGTERM", () => void worker.close().then(() => eventLog.close()).then(() => process.exit(0)));
