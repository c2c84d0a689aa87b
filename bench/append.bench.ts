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
 * `ARBOR_BENCH_DIR`), alternating, best of 3 rounds.
 * Prints a table and one JSON line; `arbor`/`baseline` are the geometric means of
 * the three batch sizes' events/s at synchronous NORMAL, where the cost measured
 * is the code path. The FULL rows (the log's default) are printed too, but they
 * measure the disk's fsync, whose variance under load swamps the difference.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import Database from "better-sqlite3";
import { v7 as uuidv7 } from "uuid";
import { z } from "zod";
import type { NewEvent } from "../src/store/event-log.ts";
import { createDefaultEventRegistry } from "../src/store/events/index.ts";
import { createSqliteEventLog, type SqliteSynchronous } from "../src/store/sqlite-event-log.ts";

const BATCH_SIZES = [1, 10, 100] as const;
const ROUNDS = 3;
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

/** Events per measurement: FULL is fsync-bound, so it gets fewer. */
function eventsFor(size: number, synchronous: SqliteSynchronous): number {
  const scale = synchronous === "FULL" ? 5 : 1;
  return (size === 1 ? 5000 : size === 10 ? 20_000 : 50_000) / scale;
}

export async function measureArbor(path: string, size: number, synchronous: SqliteSynchronous): Promise<number> {
  const log = createSqliteEventLog({ path, synchronous, registry: registry() });
  const total = eventsFor(size, synchronous);
  const batches = Array.from({ length: total / size }, (_, index) => batchOf(size, index * size));
  const started = performance.now();
  for (const batch of batches) await log.append("bench-stream", batch);
  const elapsed = performance.now() - started;
  await log.close();
  return total / (elapsed / 1000);
}

async function measureConcurrent(path: string, synchronous: SqliteSynchronous): Promise<number> {
  const log = createSqliteEventLog({ path, synchronous, registry: registry() });
  const total = synchronous === "FULL" ? 5000 : 20_000;
  const started = performance.now();
  for (let tick = 0; tick < total / 100; tick++) {
    await Promise.all(Array.from({ length: 100 }, (_, index) => log.append(`stream-${index}`, batchOf(1, tick * 100 + index))));
  }
  const elapsed = performance.now() - started;
  await log.close();
  return total / (elapsed / 1000);
}

export async function measureBaseline(path: string, size: number, synchronous: SqliteSynchronous): Promise<number> {
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
  const started = performance.now();
  for (const batch of batches) append.immediate("bench-stream", batch);
  const elapsed = performance.now() - started;
  db.close();
  return total / (elapsed / 1000);
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
    const rows: { synchronous: SqliteSynchronous; batch: string; arbor: number; baseline: number }[] = [];
    for (const synchronous of ["NORMAL", "FULL"] as const) {
      for (const size of BATCH_SIZES) {
        let arbor = 0;
        let baseline = 0;
        for (let round = 0; round < ROUNDS; round++) {
          baseline = Math.max(baseline, await measureBaseline(next(), size, synchronous));
          arbor = Math.max(arbor, await measureArbor(next(), size, synchronous));
        }
        rows.push({ synchronous, batch: String(size), arbor, baseline });
      }
      let concurrent = 0;
      for (let round = 0; round < ROUNDS; round++) concurrent = Math.max(concurrent, await measureConcurrent(next(), synchronous));
      const single = rows.find((row) => row.synchronous === synchronous && row.batch === "1");
      rows.push({ synchronous, batch: "1 ×100 same tick", arbor: concurrent, baseline: single?.baseline ?? Number.NaN });
    }
    console.table(
      rows.map((row) => ({
        synchronous: row.synchronous,
        "events/append": row.batch,
        "arbor events/s": Math.round(row.arbor),
        "raw events/s": Math.round(row.baseline),
        ratio: Number((row.arbor / row.baseline).toFixed(2)),
      })),
    );
    const headline = rows.filter((row) => row.synchronous === "NORMAL" && BATCH_SIZES.map(String).includes(row.batch));
    const geometricMean = (values: number[]) => Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);
    const arbor = geometricMean(headline.map((row) => row.arbor));
    const baseline = geometricMean(headline.map((row) => row.baseline));
    console.log(
      JSON.stringify({ bench: "append", arbor: Math.round(arbor), baseline: Math.round(baseline), unit: "events/s", ratio: Number((arbor / baseline).toFixed(3)) }),
    );
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
