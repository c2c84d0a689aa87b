/**
 * resume-turn (goal P2c): open a 100,000-entry session and run one scripted turn through the
 * harness, against pi 0.73.1 resuming the same session and recording the same turn.
 *
 * - Arbor: `createHarness({ eventLogPath, sessionId, models })` on a fresh copy of the log as
 *   Arbor wrote it (SQLite, the CLI's defaults: the snapshot file beside it, here none yet),
 *   then `harness.prompt(...)` with a scripted model (`scriptedModel`: one text reply), which
 *   resolves after the run's events are committed (synchronous FULL, the harness default),
 *   then `harness.close()`. The model call is a mock on this side: what is timed is the open,
 *   the context, the adapter's prompt conversion and the persistence of the turn;
 * - pi: `SessionManager.open(jsonl)` + `buildSessionContext()` (its resume) + `appendMessage`
 *   of the user message and the assistant reply (`appendFileSync`, what pi records for a turn
 *   without tools); pi's model call is not timed (it would be a network call).
 * The two session shapes of `load.bench.ts` (linear 100k messages; compacted every 2,000),
 * `ARBOR_BENCH_ENTRIES` for short runs. Rounds alternate which side goes first (median of 3);
 * CPU time beside wall. Goal line: pi / arbor (times faster), goal ≥ 3.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { exportPiSession } from "../src/adapters/pi-jsonl/export.ts";
import { createHarness } from "../src/harness/create-harness.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../src/testing/scripted-model.ts";
import { median, printGoal } from "./goal.ts";
import { sessionEntries, type BenchEntry } from "./load.bench.ts";

const ROUNDS = 3;
const SIZE = Number(process.env.ARBOR_BENCH_ENTRIES ?? 100_000);

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

interface Timing {
  ms: number;
  cpuMs: number;
}

function timed<T>(work: () => Promise<T>): Promise<Timing & { value: T }> {
  collectGarbage();
  const cpu = process.cpuUsage();
  const started = performance.now();
  return work().then((value) => {
    const used = process.cpuUsage(cpu);
    return { ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000, value };
  });
}

async function arborTurn(dbPath: string, id: string): Promise<Timing & { value: number }> {
  return timed(async () => {
    const harness = await createHarness({ models: { m: scriptedModel([{ text: "Done: the test passes now." }]) }, eventLogPath: dbPath, sessionId: id });
    const outcome = await harness.prompt("Please run the tests again.");
    if (outcome.status !== "done") throw new Error(`arbor turn ended ${outcome.status}`);
    const messages = harness.session.view.buildContext().messages.length;
    await harness.close();
    return messages;
  });
}

async function piTurn(jsonlPath: string, dir: string): Promise<Timing & { value: number }> {
  return timed(async () => {
    const session = SessionManager.open(jsonlPath, dir);
    const context = session.buildSessionContext();
    const now = Date.now();
    session.appendMessage({ role: "user", content: [{ type: "text", text: "Please run the tests again." }], timestamp: now } as never);
    session.appendMessage({
      role: "assistant",
      content: [{ type: "text", text: "Done: the test passes now." }],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop",
      timestamp: now,
    } as never);
    return context.messages.length + 2;
  });
}

/**
 * Writes the session both ways (the Arbor log and pi's JSONL) and keeps nothing of it in memory:
 * the generated entries, the imported view and the JSONL text held alive through the measured
 * rounds would make every measured turn's GC mark them (a resuming process holds none of them).
 */
async function writeSession(dir: string, shape: string, compactionEvery: number): Promise<{ dbPath: string; jsonlSource: string }> {
  const entries: BenchEntry[] = sessionEntries(SIZE, { compactionEvery });
  const dbPath = join(dir, `${shape}.db`);
  const log = createSqliteEventLog({ path: dbPath });
  const session = await createSessionRepository({ log }).importEntries({ id: shape, cwd: "/bench", entries: entries as never });
  const jsonlSource = join(dir, `${shape}.jsonl`);
  writeFileSync(jsonlSource, exportPiSession(session.view));
  await log.close();
  return { dbPath, jsonlSource };
}

export default async function resumeTurnBench(): Promise<void> {
  const root = process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
  const dir = mkdtempSync(join(root, "arbor-resume-turn-"));
  try {
    const rows: Record<string, string | number>[] = [];
    for (const [shape, compactionEvery] of [["compacted", 2000], ["linear", 0]] as const) {
      const { dbPath, jsonlSource } = await writeSession(dir, shape, compactionEvery);
      const arbor: Timing[] = [];
      const pi: Timing[] = [];
      const sizes = new Set<number>();
      for (let round = 0; round < ROUNDS; round++) {
        const userDb = join(dir, `${shape}-${round}.db`);
        copyFileSync(dbPath, userDb);
        const jsonlPath = join(dir, `${shape}-${round}.jsonl`);
        copyFileSync(jsonlSource, jsonlPath);
        const runArbor = async () => {
          const result = await arborTurn(userDb, shape);
          arbor.push(result);
          sizes.add(result.value);
        };
        const runPi = async () => {
          const result = await piTurn(jsonlPath, dir);
          pi.push(result);
          sizes.add(result.value);
        };
        if (round % 2 === 0) {
          await runArbor();
          await runPi();
        } else {
          await runPi();
          await runArbor();
        }
      }
      if (sizes.size !== 1) throw new Error(`context sizes after the turn differ: ${[...sizes].join(", ")}`);
      const wall = { arbor: median(arbor.map((t) => t.ms)), pi: median(pi.map((t) => t.ms)) };
      const cpu = { arbor: median(arbor.map((t) => t.cpuMs)), pi: median(pi.map((t) => t.cpuMs)) };
      rows.push({ shape, entries: SIZE, "context after": [...sizes][0], "arbor ms": wall.arbor.toFixed(0), "pi ms": wall.pi.toFixed(0), "pi/arbor wall": (wall.pi / wall.arbor).toFixed(2), "arbor cpu ms": cpu.arbor.toFixed(0), "pi cpu ms": cpu.pi.toFixed(0), "pi/arbor cpu": (cpu.pi / cpu.arbor).toFixed(2) });
      printGoal({
        bench: `P2c open ${SIZE / 1000}k ${shape} + one scripted turn through the harness`,
        arbor: wall.arbor,
        baseline: wall.pi,
        unit: "ms wall (median of 3 alternating rounds); ratio = pi / arbor (times faster)",
        ratio: wall.pi / wall.arbor,
        goal: ">= 3",
      });
    }
    console.table(rows);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
