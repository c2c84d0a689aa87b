/**
 * append: events/s through the SQLite EventLog (batches of 1, 10 and 100 events,
 * one awaited append per batch) against raw better-sqlite3 prepared statements
 * doing the same durable work on the same schema with the same pragmas:
 * per batch one `BEGIN IMMEDIATE` transaction that reads the stream version,
 * inserts the events (UUIDv7 id + JSON.stringify of data and metadata per event)
 * and updates the stream row. The baseline skips what the log adds: zod
 * validation, argument checks, the idempotency lookup, promises and group commit.
 *
 * Both sides run on fresh files in a temp dir (tmpfs `/dev/shm` when present, or
 * `ARBOR_BENCH_DIR`), in 7 paired rounds that alternate which side goes first;
 * the table shows medians and the range of per-round ratios.
 *
 * Each measurement reads wall time and this process's CPU time (user + system).
 * Prints a table and one goal line per batch size (P1, `goal.ts`): wall time at synchronous
 * FULL (the log's default), the median of the per-round paired ratios; each size stands on
 * its own (no mean across sizes). The CPU columns and the NORMAL rows are printed too: CPU time
 * stays meaningful on a loaded shared machine, where wall time does not.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import Database from "better-sqlite3";
import { v7 as uuidv7 } from "uuid";
import { z } from "zod";
import type { NewEvent } from "../src/store/event-log.ts";
import { printGoal } from "./goal.ts";
import { createDefaultEventRegistry } from "../src/store/events/index.ts";
import { createSqliteEventLog, type SqliteSynchronous } from "../src/store/sqlite/sqlite-event-log.ts";

const BATCH_SIZES = [1, 10, 100] as const;
const ROUNDS = 7;
const TEXT = "The quick brown fox jumps over the lazy dog. ".repeat(7);

function registry() {
  return createDefaultEventRegistry().register("note.added", 1, z.object({ text: z.string(), n: z.number(), tags: z.array(z.string()) }));
}

function batchOf(size: number, offset: number): NewEvent[] {
  return Array.from({ length: size }, (_, index) => ({
    type: "note.added",
    data: { text: TEXT, n: offset + index, tags: ["bench", "append"] },
    metadata: { runId: "run-1", turnId: `turn-${offset}` },
  }));
}

/** Events per second of wall time, and per second of this process's CPU time (user + system). */
export interface Rate {
  wall: number;
  cpu: number;
}

/** Starts a wall and CPU clock; `rate(events)` reads both. */
function startClock() {
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  return {
    rate(events: number): Rate {
      const wallMs = performance.now() - wallStart;
      const cpu = process.cpuUsage(cpuStart);
      return { wall: events / (wallMs / 1000), cpu: events / ((cpu.user + cpu.system) / 1e6) };
    },
  };
}

/** Events per measurement: FULL is fsync-bound, so it gets fewer. */
function eventsFor(size: number, synchronous: SqliteSynchronous): number {
  const scale = synchronous === "FULL" ? 5 : 1;
  return (size === 1 ? 2000 : size === 10 ? 10_000 : 30_000) / scale;
}

export async function measureArbor(path: string, size: number, synchronous: SqliteSynchronous): Promise<Rate> {
  const log = createSqliteEventLog({ path, synchronous, registry: registry() });
  const total = eventsFor(size, synchronous);
  const batches = Array.from({ length: total / size }, (_, index) => batchOf(size, index * size));
  const clock = startClock();
  for (const batch of batches) await log.append("bench-stream", batch);
  const rate = clock.rate(total);
  await log.close();
  return rate;
}

async function measureConcurrent(path: string, synchronous: SqliteSynchronous): Promise<Rate> {
  const log = createSqliteEventLog({ path, synchronous, registry: registry() });
  const total = synchronous === "FULL" ? 5000 : 20_000;
  const clock = startClock();
  for (let tick = 0; tick < total / 100; tick++) {
    await Promise.all(Array.from({ length: 100 }, (_, index) => log.append(`stream-${index}`, batchOf(1, tick * 100 + index))));
  }
  const rate = clock.rate(total);
  await log.close();
  return rate;
}

