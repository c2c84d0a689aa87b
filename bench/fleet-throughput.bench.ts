/**
 * F3 fleet throughput: background runs per second finished by 2 worker processes vs 1, on one
 * PostgreSQL schema, with a CPU-bound scripted model (each model call spins 10 ms of CPU in the
 * worker; 3 tool turns a run, so 4 calls). The bench process only queues the prompts
 * (`queueTask`, what `harness.start` writes) and reads the tasks' ends from the log. Start-up is not measured: the
 * workers print "ready" before the prompts are queued. Fresh schema per round; rounds alternate
 * which side goes first. Goal: 2 processes ≥ 1.6× the runs/s of 1 (`ratio`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { createPostgresEventLog } from "../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { queueTask, TASK_EVENT_TYPES } from "../src/store/task-queue.ts";
import { printGoal, median } from "./goal.ts";

const URL = process.env.ARBOR_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/test";
const RUNS = Number(process.env.ARBOR_BENCH_FLEET_RUNS ?? 120);
const ROUNDS = Number(process.env.ARBOR_BENCH_ROUNDS ?? 2);
const here = dirname(fileURLToPath(import.meta.url));

/** Spawns one worker child and resolves once it printed "ready". */
export async function spawnWorker(config: Record<string, unknown>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", join(here, "fleet-worker-child.ts"), JSON.stringify(config)], { cwd: join(here, ".."), stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (line) => (line === "ready" ? resolve() : reject(new Error(line))));
    child.once("exit", (code) => reject(new Error(`worker exited ${code}`)));
  });
  return child;
}

/** Drops a bench schema. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

async function round(processes: number): Promise<number> {
  const schema = `bench_fleet_${process.pid}_${Date.now()}`;
  const log = createPostgresEventLog({ connectionString: URL, schema, poolSize: 4 });
  const repository = createSessionRepository({ log });
  const sessions: string[] = [];
  for (let index = 0; index < RUNS; index++) sessions.push((await repository.create({ cwd: "/tmp" })).id);
  const children = await Promise.all(Array.from({ length: processes }, () => spawnWorker({ url: URL, schema, burnMs: 10, turns: 3, concurrency: 4 })));
  let ended = 0;
  const done = new Promise<void>((resolve) => {
    const subscription = log.subscribe({ types: TASK_EVENT_TYPES }).subscribe((event) => {
      if (event.type === "task.ended" && ++ended === RUNS) {
        subscription.unsubscribe();
        resolve();
      }
    });
  });
  const start = performance.now();
  await Promise.all(sessions.map((sessionId) => queueTask(log, { sessionId, input: "work" })));
  await done;
  const seconds = (performance.now() - start) / 1000;
  for (const child of children) child.kill("SIGTERM");
  await Promise.all(children.map((child) => new Promise((resolve) => child.once("exit", resolve))));
  await log.close();
  await dropSchema(schema);
  return RUNS / seconds;
}

export default async function main(): Promise<void> {
  const one: number[] = [];
  const two: number[] = [];
  for (let index = 0; index < ROUNDS; index++) {
    if (index % 2 === 0) {
      one.push(await round(1));
      two.push(await round(2));
    } else {
      two.push(await round(2));
      one.push(await round(1));
    }
  }
  console.log(`| processes | runs/s (median of ${ROUNDS}) |\n| --- | --- |\n| 1 | ${median(one).toFixed(1)} |\n| 2 | ${median(two).toFixed(1)} |`);
  printGoal({ bench: "F3 fleet throughput, 2 processes vs 1 (PostgreSQL, CPU-bound model)", arbor: median(two), baseline: median(one), unit: "runs/s", ratio: median(two) / median(one), goal: ">= 1.6" });
}

