/**
 * streaming: folding and persisting the text deltas of one assistant message.
 *
 * Arbor: `createAgent` on a fresh SQLite file (set-up not timed); a ModelClient yields
 * one message of N text deltas (Arbor stream events, so the adapter is not measured);
 * the run actor folds every delta (one transition each, `message.delta` recorded) and
 * the session writer persists them (group commit per tick, deltas of one tick coalesced).
 * Timed: `await agent.prompt()` (resolves after everything is committed).
 * Baseline: N = 10k; measured: N = 20k. Linear scaling means ratio ≈ 2 (goal ≤ 2.2).
 * Also reported: deltas per second and how many `message.delta` events were stored.
 * The mock yields to the event loop after every delta (one delta per tick, as a network stream).
 * CPU time (user + system) of this process, median of ROUNDS rounds alternating the order; goal P5.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AssistantMessage } from "../src/core/messages.ts";
import type { ModelClient, ModelStreamEvent } from "../src/core/model-stream.ts";
import { createAgent } from "../src/machines/agent.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { printGoal } from "./goal.ts";

const ROUNDS = 3;

function deltaModel(count: number): ModelClient {
  return {
    provider: "mock",
    modelId: "mock-model",
    api: "mock",
    async *stream(): AsyncGenerator<ModelStreamEvent> {
      const block = { type: "text" as const, text: "" };
      const partial: AssistantMessage = {
        role: "assistant",
        content: [block],
        api: "mock",
        provider: "mock",
        model: "mock-model",
        usage: { input: 10, output: count, cacheRead: null, cacheWrite: null, totalTokens: 10 + count },
        stopReason: "stop",
        timestamp: Date.now(),
      };
      yield { type: "start", partial };
      yield { type: "text-start", contentIndex: 0, partial };
      for (let index = 0; index < count; index++) {
        block.text += "word ";
        yield { type: "text-delta", contentIndex: 0, delta: "word ", partial };
        // One delta per tick, as a network stream delivers them (goal P5).
        await new Promise((resolve) => setImmediate(resolve));
      }
      yield { type: "text-end", contentIndex: 0, partial };
      yield { type: "done", message: { ...partial, content: [{ ...block }] } };
    },
  };
}

async function runOnce(count: number): Promise<{ cpuMs: number; wallMs: number; deltaEvents: number; bytes: number }> {
  const dir = mkdtempSync(join(process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir()), "arbor-stream-bench-"));
  const log = createSqliteEventLog({ path: join(dir, "bench.db") });
  try {
    const session = await createSessionRepository({ log }).create({ cwd: dir });
    const agent = createAgent({ session, model: deltaModel(count) });
    const cpu = process.cpuUsage();
    const start = performance.now();
    const outcome = await agent.prompt("stream");
    const wallMs = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const text = (outcome.lastAssistant?.content[0] as { text: string } | undefined)?.text ?? "";
    if (outcome.status !== "done" || text.length !== count * 5) throw new Error(`streaming run: ${outcome.status} ${text.length}`);
    const events = await log.readStream(`session-${session.id}`);
    const deltas = events.filter((event) => event.type === "message.delta");
    const bytes = deltas.reduce((sum, event) => sum + JSON.stringify(event.data).length, 0);
    await agent.dispose();
    return { cpuMs: (used.user + used.system) / 1000, wallMs, deltaEvents: deltas.length, bytes };
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export default async function streamingBench(): Promise<void> {
  await runOnce(500);
  const small: Awaited<ReturnType<typeof runOnce>>[] = [];
  const large: Awaited<ReturnType<typeof runOnce>>[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      small.push(await runOnce(10_000));
      large.push(await runOnce(20_000));
    } else {
      large.push(await runOnce(20_000));
      small.push(await runOnce(10_000));
    }
  }
  const row = (count: number, samples: typeof small) => ({
    deltas: count,
    "cpu ms": median(samples.map((s) => s.cpuMs)).toFixed(1),
    "wall ms": median(samples.map((s) => s.wallMs)).toFixed(1),
    "deltas/s (wall)": Math.round(count / (median(samples.map((s) => s.wallMs)) / 1000)),
    "message.delta events stored": median(samples.map((s) => s.deltaEvents)),
    "delta bytes stored": median(samples.map((s) => s.bytes)),
  });
  console.table([row(10_000, small), row(20_000, large)]);
  const ratio = median(large.map((s, index) => s.cpuMs / small[index].cpuMs));
  const wallRatio = median(large.map((s, index) => s.wallMs / small[index].wallMs));
  console.log(`20k / 10k: cpu ${ratio.toFixed(2)}, wall ${wallRatio.toFixed(2)} (linear = 2.00, goal <= 2.2)`);
  printGoal({
    bench: "P5 streaming 20k / 10k deltas, one per tick",
    arbor: median(large.map((s) => s.cpuMs)),
    baseline: median(small.map((s) => s.cpuMs)),
    unit: "cpu ms per message, 20k deltas / 10k deltas (linear = 2)",
    ratio,
    goal: "<= 2.2",
  });
}
