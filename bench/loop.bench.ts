/**
 * loop: the overhead of Arbor's agent loop per turn.
 *
 * N turns with one tool call each, then a final text, over `MockLanguageModelV4`
 * (`ai/test`, the same scripted v3 parts for both sides).
 * - Arbor: `createAgent` over `createAiSdkModelClient(model)`, persistence ON: a
 *   fresh SQLite file per round (`createSqliteEventLog`, synchronous FULL, the
 *   default); every event of the run (deltas, entries, tool events) is committed.
 *   The goal rows put the file on tmpfs (`ARBOR_BENCH_DIR`, else `/dev/shm`, like the other
 *   benches): FULL still commits and fsyncs before every model request and tool call, but
 *   tmpfs makes the fsync free. A second row per size puts it on disk (`os.tmpdir()`), the
 *   default path users get, so the fsync waits of commit-before-effect are in it.
 *   `streamText` persists nothing on either row.
 *   Opening the file and creating the session are set-up, not timed; the timed part
 *   is `await agent.prompt(...)`, which resolves after the run's events are committed.
 * - Baseline: a plain AI SDK `streamText` multi-step loop (`stopWhen: stepCountIs(N+1)`)
 *   with the same tool (an `execute` that echoes), no persistence, `fullStream` drained.
 * A third row replays the same turns through a ModelClient that yields Arbor's stream
 * events directly, to separate the adapter's per-call prompt conversion from the cost
 * of the machines and persistence.
 * Wall and CPU time (user + system) per turn, median of paired rounds that alternate which side
 * goes first, at 20 and at 500 tool turns (goal P4, `goal.ts`: ratio = arbor / baseline, wall).
 * P4b: 1,000 prompts (one tool turn and a final text each) in one session; the mean cost of the
 * last 100 prompts over the first 100.
 */
import { jsonSchema, stepCountIs, streamText, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { createAiSdkModelClient } from "../src/adapters/model/index.ts";
import type { AssistantMessage } from "../src/core/messages.ts";
import type { ModelClient, ModelStreamEvent } from "../src/core/model-stream.ts";
import { defineTool } from "../src/core/tools.ts";
import { createAgent } from "../src/machines/agent.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { streamPartsOf } from "../src/testing/scripted-model.ts";
import { median, printGoal } from "./goal.ts";

const ROUNDS = 5;
/** tmpfs when there is one (the goal rows), as the other benches. */
const TMPFS = process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
/** The disk rows: the OS temp directory (a disk on most machines). */
const DISK = tmpdir();

function scriptedParts(TURNS: number): LanguageModelV4StreamPart[][] {
  const steps: LanguageModelV4StreamPart[][] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    steps.push(streamPartsOf({ text: `Turn ${turn}: let me call the tool.`, toolCalls: [{ id: `call_${turn}`, name: "echo", arguments: { text: `value ${turn}` } }] }));
  }
  steps.push(streamPartsOf({ text: "All done, here is the summary of the work." }));
  return steps;
}

function mockModel(TURNS: number): MockLanguageModelV4 {
  const steps = scriptedParts(TURNS);
  let call = 0;
  return new MockLanguageModelV4({
    doStream: async () => {
      const parts = steps[call++];
      let next = 0;
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          pull(controller) {
            if (next < parts.length) controller.enqueue(parts[next++]);
            else controller.close();
          },
        }),
      };
    },
  });
}

const echo = defineTool({
  name: "echo",
  description: "Echo the text back",
  parameters: z.object({ text: z.string() }),
  async execute(args) {
    return { content: [{ type: "text", text: args.text }] };
  },
});

/**
 * The same turns as a ModelClient that yields Arbor's stream events directly (no AI SDK
 * prompt conversion): isolates the cost of the machines and persistence.
 */
