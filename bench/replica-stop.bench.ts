/**
 * replica-stop: how long a stop takes across processes. Two real `arbor serve` processes on one
 * log (a PostgreSQL schema, then one SQLite file); each round prompts a fresh session on replica
 * A (the loopback model streams part of an answer, then holds the stream open), waits until the
 * first delta is in the log, then `POST /api/chat/:id/stop` on replica B. Measured: from sending
 * the stop to B's `{ stopped: true }` (B answers once the run's `run.ended`, written by A, is in
 * the log), i.e. request written, followed by A, run aborted, ending seen by B.
 * One warm-up round first (replica B makes its harness on its first request; printed apart).
 * Prints p50 / p99 per backend and one JSON goal line each: p99 <= 1000 ms (issue: stop takes
 * effect within 1 s at p99 across processes). Rounds: ARBOR_BENCH_STOP_ROUNDS (default 30).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { hangResponse, startOpenAIServer } from "../src/testing/openai-server.ts";
import type { EventLog } from "../src/store/event-log.ts";
import { createPostgresEventLog } from "../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { printGoal } from "./goal.ts";

const ROUNDS = Number(process.env.ARBOR_BENCH_STOP_ROUNDS ?? 30);
const PG_URL = process.env.ARBOR_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/test";
const TOKEN = "bench-stop-token";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

function serve(db: string, dir: string, modelUrl: string, env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "scripts/arbor-dev.ts"), "serve", "--db", db, "--cwd", dir, "--model", "openai:gpt-test", "--base-url", modelUrl, "--port", "0"], {
    cwd: root,
    env: { ...process.env, OPENAI_API_KEY: "sk-bench", ARBOR_TOKEN: TOKEN, ...env },
    stdio: ["pipe", "ignore", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8");
      const match = /arbor serve: (http:\/\/\S+)/.exec(seen);
      if (match) resolve({ url: match[1], child });
    });
    child.on("exit", (code) => reject(new Error(`arbor serve exited (${code}): ${seen}`)));
  });
}

const post = (url: string, path: string, body?: unknown) =>
  fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });

function firstDelta(log: EventLog, id: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const subscription = log.subscribe({ streamId: `session-${id}` }).subscribe({
      next: (event) => {
        if (event.type !== "message.delta") return;
        queueMicrotask(() => subscription.unsubscribe());
        resolve();
      },
      error: reject,
    });
  });
}

async function measure(name: string, db: string, env: NodeJS.ProcessEnv, openLog: () => EventLog): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-stop-"));
  const model = await startOpenAIServer({ respond: () => hangResponse("The answer starts here and then the stream waits") });
  const a = await serve(db, dir, model.url, env);
  const b = await serve(db, dir, model.url, env);
  const log = openLog();
  const latencies: number[] = [];
  try {
    // Round 0 warms up: replica B makes its harness on its first request (reported apart).
    for (let round = 0; round <= ROUNDS; round++) {
      const id = `stop-${name}-${round}`;
      const streaming = post(a.url, "/api/chat", { id, trigger: "submit-message", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "go" }] }] });
      await firstDelta(log, id);
      const started = performance.now();
      const stop = await post(b.url, `/api/chat/${id}/stop`);
      const body = (await stop.json()) as { stopped?: boolean };
      const elapsed = performance.now() - started;
      if (body.stopped !== true) throw new Error(`round ${round}: stop answered ${JSON.stringify(body)}`);
      if (round === 0) console.log(`${name}: first stop (B makes its harness): ${elapsed.toFixed(0)} ms`);
      else latencies.push(elapsed);
      await (await streaming).text();
    }
  } finally {
    a.child.kill("SIGKILL");
    b.child.kill("SIGKILL");
    await log.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return latencies;
}

export default async function run(): Promise<void> {
  const schema = `bench_stop_${process.pid}`;
  const pgLatencies = await measure("pg", PG_URL, { ARBOR_DB_SCHEMA: schema }, () => createPostgresEventLog({ connectionString: PG_URL, schema }));
  const sqliteDir = mkdtempSync(join(tmpdir(), "arbor-bench-stop-db-"));
  const sqlitePath = join(sqliteDir, "arbor.db");
  const sqliteLatencies = await measure("sqlite", sqlitePath, {}, () => createSqliteEventLog({ path: sqlitePath }));
  rmSync(sqliteDir, { recursive: true, force: true });
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();

  console.log(`| backend | rounds | stop p50 (ms) | stop p99 (ms) | max (ms) |`);
  console.log(`| --- | --- | --- | --- | --- |`);
  for (const [name, values] of [["PostgreSQL", pgLatencies], ["SQLite", sqliteLatencies]] as const) {
    console.log(`| ${name} | ${values.length} | ${quantile(values, 0.5).toFixed(0)} | ${quantile(values, 0.99).toFixed(0)} | ${Math.max(...values).toFixed(0)} |`);
  }
  for (const [name, values] of [["PostgreSQL", pgLatencies], ["SQLite", sqliteLatencies]] as const) {
    const p99 = quantile(values, 0.99);
    printGoal({ bench: `C1 stop from another replica p99 (${name})`, arbor: p99, baseline: 1000, unit: "ms", ratio: p99 / 1000, goal: "<= 1" });
  }
}
