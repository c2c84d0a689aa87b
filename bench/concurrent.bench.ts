/**
 * concurrent (goal P9): SESSIONS concurrent sessions × TURNS tool turns through Arbor against
 * SESSIONS concurrent plain AI SDK `streamText` loops, both against the same loopback
 * OpenAI-wire model (`startOpenAIServer`, in this process, answering a tool call until the
 * request carries TURNS tool results, then a text).
 * - Arbor: one SQLite log (FULL, the default), SESSIONS sessions, an agent each over
 *   `createOpenAIModel` (the `@ai-sdk/openai` chat model), the same tool; all `prompt()`s at
 *   once, timed until every run ended (every event committed);
 * - baseline: SESSIONS `streamText` loops at once over `createOpenAI(...).chat(...)`
 *   (`stopWhen: stepCountIs(TURNS + 1)`), the same tool, `fullStream` drained, no persistence.
 * Wall time of the whole batch, median of ROUNDS paired rounds alternating which side goes first;
 * the process's CPU time (user + system) over the batch is printed beside it (the loopback server
 * runs in the same process and serves both sides the same responses).
 * Sizes: ARBOR_BENCH_SESSIONS (default 50) × ARBOR_BENCH_TURNS (default 20).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import { jsonSchema, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";
import { createOpenAIModel } from "../src/adapters/model/openai.ts";
import { defineTool } from "../src/core/tools.ts";
import { createAgent } from "../src/machines/agent.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse } from "../src/testing/openai-server.ts";
import { median, printGoal } from "./goal.ts";

const SESSIONS = Number(process.env.ARBOR_BENCH_SESSIONS ?? 50);
const TURNS = Number(process.env.ARBOR_BENCH_TURNS ?? 20);
const ROUNDS = 3;

const step = defineTool({ name: "step", description: "One step", parameters: z.object({ n: z.number() }), execute: async ({ n }) => ({ content: [{ type: "text", text: `step ${n} done` }] }) });

/** Wall and CPU time of one batch, ms. */
type Batch = { wall: number; cpu: number };

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

export async function arbor(modelUrl: string): Promise<Batch> {
  const dir = mkdtempSync(join(process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir()), "arbor-concurrent-"));
  const log = createSqliteEventLog({ path: join(dir, "bench.db") });
  try {
    const repo = createSessionRepository({ log });
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: modelUrl, apiKey: "test", api: "chat" });
    const agents = await Promise.all(Array.from({ length: SESSIONS }, async () => createAgent({ session: await repo.create({ cwd: dir }), model, tools: [step] })));
    const cpu = process.cpuUsage();
    const started = performance.now();
    const outcomes = await Promise.all(agents.map((agent) => agent.prompt("go")));
    const elapsed = { wall: performance.now() - started, cpu: cpuMs(cpu) };
    for (const outcome of outcomes) if (outcome.status !== "done") throw new Error(`arbor run ended ${outcome.status}: ${outcome.error ?? ""}`);
    await Promise.all(agents.map((agent) => agent.dispose()));
    return elapsed;
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function baseline(modelUrl: string): Promise<Batch> {
  const model = createOpenAI({ baseURL: modelUrl, apiKey: "test" }).chat("gpt-test");
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      const result = streamText({
        model,
        prompt: "go",
        tools: {
          step: tool({
            description: "One step",
            inputSchema: jsonSchema<{ n: number }>({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }),
            execute: async ({ n }) => `step ${n} done`,
          }),
        },
        stopWhen: stepCountIs(TURNS + 1),
      });
      let steps = 0;
      for await (const part of result.fullStream) if (part.type === "finish-step") steps++;
      if (steps !== TURNS + 1) throw new Error(`baseline ran ${steps} steps`);
    }),
  );
  return { wall: performance.now() - started, cpu: cpuMs(cpu) };
}

export default async function concurrentBench(): Promise<void> {
  const server = await startOpenAIServer({
    respond: (request) => {
      const results = ((request.body?.messages ?? []) as { role: string }[]).filter((message) => message.role === "tool").length;
      return results < TURNS ? toolCallResponse([{ id: `call_${results}`, name: "step", arguments: { n: results } }]) : textResponse("All steps done.");
    },
  });
  try {
    await arbor(server.url);
    await baseline(server.url);
    const ours: Batch[] = [];
    const theirs: Batch[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        ours.push(await arbor(server.url));
        theirs.push(await baseline(server.url));
      } else {
        theirs.push(await baseline(server.url));
        ours.push(await arbor(server.url));
      }
    }
    const ratios = ours.map((value, index) => value.wall / theirs[index].wall);
    const cpuRatios = ours.map((value, index) => value.cpu / theirs[index].cpu);
    const row = (side: string, batches: Batch[]) => ({
      side,
      "median ms": median(batches.map((batch) => batch.wall)).toFixed(0),
      "ms per turn per session": (median(batches.map((batch) => batch.wall)) / (TURNS + 1)).toFixed(1),
      "cpu ms": median(batches.map((batch) => batch.cpu)).toFixed(0),
    });
    console.table([row(`Arbor (${SESSIONS} agents, SQLite FULL, file on tmpfs)`, ours), row(`streamText (${SESSIONS} loops, persists nothing)`, theirs)]);
    console.log(`cpu ratio (median of the paired rounds): ${median(cpuRatios).toFixed(2)}`);
    printGoal({
      bench: `P9 ${SESSIONS} concurrent sessions x ${TURNS} tool turns / streamText loops`,
      arbor: median(ours.map((batch) => batch.wall)),
      baseline: median(theirs.map((batch) => batch.wall)),
      unit: "ms wall for the whole batch (loopback OpenAI-wire model)",
      ratio: median(ratios),
      goal: "<= 1.0",
    });
  } finally {
    await server.close();
  }
}