function directModel(TURNS: number): ModelClient {
  let call = 0;
  return {
    provider: "mock",
    modelId: "mock-model",
    api: "mock",
    async *stream(): AsyncGenerator<ModelStreamEvent> {
      const turn = call++;
      const partial: AssistantMessage = {
        role: "assistant",
        content: [],
        api: "mock",
        provider: "mock",
        model: "mock-model",
        usage: { input: 10, output: 5, cacheRead: null, cacheWrite: null, totalTokens: 15 },
        stopReason: "stop",
        timestamp: Date.now(),
      };
      yield { type: "start", partial };
      const text = turn < TURNS ? `Turn ${turn}: let me call the tool.` : "All done, here is the summary of the work.";
      const block = { type: "text" as const, text: "" };
      partial.content.push(block);
      yield { type: "text-start", contentIndex: 0, partial };
      for (const piece of text.match(/\S+\s*/g) ?? []) {
        block.text += piece;
        yield { type: "text-delta", contentIndex: 0, delta: piece, partial };
      }
      yield { type: "text-end", contentIndex: 0, partial };
      if (turn < TURNS) {
        const toolCall = { type: "toolCall" as const, id: `call_${turn}`, name: "echo", arguments: { text: `value ${turn}` } };
        partial.content.push(toolCall);
        yield { type: "toolcall-start", contentIndex: 1, id: toolCall.id, name: "echo", partial };
        yield { type: "toolcall-delta", contentIndex: 1, id: toolCall.id, delta: JSON.stringify(toolCall.arguments), partial };
        yield { type: "toolcall-end", contentIndex: 1, toolCall, partial };
        partial.stopReason = "toolUse";
      }
      yield { type: "done", message: { ...partial, content: [...partial.content] } };
    },
  };
}

