/**
 * sessions-list (goal P8): `arbor sessions` on a log of 1,000 sessions against a log of 1 session
 * (each session: 40 entries of tool-using turns, `load.bench.ts`'s shape). Both files in a temp
 * dir (tmpfs when present); rounds alternate which file goes first; medians of wall time.
 * The goal line is the command as users run it: the compiled CLI (`bin/arbor.js sessions --db`,
 * a child process; dist/ is built first when stale). The table also shows the in-process part (the CLI's
 * `openStore`, `listNewestFirst`, close), which shows how the listing itself scales.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { openStore } from "../src/cli/store-context.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { ensureBuild } from "./build.ts";
import { median, printGoal } from "./goal.ts";
import { sessionEntries } from "./load.bench.ts";

const ROUNDS = 5;
const repo = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Runs `arbor sessions --db path` (the compiled CLI) and returns its wall time in ms. */
function command(path: string, expected: number): number {
  const started = performance.now();
  const out = execFileSync(process.execPath, [join(repo, "bin", "arbor.js"), "sessions", "--db", path], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  const elapsed = performance.now() - started;
  const lines = out.split("\n").filter((line) => /\bs-\d+\b/.test(line)).length;
  if (lines !== expected) throw new Error(`arbor sessions printed ${lines} session lines, expected ${expected}:\n${out.slice(0, 400)}`);
  return elapsed;
}

async function prepare(path: string, sessions: number): Promise<void> {
  const log = createSqliteEventLog({ path, synchronous: "OFF" });
  const repo = createSessionRepository({ log });
  const entries = sessionEntries(40, { compactionEvery: 0 });
  for (let index = 0; index < sessions; index++) await repo.importEntries({ id: `s-${index}`, cwd: "/bench", entries: entries as never });
  await log.close();
}

async function list(path: string, expected: number): Promise<number> {
  const started = performance.now();
  const store = openStore({ db: path }, { mustExist: true, readOnly: true });
  const rows = await store.listNewestFirst();
  await store.close();
  if (rows.length !== expected) throw new Error(`listed ${rows.length} sessions, expected ${expected}`);
  return performance.now() - started;
}

export default async function sessionsListBench(): Promise<void> {
  const root = process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
  const dir = mkdtempSync(join(root, "arbor-sessions-list-"));
  try {
    const one = join(dir, "one.db");
    const many = join(dir, "many.db");
    await prepare(one, 1);
    await prepare(many, 1000);
    ensureBuild();
    await list(one, 1);
    await list(many, 1000);
    command(one, 1);
    command(many, 1000);
    const small: number[] = [];
    const large: number[] = [];
    const smallCli: number[] = [];
    const largeCli: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        small.push(await list(one, 1));
        large.push(await list(many, 1000));
        smallCli.push(command(one, 1));
        largeCli.push(command(many, 1000));
      } else {
        largeCli.push(command(many, 1000));
        smallCli.push(command(one, 1));
        large.push(await list(many, 1000));
        small.push(await list(one, 1));
      }
    }
    console.table([
      { sessions: 1, "arbor sessions (process) median ms": median(smallCli).toFixed(1), "in-process list median ms": median(small).toFixed(2) },
      { sessions: 1000, "arbor sessions (process) median ms": median(largeCli).toFixed(1), "in-process list median ms": median(large).toFixed(2) },
    ]);
    printGoal({ bench: "P8 arbor sessions, 1000 sessions / 1", arbor: median(largeCli), baseline: median(smallCli), unit: "ms wall of `arbor sessions --db` (compiled CLI, child process)", ratio: median(largeCli) / median(smallCli), goal: "<= 1.5" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
