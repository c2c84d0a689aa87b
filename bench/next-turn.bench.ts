/**
 * next-turn (goal P3): one ordinary turn on a 10,000-entry session — its four entries (user,
 * assistant with a tool call, tool result, final assistant) persisted as they happen, then the
 * next turn's context — against pi 0.73.1 doing what it does on an ordinary turn: its
 * `SessionManager.appendMessage` for the same four messages (one JSONL line each,
 * `appendFileSync`), its agent keeping the context in memory (no rebuild).
 *
 * Same durability on both sides: pi's `appendFileSync` survives a process crash, not power loss;
 * Arbor's SQLite log runs at `synchronous: "NORMAL"` (WAL), which survives a process crash and
 * may lose the last commits on power loss. Both files in the same temp dir (tmpfs `/dev/shm` when
 * present, or `ARBOR_BENCH_DIR`). Rounds of 10 turns alternate which side goes first; the goal
 * line is the median per-turn cost, arbor / pi (lower is better).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { exportPiSession } from "../src/adapters/pi-jsonl/export.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { median, printGoal } from "./goal.ts";
import { sessionEntries, type BenchEntry } from "./load.bench.ts";

const SIZE = 10_000;
const ROUNDS = 8;
const TURNS_PER_ROUND = 10;

export default async function nextTurnBench(): Promise<void> {
  const root = process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
  const dir = mkdtempSync(join(root, "arbor-next-turn-"));
  try {
    const all = sessionEntries(SIZE + ROUNDS * TURNS_PER_ROUND * 4, { compactionEvery: 0 });
    const base = all.slice(0, SIZE);
    const extra = all.slice(SIZE);
    const messageOf = (entry: BenchEntry) => (entry as unknown as { message: Record<string, unknown> }).message;

    const log = createSqliteEventLog({ path: join(dir, "arbor.db"), synchronous: "NORMAL" });
    const session = await createSessionRepository({ log }).importEntries({ id: "bench", cwd: "/bench", entries: base as never });
    session.view.buildContext();
    const jsonlPath = join(dir, "pi.jsonl");
    writeFileSync(jsonlPath, exportPiSession(session));
    const pi = SessionManager.open(jsonlPath, dir);
    const piContext = pi.buildSessionContext().messages;

    let next = 0;
    const arborTurn = async (entries: BenchEntry[]) => {
      const started = performance.now();
      for (const entry of entries) await session.appendEntry({ type: "message", message: messageOf(entry) } as never);
      const context = session.view.buildContext();
      const ms = performance.now() - started;
      if (context.messages.length === 0) throw new Error("empty context");
      return ms;
    };
    const piTurn = (entries: BenchEntry[]) => {
      const started = performance.now();
      for (const entry of entries) {
        pi.appendMessage(messageOf(entry) as never);
        piContext.push(messageOf(entry) as never);
      }
      return performance.now() - started;
    };
    const arborTimes: number[] = [];
    const piTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const turns = Array.from({ length: TURNS_PER_ROUND }, () => extra.slice(next, (next += 4)));
      const runArbor = async () => {
        for (const turn of turns) arborTimes.push(await arborTurn(turn));
      };
      const runPi = () => {
        for (const turn of turns) piTimes.push(piTurn(turn));
      };
      if (round % 2 === 0) {
        await runArbor();
        runPi();
      } else {
        runPi();
        await runArbor();
      }
    }
    await log.close();
    const arbor = median(arborTimes) * 1000;
    const baseline = median(piTimes) * 1000;
    console.table([
      { side: "arbor: 4 appends (SQLite NORMAL) + next context", "median µs/turn": arbor.toFixed(1) },
      { side: "pi 0.73.1: 4 × SessionManager.appendMessage (appendFileSync)", "median µs/turn": baseline.toFixed(1) },
    ]);
    printGoal({ bench: "P3 next turn on 10k entries", arbor, baseline, unit: "µs per turn (4 entries persisted + next context), arbor / pi", ratio: arbor / baseline, goal: "<= 5" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
