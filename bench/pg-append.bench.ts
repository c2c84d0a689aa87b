/**
 * pg-append: events/s through the PostgreSQL EventLog (batches of 1, 10 and 100
 * events, one awaited append per batch) against raw `pg` inserts of the same rows
 * in the same transaction shape: per batch ONE autocommit statement (one round
 * trip, one transaction) that upserts the stream row and inserts the events with a
 * BIGSERIAL position (UUIDv7 id + JSON.stringify of data and metadata per event,
 * json columns). The baseline skips what the log adds: zod validation, the
 * head-row lock that keeps positions gap-free, the expected-version and
 * idempotency checks, NOTIFY, promises and group commit.
 *
 * Both sides run against the same server (`ARBOR_BENCH_PG`, default
 * postgres://postgres@127.0.0.1:5432/test) in fresh schemas, in paired rounds that
 * alternate which side goes first. Wall time (commits are fsync-bound on the
 * server). Prints a table and one goal line per batch size (the goal, ≥ 0.8, holds for
 * every batch size), `ratio` = the median over the rounds of arbor / baseline.
 */
import { performance } from "node:perf_hooks";
import pg from "pg";
import { v7 as uuidv7 } from "uuid";
import { z } from "zod";
import type { NewEvent } from "../src/store/event-log.ts";
import { createDefaultEventRegistry } from "../src/store/events/index.ts";
import { createPostgresEventLog } from "../src/store/postgres/pg-event-log.ts";
import { median, printGoal } from "./goal.ts";

const URL = process.env.ARBOR_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/test";
const BATCH_SIZES = [1, 10, 100] as const;
const ROUNDS = Number(process.env.ARBOR_BENCH_ROUNDS ?? 3);
const TEXT = "The quick brown fox jumps over the lazy dog. ".repeat(7);
const eventsFor = (size: number) => (size === 1 ? 300 : size === 10 ? 2000 : 5000);

function batchOf(size: number, offset: number): NewEvent[] {
  return Array.from({ length: size }, (_, index) => ({
    type: "note.added",
    data: { text: TEXT, n: offset + index, tags: ["bench", "append"] },
    metadata: { runId: "run-1", turnId: `turn-${offset}` },
  }));
}

const schemaName = (side: string) => `bench_${side}_${process.pid}_${Math.floor(performance.now())}`;

async function measureArbor(admin: pg.Client, size: number): Promise<number> {
  const schema = schemaName("arbor");
  const registry = createDefaultEventRegistry().register("note.added", 1, z.object({ text: z.string(), n: z.number(), tags: z.array(z.string()) }));
  const log = createPostgresEventLog({ connectionString: URL, schema, registry, poolSize: 1 });
  await log.headPosition();
  const total = eventsFor(size);
  const batches = Array.from({ length: total / size }, (_, index) => batchOf(size, index * size));
  const start = performance.now();
  for (const batch of batches) await log.append("bench-stream", batch);
  const rate = total / ((performance.now() - start) / 1000);
  await log.close();
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
  return rate;
}

async function measureBaseline(admin: pg.Client, size: number): Promise<number> {
  const schema = schemaName("raw");
  await admin.query(`CREATE SCHEMA "${schema}";
    CREATE TABLE "${schema}".streams (stream_id text PRIMARY KEY, version bigint NOT NULL, created_at text NOT NULL, updated_at text NOT NULL);
    CREATE TABLE "${schema}".events (global_position bigserial PRIMARY KEY, event_id text NOT NULL UNIQUE, stream_id text NOT NULL, version bigint NOT NULL,
      type text NOT NULL, schema_version integer NOT NULL, time text NOT NULL, data json NOT NULL, metadata json NOT NULL, UNIQUE (stream_id, version));`);
  const client = new pg.Client({ connectionString: URL });
  await client.connect();
  const s = `"${schema}"`;
  const sql = `WITH s AS (
      INSERT INTO ${s}.streams AS t (stream_id, version, created_at, updated_at) VALUES ($1, $2, $3, $3)
      ON CONFLICT (stream_id) DO UPDATE SET version = t.version + $2, updated_at = $3 RETURNING t.version - $2 AS base)
    INSERT INTO ${s}.events (event_id, stream_id, version, type, schema_version, time, data, metadata)
    SELECT u.id, $1, s.base + u.ord, $4, 1, $3, u.d, u.m FROM s, unnest($5::text[], $6::json[], $7::json[]) WITH ORDINALITY AS u(id, d, m, ord)`;
  const total = eventsFor(size);
  const batches = Array.from({ length: total / size }, (_, index) => batchOf(size, index * size));
  const start = performance.now();
  for (const batch of batches) {
    const now = new Date().toISOString();
    await client.query(sql, [
      "bench-stream",
      batch.length,
      now,
      "note.added",
      batch.map(() => uuidv7()),
      batch.map((event) => JSON.stringify(event.data)),
      batch.map((event) => JSON.stringify(event.metadata)),
    ]);
  }
  const rate = total / ((performance.now() - start) / 1000);
  await client.end();
  await admin.query(`DROP SCHEMA ${s} CASCADE`);
  return rate;
}

export default async function run(): Promise<void> {
  const admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  const rows: { size: number; arbor: number; baseline: number; ratio: number }[] = [];
  for (const size of BATCH_SIZES) {
    const arbor: number[] = [];
    const baseline: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let a: number;
      let b: number;
      if (round % 2 === 0) {
        a = await measureArbor(admin, size);
        b = await measureBaseline(admin, size);
      } else {
        b = await measureBaseline(admin, size);
        a = await measureArbor(admin, size);
      }
      arbor.push(a);
      baseline.push(b);
      ratios.push(a / b);
    }
    rows.push({ size, arbor: median(arbor), baseline: median(baseline), ratio: median(ratios) });
  }
  await admin.end();
  console.table(rows.map((row) => ({ batch: row.size, "arbor events/s": Math.round(row.arbor), "raw pg events/s": Math.round(row.baseline), ratio: row.ratio.toFixed(2) })));
  for (const row of rows) {
    printGoal({ bench: `pg-append batch ${row.size}`, arbor: row.arbor, baseline: row.baseline, unit: "events/s (wall), arbor / raw pg", ratio: row.ratio, goal: ">= 0.8" });
  }
}