export async function measureBaseline(path: string, size: number, synchronous: SqliteSynchronous): Promise<Rate> {
  // The same schema: let the log create and migrate the file, then write it raw.
  await createSqliteEventLog({ path, synchronous }).close();
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  const selectVersion = db.prepare("SELECT version FROM streams WHERE stream_id = ?").pluck();
  const insertEvent = db.prepare(
    "INSERT INTO events (event_id, stream_id, version, type, schema_version, time, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertStream = db.prepare("INSERT INTO streams (stream_id, version, first_position, created_at, updated_at) VALUES (?, ?, ?, ?, ?)");
  const updateStream = db.prepare("UPDATE streams SET version = ?, updated_at = ? WHERE stream_id = ?");
  const append = db.transaction((streamId: string, events: NewEvent[]) => {
    const now = new Date().toISOString();
    const current = (selectVersion.get(streamId) as number | undefined) ?? 0;
    let version = current;
    let first = 0;
    for (const event of events) {
      version++;
      const info = insertEvent.run(uuidv7(), streamId, version, event.type, 1, now, JSON.stringify(event.data), JSON.stringify(event.metadata));
      if (first === 0) first = Number(info.lastInsertRowid);
    }
    if (current === 0) insertStream.run(streamId, version, first, now, now);
    else updateStream.run(version, now, streamId);
  });
  const total = eventsFor(size, synchronous);
  const batches = Array.from({ length: total / size }, (_, index) => batchOf(size, index * size));
  const clock = startClock();
  for (const batch of batches) append.immediate("bench-stream", batch);
  const rate = clock.rate(total);
  db.close();
  return rate;
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Runs the benchmark and prints the table and the JSON line. */
export default async function run(): Promise<void> {
  // tmpfs when available (override with ARBOR_BENCH_DIR): disk latency under other load would swamp the code-path cost.
  const base = process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
  const directory = mkdtempSync(join(base, "arbor-bench-append-"));
  console.log(`files in ${directory}`);
  let file = 0;
  const next = () => join(directory, `bench-${++file}.db`);
  try {
    type Row = { synchronous: SqliteSynchronous; batch: string; arbor: Rate; baseline: Rate; wallRatio: number; cpuRatio: number; cpuRange: string };
    const rows: Row[] = [];
    const pick = (rates: Rate[], key: keyof Rate) => rates.map((rate) => rate[key]);
    for (const synchronous of ["NORMAL", "FULL"] as const) {
      for (const size of BATCH_SIZES) {
        const arbor: Rate[] = [];
        const baseline: Rate[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          // Paired rounds, alternating who goes first, so load changes hit both sides alike.
          if (round % 2 === 0) {
            baseline.push(await measureBaseline(next(), size, synchronous));
            arbor.push(await measureArbor(next(), size, synchronous));
          } else {
            arbor.push(await measureArbor(next(), size, synchronous));
            baseline.push(await measureBaseline(next(), size, synchronous));
          }
        }
        const cpuRatios = arbor.map((rate, index) => rate.cpu / baseline[index].cpu);
        rows.push({
          synchronous,
          batch: String(size),
          arbor: { wall: median(pick(arbor, "wall")), cpu: median(pick(arbor, "cpu")) },
          baseline: { wall: median(pick(baseline, "wall")), cpu: median(pick(baseline, "cpu")) },
          wallRatio: median(arbor.map((rate, index) => rate.wall / baseline[index].wall)),
          cpuRatio: median(cpuRatios),
          cpuRange: `${Math.min(...cpuRatios).toFixed(2)}–${Math.max(...cpuRatios).toFixed(2)}`,
        });
      }
      const concurrent: Rate[] = [];
      for (let round = 0; round < ROUNDS; round++) concurrent.push(await measureConcurrent(next(), synchronous));
      const single = rows.find((row) => row.synchronous === synchronous && row.batch === "1") as Row;
      const arbor = { wall: median(pick(concurrent, "wall")), cpu: median(pick(concurrent, "cpu")) };
      rows.push({
        synchronous,
        batch: "1 ×100 same tick",
        arbor,
        baseline: single.baseline,
        wallRatio: arbor.wall / single.baseline.wall,
        cpuRatio: arbor.cpu / single.baseline.cpu,
        cpuRange: "",
      });
    }
    console.table(
      rows.map((row) => ({
        sync: row.synchronous,
        "events/append": row.batch,
        "arbor ev/s": Math.round(row.arbor.wall),
        "raw ev/s": Math.round(row.baseline.wall),
        "wall ratio": Number(row.wallRatio.toFixed(2)),
        "arbor ev/cpu-s": Math.round(row.arbor.cpu),
        "raw ev/cpu-s": Math.round(row.baseline.cpu),
        "cpu ratio": Number(row.cpuRatio.toFixed(2)),
        "cpu ratio range": row.cpuRange,
      })),
    );
    // P1: each batch size on its own (no mean hides batch 1), wall time, at the log's default durability (FULL), same pragmas both sides.
    for (const size of BATCH_SIZES) {
      const row = rows.find((candidate) => candidate.synchronous === "FULL" && candidate.batch === String(size)) as Row;
      printGoal({ bench: `P1 append batch ${size}`, arbor: row.arbor.wall, baseline: row.baseline.wall, unit: "events/s wall (FULL), arbor / raw better-sqlite3", ratio: row.wallRatio, goal: ">= 0.8" });
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