/** Sets up a fresh SQLite session (not timed) and returns the timed part: one prompt, committed. */
async function prepareArbor(TURNS: number, direct = false, where = TMPFS): Promise<{ run: () => Promise<void>; cleanup: () => Promise<void> }> {
  const dir = mkdtempSync(join(where, "arbor-loop-bench-"));
  const log = createSqliteEventLog({ path: join(dir, "bench.db") });
  const session = await createSessionRepository({ log }).create({ cwd: dir });
  const agent = createAgent({ session, model: direct ? directModel(TURNS) : createAiSdkModelClient(mockModel(TURNS)), tools: [echo] });
  return {
    run: async () => {
      const outcome = await agent.prompt("Do the work");
      if (outcome.status !== "done" || outcome.messages.length !== 2 * TURNS + 2) throw new Error(`arbor run: ${outcome.status} ${outcome.error ?? ""}`);
    },
    cleanup: async () => {
      await agent.dispose();
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function runArbor(TURNS: number, direct = false, where = TMPFS): Promise<{ wall: number; cpu: number }> {
  const arbor = await prepareArbor(TURNS, direct, where);
  try {
    return await measure(TURNS, arbor.run);
  } finally {
    await arbor.cleanup();
  }
}

export async function runBaseline(TURNS: number): Promise<void> {
  const result = streamText({
    model: mockModel(TURNS),
    prompt: "Do the work",
    tools: {
      echo: tool({
        description: "Echo the text back",
        inputSchema: jsonSchema<{ text: string }>({ type: "object", properties: { text: { type: "string" } }, required: ["text"] }),
        execute: async ({ text }) => text,
      }),
    },
    stopWhen: stepCountIs(TURNS + 1),
  });
  let steps = 0;
  for await (const part of result.fullStream) if (part.type === "finish-step") steps++;
  if (steps !== TURNS + 1) throw new Error(`baseline ran ${steps} steps`);
}

async function measure(TURNS: number, fn: () => Promise<void>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await fn();
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wall: wall / (TURNS + 1), cpu: (used.user + used.system) / 1000 / (TURNS + 1) };
}

type Sample = { wall: number; cpu: number };

/** P4 at `turns` tool turns: paired rounds alternating which side goes first. */
async function overhead(turns: number, rounds: number): Promise<void> {
  await runArbor(turns);
  await measure(turns, () => runBaseline(turns));
  const arbor: Sample[] = [];
  const disk: Sample[] = [];
  const direct: Sample[] = [];
  const baseline: Sample[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      arbor.push(await runArbor(turns));
      disk.push(await runArbor(turns, false, DISK));
      direct.push(await runArbor(turns, true));
      baseline.push(await measure(turns, () => runBaseline(turns)));
    } else {
      baseline.push(await measure(turns, () => runBaseline(turns)));
      direct.push(await runArbor(turns, true));
      disk.push(await runArbor(turns, false, DISK));
      arbor.push(await runArbor(turns));
    }
  }
  const row = (name: string, samples: Sample[]) => ({
    turns,
    side: name,
    "wall ms/turn": median(samples.map((s) => s.wall)).toFixed(3),
    "cpu ms/turn": median(samples.map((s) => s.cpu)).toFixed(3),
  });
  console.table([
    row(`arbor (SQLite FULL, file on tmpfs ${TMPFS})`, arbor),
    row(`arbor (SQLite FULL, file on disk ${DISK})`, disk),
    row("arbor, direct ModelClient, tmpfs (no AI SDK prompt conversion)", direct),
    row("AI SDK streamText loop (persists nothing)", baseline),
  ]);
  const directRatio = median(direct.map((s, index) => s.cpu / baseline[index].cpu));
  const cpuRatio = median(arbor.map((s, index) => s.cpu / baseline[index].cpu));
  const diskCpuRatio = median(disk.map((s, index) => s.cpu / baseline[index].cpu));
  console.log(
    `turns per run: ${turns + 1}; cpu ratio tmpfs ${cpuRatio.toFixed(2)}, disk ${diskCpuRatio.toFixed(2)}; machines + persistence only (direct ModelClient) / streamText, cpu: ${directRatio.toFixed(2)}`,
  );
  printGoal({
    bench: `P4 loop ${turns} tool turns`,
    arbor: median(arbor.map((s) => s.wall)),
    baseline: median(baseline.map((s) => s.wall)),
    unit: "ms/turn wall, arbor (persisted, FULL, tmpfs) / streamText loop (persists nothing)",
    ratio: median(arbor.map((s, index) => s.wall / baseline[index].wall)),
    goal: "<= 1.1",
  });
  printGoal({
    bench: `P4 loop ${turns} tool turns, log on disk`,
    arbor: median(disk.map((s) => s.wall)),
    baseline: median(baseline.map((s) => s.wall)),
    unit: `ms/turn wall, arbor (persisted, FULL, file in ${DISK}) / streamText loop (persists nothing)`,
    ratio: median(disk.map((s, index) => s.wall / baseline[index].wall)),
    // The log on disk, the defaults users get: ≤ 1.3× (on tmpfs, the row above, ≤ 1.1×).
    goal: "<= 1.3",
  });
}

/** P4b: 1,000 prompts of one tool turn each in ONE session; per-prompt cost of prompts 901–1000 over 1–100. */
async function growth(prompts: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "arbor-loop-growth-"));
  const log = createSqliteEventLog({ path: join(dir, "bench.db") });
  try {
    const session = await createSessionRepository({ log }).create({ cwd: dir });
    let call = 0;
    const model = new MockLanguageModelV4({
      doStream: async () => {
        const turn = call++;
        const parts =
          turn % 2 === 0
            ? streamPartsOf({ text: `Turn ${turn}: let me call the tool.`, toolCalls: [{ id: `call_${turn}`, name: "echo", arguments: { text: `value ${turn}` } }] })
            : streamPartsOf({ text: `Done with turn ${turn}.` });
        let next = 0;
        return {
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            pull(controller) {
              if (next < parts.length) controller.enqueue(parts[next++]);
              else controller.close();
            },
          }),
        };
      },
    });
    const agent = createAgent({ session, model: createAiSdkModelClient(model), tools: [echo] });
    const costs: number[] = [];
    for (let index = 0; index < prompts; index++) {
      const started = performance.now();
      const outcome = await agent.prompt(`Prompt ${index}`);
      costs.push(performance.now() - started);
      if (outcome.status !== "done") throw new Error(`growth run ${index}: ${outcome.status} ${outcome.error ?? ""}`);
    }
    await agent.dispose();
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const first = mean(costs.slice(0, 100));
    const last = mean(costs.slice(prompts - 100));
    console.log(`per-prompt ms (one tool turn + final text): prompts 1–100 ${first.toFixed(2)}, ${prompts - 99}–${prompts} ${last.toFixed(2)}`);
    printGoal({ bench: `P4b per-turn cost, turns ${prompts - 99}-${prompts} / 1-100`, arbor: last, baseline: first, unit: "ms per prompt (wall), late / early", ratio: last / first, goal: "<= 1.3" });
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function loopBench(): Promise<void> {
  await overhead(20, ROUNDS);
  await overhead(500, 3);
  await growth(1000);
}
