/**
 * F1 takeover: from a `kill -9` of the worker process that runs a background prompt to the first
 * event the new owner appends to that session's stream, on PostgreSQL, with the default lease and
 * sweep settings. Two worker processes (`fleet-worker-child.ts`, a model that never answers, so
 * the run is always mid-call when killed); per trial: queue a prompt, wait for its run to start,
 * kill the process that claimed it, time until the survivor's first session event (its
 * `run.resumed`: the workers run with durability `continue`), then start a fresh
 * process. The survivor's own claim (`task.claimed`) is timed too. p50 and p99 over the trials.
 * Goal: p99 ≤ TTL + 2 s (the lease TTL: `ARBOR_BENCH_TTL_MS`, default 10 000 ms).
 */
import type { ChildProcess } from "node:child_process";
import { createPostgresEventLog } from "../src/store/postgres/pg-event-log.ts";
import { sessionStreamId } from "../src/store/events/session-events.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { queueTask, readTask, taskStreamId } from "../src/store/task-queue.ts";
import { dropSchema, spawnWorker } from "./fleet-throughput.bench.ts";
import { printGoal } from "./goal.ts";

const URL = process.env.ARBOR_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/test";
const TRIALS = Number(process.env.ARBOR_BENCH_TAKEOVER_TRIALS ?? 20);
const TTL_MS = Number(process.env.ARBOR_BENCH_TTL_MS ?? 10_000);

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export default async function main(): Promise<void> {
  const schema = `bench_takeover_${process.pid}_${Date.now()}`;
  const log = createPostgresEventLog({ connectionString: URL, schema, poolSize: 4 });
  const repository = createSessionRepository({ log });
  const config = { url: URL, schema, hang: true, concurrency: 64 };
  const children: ChildProcess[] = await Promise.all([spawnWorker(config), spawnWorker(config)]);
  const toEvent: number[] = [];
  const toClaim: number[] = [];
  try {
    for (let trial = 0; trial < TRIALS; trial++) {
      const session = await repository.create({ cwd: "/tmp" });
      const { taskId } = await queueTask(log, { sessionId: session.id, input: "hold" });
      const streamId = sessionStreamId(session.id);
      // The run is under way once its first model call is logged as started (turn.started).
      let version = 0;
      for (;;) {
        const events = await log.readStream(streamId);
        if (events.some((event) => event.type === "turn.started")) {
          version = events.length;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const owner = (await readTask(log, taskId))!.claim!.owner as { pid: number };
      const index = children.findIndex((child) => child.pid === owner.pid);
      const seen = new Promise<number>((resolve) => {
        const subscription = log.subscribe({ streamId, fromVersion: version }).subscribe((event) => {
          // The new owner's first event: its `run.resumed` (durability continue), or recovery's `run.ended`.
          if (event.type !== "run.resumed" && event.type !== "run.ended") return;
          subscription.unsubscribe();
          resolve(performance.now());
        });
      });
      const claimed = new Promise<number>((resolve) => {
        const subscription = log.subscribe({ streamId: taskStreamId(taskId), fromVersion: 2 }).subscribe((event) => {
          if (event.type !== "task.claimed") return;
          subscription.unsubscribe();
          resolve(performance.now());
        });
      });
      const killed = performance.now();
      children[index].kill("SIGKILL");
      toClaim.push((await claimed) - killed);
      toEvent.push((await seen) - killed);
      children[index] = await spawnWorker(config);
    }
  } finally {
    for (const child of children) child.kill("SIGKILL");
    await log.close();
    await dropSchema(schema);
  }
  const row = (name: string, values: number[]) => `| ${name} | ${percentile(values, 50).toFixed(0)} | ${percentile(values, 99).toFixed(0)} |`;
  console.log(`| kill -9 to (ms, ${TRIALS} trials) | p50 | p99 |\n| --- | --- | --- |\n${row("the survivor's task.claimed", toClaim)}\n${row("its first event in the session", toEvent)}`);
  printGoal({ bench: "F1 takeover p99, kill -9 to the new owner's first event (PostgreSQL)", arbor: percentile(toEvent, 99), baseline: TTL_MS + 2000, unit: "ms", ratio: percentile(toEvent, 99) / (TTL_MS + 2000), goal: "<= 1" });
  printGoal({ bench: "F1 takeover p50", arbor: percentile(toEvent, 50), baseline: TTL_MS + 2000, unit: "ms", ratio: percentile(toEvent, 50) / (TTL_MS + 2000), goal: "<= 1" });
}
