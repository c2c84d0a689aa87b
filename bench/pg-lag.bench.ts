/**
 * pg-lag: subscription lag on PostgreSQL from a commit in this process to a
 * subscriber in ANOTHER process (bench/pg-tail-child.ts), woken by LISTEN/NOTIFY.
 * 60 single-event appends, one at a time (the next after the subscriber got the
 * previous one, so no queueing is measured). Two lags per event, same host clock:
 * from the append call (includes the commit's round trip and fsync) and from the
 * commit's acknowledgement in this process. Prints a table and one JSON line:
 * `arbor` = median lag from the acknowledgement in ms, `p99` beside it; there is no
 * baseline (`baseline`/`ratio` null): the reference is the fallback poll interval
 * (1000 ms) that a lost notification would cost.
 */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { z } from "zod";
import { createDefaultEventRegistry } from "../src/store/events/index.ts";
import { createPostgresEventLog } from "../src/store/postgres/pg-event-log.ts";

const URL = process.env.ARBOR_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/test";
const COUNT = 60;
const here = dirname(fileURLToPath(import.meta.url));

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

export default async function run(): Promise<void> {
  const schema = `bench_lag_${process.pid}`;
  const registry = createDefaultEventRegistry().register("note.added", 1, z.object({ text: z.string() }));
  const log = createPostgresEventLog({ connectionString: URL, schema, registry, poolSize: 1 });
  await log.headPosition();
  const child = spawn(process.execPath, ["--import", "tsx", join(here, "pg-tail-child.ts"), URL, schema], { stdio: ["ignore", "pipe", "inherit"] });
  const waiting = new Map<number, (at: number) => void>();
  const arrived = new Map<number, number>();
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line === "ready") return ready();
    const [position, at] = line.split(" ").map(Number);
    arrived.set(position, at);
    waiting.get(position)?.(at);
  });
  await isReady;
  const fromCall: number[] = [];
  const fromAck: number[] = [];
  for (let index = 0; index < COUNT; index++) {
    const called = Date.now();
    const result = await log.append("lag", [{ type: "note.added", data: { text: `e${index}` } }]);
    const acked = Date.now();
    const position = result.lastGlobalPosition;
    const at = arrived.get(position) ?? (await new Promise<number>((resolve) => waiting.set(position, resolve)));
    fromCall.push(at - called);
    fromAck.push(Math.max(0, at - acked));
  }
  child.kill();
  await log.close();
  const admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
  await admin.end();
  console.table([
    { from: "append call", p50: quantile(fromCall, 0.5), p90: quantile(fromCall, 0.9), p99: quantile(fromCall, 0.99), max: Math.max(...fromCall) },
    { from: "commit ack", p50: quantile(fromAck, 0.5), p90: quantile(fromAck, 0.9), p99: quantile(fromAck, 0.99), max: Math.max(...fromAck) },
  ]);
  console.log(
    JSON.stringify({ bench: "pg-lag", arbor: quantile(fromAck, 0.5), p99: quantile(fromAck, 0.99), baseline: null, unit: "ms commit→subscriber in another process", ratio: null }),
  );
}
