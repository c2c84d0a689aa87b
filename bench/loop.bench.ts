/**
 * loop: the overhead of Arbor's agent loop per turn.
 *
 * N turns with one tool call each, then a final text, over `MockLanguageModelV3`
 * (`ai/test`, the same scripted v3 parts for both sides).
 * - Arbor: `createAgent` over `createAiSdkModelClient(model)`, persistence ON: a
 *   fresh SQLite file per round (`createSqliteEventLog`, synchronous FULL, the
 *   default); every event of the run (deltas, entries, tool events) is committed.
 *   Opening the file and creating the session are set-up, not timed; the timed part
 *   is `await agent.prompt(...)`, which resolves after the run's events are committed.
 * - Baseline: a plain AI SDK `streamText` multi-step loop (`stopWhen: stepCountIs(N+1)`)
 *   with the same tool (an `execute` that echoes), no persistence, `fullStream` drained.
 * A third row replays the same turns through a ModelClient that yields Arbor's stream
 * events directly, to separate the adapter's per-call prompt conversion from the cost
 * of the machines and persistence.
 * Wall and CPU time (user + system) per turn, median of ROUNDS paired rounds that
 * alternate which side goes first. JSON line: unit `ms/turn` (wall), ratio = arbor / baseline.
 */
import { jsonSchema, stepCountIs, streamText, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { createAiSdkModelClient } from "../src/adapters/model/index.ts";
import type { AssistantMessage } from "../src/core/messages.ts";
import type { ModelClient, ModelStreamEvent } from "../src/core/model-stream.ts";
import { defineTool } from "../src/core/tools.ts";
import { createAgent } from "../src/machines/agent.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite-event-log.ts";
import { streamPartsOf } from "../src/testing/scripted-model.ts";

const TURNS = 20;
const ROUNDS = 7;

function scriptedParts(): LanguageModelV3StreamPart[][] {
  const steps: LanguageModelV3StreamPart[][] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    steps.push(streamPartsOf({ text: `Turn ${turn}: let me call the tool.`, toolCalls: [{ id: `call_${turn}`, name: "echo", arguments: { text: `value ${turn}` } }] }));
  }
  steps.push(streamPartsOf({ text: "All done, here is the summary of the work." }));
  return steps;
}

function mockModel(): MockLanguageModelV3 {
  const steps = scriptedParts();
  let call = 0;
  return new MockLanguageModelV3({
    doStream: async () => {
      const parts = steps[call++];
      let next = 0;
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
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
function directModel(): ModelClient {
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
async function prepareArbor(direct = false): Promise<{ run: () => Promise<void>; cleanup: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "arbor-loop-bench-"));
  const log = createSqliteEventLog({ path: join(dir, "bench.db") });
  const session = await createSessionRepository({ log }).create({ cwd: dir });
  const agent = createAgent({ session, model: direct ? directModel() : createAiSdkModelClient(mockModel()), tools: [echo] });
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

async function runArbor(direct = false): Promise<{ wall: number; cpu: number }> {
  const arbor = await prepareArbor(direct);
  try {
    return await measure(arbor.run);
  } finally {
    await arbor.cleanup();
  }
}

async function runBaseline(): Promise<void> {
  const result = streamText({
    model: mockModel(),
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

async function measure(fn: () => Promise<void>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await fn();
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wall: wall / (TURNS + 1), cpu: (used.user + used.system) / 1000 / (TURNS + 1) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export default async function loopBench(): Promise<void> {
  await runArbor();
  await measure(runBaseline);
  const arbor: { wall: number; cpu: number }[] = [];
  const direct: { wall: number; cpu: number }[] = [];
  const baseline: { wall: number; cpu: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      arbor.push(await runArbor());
      direct.push(await runArbor(true));
      baseline.push(await measure(runBaseline));
    } else {
      direct.push(await runArbor(true));
      baseline.push(await measure(runBaseline));
      arbor.push(await runArbor());
    }
  }
  const row = (name: string, samples: { wall: number; cpu: number }[]) => ({
    side: name,
    "wall ms/turn": median(samples.map((s) => s.wall)).toFixed(3),
    "cpu ms/turn": median(samples.map((s) => s.cpu)).toFixed(3),
  });
  console.table([
    row("arbor (SQLite, persisted)", arbor),
    row("arbor, direct ModelClient (no AI SDK prompt conversion)", direct),
    row("AI SDK streamText loop", baseline),
  ]);
  const directRatio = median(direct.map((s, index) => s.cpu / baseline[index].cpu));
  console.log(`machines + persistence only (direct ModelClient) / streamText, cpu: ${directRatio.toFixed(2)}`);
  const wallRatio = median(arbor.map((s, index) => s.wall / baseline[index].wall));
  const cpuRatio = median(arbor.map((s, index) => s.cpu / baseline[index].cpu));
  console.log(`turns per run: ${TURNS + 1}; median per-round ratio wall ${wallRatio.toFixed(2)}, cpu ${cpuRatio.toFixed(2)}`);
  console.log(
    JSON.stringify({
      bench: "loop",
      arbor: Number(median(arbor.map((s) => s.wall)).toFixed(3)),
      baseline: Number(median(baseline.map((s) => s.wall)).toFixed(3)),
      unit: "ms/turn",
      ratio: Number(wallRatio.toFixed(3)),
    }),
  );
}
