/**
 * next-turn: after one more entry on a 10,000-entry session, the time to the new context.
 * Arbor folds the stored `entry.appended` event into the view and builds the context
 * incrementally (cached leaf extended by one entry); pi 0.73.1 appends the entry to its array
 * and rebuilds with `buildSessionContext` (a full path walk, what pi does every turn).
 * Persistence is left out of both sides (the log append is measured by the append bench).
 * A second row adds Arbor's in-memory log append (validation + storage) for reference.
 *
 * Prints a table and one JSON line; `arbor`/`baseline` are median µs per new context.
 */
import { performance } from "node:perf_hooks";
import { buildSessionContext } from "@mariozechner/pi-coding-agent";
import type { StoredEvent } from "../src/store/event-log.ts";
import { createMemoryEventLog } from "../src/store/memory-event-log.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSessionView } from "../src/store/session-view.ts";
import { sessionEntries, type BenchEntry } from "./load.bench.ts";

const SIZE = 10_000;
const TURNS = 60;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function storedEvent(entry: BenchEntry, version: number): StoredEvent {
  return { eventId: `e${version}`, streamId: "session-bench", version, globalPosition: version, type: "entry.appended", schemaVersion: 1, time: entry.timestamp, data: { entry }, metadata: {} };
}

export default async function nextTurnBench(): Promise<void> {
  const all = sessionEntries(SIZE + TURNS, { compactionEvery: 0 });
  const base = all.slice(0, SIZE);
  const extra = all.slice(SIZE);

  // Arbor, projection only.
  const view = createSessionView("bench");
  view.applyAll([
    { eventId: "e1", streamId: "session-bench", version: 1, globalPosition: 1, type: "session.created", schemaVersion: 1, time: "", data: { sessionId: "bench", cwd: "/", createdAt: "" }, metadata: {} },
    ...base.map((entry, index) => storedEvent(entry, index + 2)),
  ]);
  view.buildContext();
  const arborTimes: number[] = [];
  extra.forEach((entry, index) => {
    const started = performance.now();
    view.apply(storedEvent(entry, SIZE + 2 + index));
    const context = view.buildContext();
    arborTimes.push(performance.now() - started);
    if (context.messages.length === 0) throw new Error("empty context");
  });

  // Arbor with the in-memory log append in the loop.
  const repo = createSessionRepository({ log: createMemoryEventLog() });
  const session = await repo.importEntries({ id: "bench", cwd: "/", entries: base as never });
  session.view.buildContext();
  const withLogTimes: number[] = [];
  for (const entry of extra) {
    const started = performance.now();
    await session.appendEntry(entry as never);
    session.view.buildContext();
    withLogTimes.push(performance.now() - started);
  }

  // pi: append to the array, full rebuild.
  const piEntries: BenchEntry[] = [...base];
  buildSessionContext(piEntries as never);
  const piTimes: number[] = [];
  for (const entry of extra) {
    const started = performance.now();
    piEntries.push(entry);
    const context = buildSessionContext(piEntries as never);
    piTimes.push(performance.now() - started);
    if (context.messages.length === 0) throw new Error("empty context");
  }

  const arbor = median(arborTimes) * 1000;
  const withLog = median(withLogTimes) * 1000;
  const baseline = median(piTimes) * 1000;
  console.table([
    { side: "arbor: fold event + incremental context", "median µs": arbor.toFixed(1) },
    { side: "arbor: + in-memory log append", "median µs": withLog.toFixed(1) },
    { side: "pi 0.73.1: push + buildSessionContext", "median µs": baseline.toFixed(1) },
  ]);
  console.log(JSON.stringify({ bench: "next-turn", arbor: Number(arbor.toFixed(2)), baseline: Number(baseline.toFixed(2)), unit: "µs per new context (lower is better)", ratio: Number((baseline / arbor).toFixed(1)) }));
}
