/**
 * sessions-list (goal P8): what `arbor sessions` does — the CLI's `openStore`, `listNewestFirst`,
 * close — on a log of 1,000 sessions against a log of 1 session (each session: 40 entries of
 * tool-using turns, `load.bench.ts`'s shape). Both files in a temp dir (tmpfs when present);
 * rounds alternate which file goes first; medians of wall time. Node's start-up (about the same
 * for both) is left out, so the ratio shows how listing scales with the number of sessions.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openStore } from "../src/cli/store-context.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite-event-log.ts";
import { median, printGoal } from "./goal.ts";
import { sessionEntries } from "./load.bench.ts";

const ROUNDS = 5;

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
    await list(one, 1);
    await list(many, 1000);
    const small: number[] = [];
    const large: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        small.push(await list(one, 1));
        large.push(await list(many, 1000));
      } else {
        large.push(await list(many, 1000));
        small.push(await list(one, 1));
      }
    }
    console.table([
      { sessions: 1, "median ms": median(small).toFixed(1) },
      { sessions: 1000, "median ms": median(large).toFixed(1) },
    ]);
    printGoal({ bench: "P8 arbor sessions, 1000 sessions / 1", arbor: median(large), baseline: median(small), unit: "ms to open the store and list (in process, no Node start-up)", ratio: median(large) / median(small), goal: "<= 1.5" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
