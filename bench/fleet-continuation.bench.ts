/**
 * F2 continuation cost: continuing a run at step 1 000 vs at step 10. An owner process
 * (`continuation-child.ts`) runs a prompt on a SQLite log whose scripted model calls a `step`
 * tool N times (N = 10, 1 000; each step a short text, one call, its result) and is killed with
 * SIGKILL while its model call after step N is in flight. Each round, a fresh copy of that log is
 * continued by this process, which never saw the run: `createHarness({ eventLogPath, sessionId })`
 * with durability `continue` (opening the session continues its run; `harness.resume(sessionId)`
 * joins it: its `run.resumed`, then the model call again, here a mocked
 * "done"), to `run.ended { status: "done" }`, then `close()`. Timed: the whole continuation
 * (open + resume to done), and apart the time to the committed `run.resumed` (the takeover itself,
 * before the model call; by the event's logged time, ms). Rounds alternate which size goes first (median of 11, `ARBOR_BENCH_F2_ROUNDS`). The Workflow SDK
 * replays every earlier step, so its cost grows linearly with the steps; Arbor reads where the run
 * stopped from the log's projections. Goal line: time at 1 000 / time at 10, goal ≤ 1.3.
 * `ARBOR_BENCH_F2_STEPS` (default 1000) for short runs.
 */
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createInterface } from "node:readline";
import { createHarness } from "../src/harness/create-harness.ts";
import { defineTool } from "../src/core/tools.ts";
import { sessionStreamId } from "../src/store/events/session-events.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../src/testing/scripted-model.ts";
import { z } from "zod";
import { median, printGoal } from "./goal.ts";

const ROUNDS = Number(process.env.ARBOR_BENCH_F2_ROUNDS ?? 11);
const LONG = Number(process.env.ARBOR_BENCH_F2_STEPS ?? 1000);
const SHORT = 10;

/** Runs the owner to step `steps` and kills it there; resolves with the session id. */
async function ownerKilledAt(db: string, steps: number): Promise<string> {
  const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "continuation-child.ts"), JSON.stringify({ db, steps })], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (text) => {
      if (text.startsWith("AT ")) resolve(text.slice(3));
    });
    void exited.then(() => reject(new Error(`the owner exited before step ${steps}`)));
  });
  child.kill("SIGKILL");
  await exited;
  return line;
}

const step = defineTool({
  name: "step",
  description: "one step",
  parameters: z.object({ n: z.number() }),
  replay: "safe",
  execute: async (args) => ({ content: [{ type: "text", text: `step ${args.n}` }] }),
});

interface Timing {
  total: number;
  resumed: number;
  /** CPU time of this process over the whole continuation (the log is in-process: SQLite). */
  cpu: number;
}

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

async function continueCopy(source: string, copy: string, sessionId: string): Promise<Timing> {
  copyFileSync(source, copy);
  if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${copy}-wal`);
  collectGarbage();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const startedAt = Date.now();
  // durability "continue": opening the session starts the continuation; resume() joins it.
  const harness = await createHarness({ eventLogPath: copy, sessionId, durability: "continue", models: { main: scriptedModel([{ text: "done" }]) }, tools: [step], retry: { maxRetries: 0 } });
  const outcome = await harness.resume(sessionId);
  const total = performance.now() - started;
  const used = process.cpuUsage(cpuBefore);
  await harness.close();
  if (outcome.status !== "done") throw new Error(`the continuation ended ${outcome.status}`);
  // When run.resumed was committed, by the log's own timestamp (ms), read after the timing.
  const log = createSqliteEventLog({ path: copy });
  const resumed = (await log.readStream(sessionStreamId(sessionId))).findLast((event) => event.type === "run.resumed");
  await log.close();
  if (!resumed) throw new Error("no run.resumed in the log");
  const resumedAt = Date.parse(resumed.time) - startedAt;
  return { total, resumed: resumedAt, cpu: (used.user + used.system) / 1000 };
}

export default async function fleetContinuationBench(): Promise<void> {
  const root = process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
  const dir = mkdtempSync(join(root, "arbor-f2-"));
  try {
    const sizes = [SHORT, LONG];
    const fixtures = new Map<number, { db: string; sessionId: string }>();
    for (const steps of sizes) {
      const db = join(dir, `at-${steps}.db`);
      fixtures.set(steps, { db, sessionId: await ownerKilledAt(db, steps) });
    }
    const timings = new Map<number, Timing[]>(sizes.map((steps) => [steps, []]));
    // One warm-up continuation per size (module loading, JIT), not counted.
    for (const steps of sizes) await continueCopy(fixtures.get(steps)!.db, join(dir, `warm-${steps}.db`), fixtures.get(steps)!.sessionId);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? sizes : [...sizes].reverse();
      for (const steps of order) {
        const { db, sessionId } = fixtures.get(steps)!;
        timings.get(steps)!.push(await continueCopy(db, join(dir, `round-${round}-${steps}.db`), sessionId));
      }
    }
    const at = (steps: number, key: keyof Timing) => median(timings.get(steps)!.map((timing) => timing[key]));
    console.table(
      sizes.map((steps) => ({ "steps before the crash": steps, "to run.resumed ms": at(steps, "resumed").toFixed(1), "to done ms": at(steps, "total").toFixed(1), "to done cpu ms": at(steps, "cpu").toFixed(1) })),
    );
    printGoal({
      bench: `F2 continuation at step ${LONG} vs step ${SHORT} (open + run.resumed + one mocked model call to done, SQLite)`,
      arbor: at(LONG, "total"),
      baseline: at(SHORT, "total"),
      unit: `ms wall (median of ${ROUNDS} alternating rounds); ratio = at ${LONG} / at ${SHORT}`,
      ratio: at(LONG, "total") / at(SHORT, "total"),
      goal: "<= 1.3",
    });
    printGoal({
      bench: `F2 continuation at step ${LONG} vs step ${SHORT}, CPU time (open + run.resumed + one mocked model call to done, SQLite)`,
      arbor: at(LONG, "cpu"),
      baseline: at(SHORT, "cpu"),
      unit: `ms CPU of the continuing process (median of ${ROUNDS} alternating rounds); ratio = at ${LONG} / at ${SHORT}`,
      ratio: at(LONG, "cpu") / at(SHORT, "cpu"),
      goal: "<= 1.3",
    });
    printGoal({
      bench: `F2 takeover at step ${LONG} vs step ${SHORT} (open + committed run.resumed, SQLite)`,
      arbor: at(LONG, "resumed"),
      baseline: at(SHORT, "resumed"),
      unit: `ms wall (median of ${ROUNDS} alternating rounds); ratio = at ${LONG} / at ${SHORT}`,
      ratio: at(LONG, "resumed") / at(SHORT, "resumed"),
      goal: "<= 1.3",
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
