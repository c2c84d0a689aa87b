/**
 * encryption: the cost of encryption at rest (`encryption: { key }`, `docs/privacy.md`) on the
 * two paths the P1 and P2b goals measure, as a ratio of the encrypted log to the same log without
 * encryption, measured alternately in one run (rounds alternate which side goes first), on files in
 * a temp dir (tmpfs `/dev/shm` when present, or `ARBOR_BENCH_DIR`):
 * - append (P1's shape): events/s through the SQLite log at its default `synchronous = FULL`, batches
 *   of 1, 10 and 100 `note.added` events (the P1 payload) to a session stream, one awaited append per
 *   batch, after one untimed append to another session (the log's first write: an encrypted log creates
 *   its key store then); 1,000 / 20,000 / 60,000 events per round; medians of 11 paired rounds, wall time and CPU time;
 * - open (P2b's shape): a linear session of 100,000 entries (`ARBOR_BENCH_ENTRIES`), opened through
 *   the CLI's `openStore` (with `ARBOR_ENCRYPTION_KEY` set for the encrypted side) on a fresh copy of
 *   the log, 5 opens plus the leaf's context, the mean of the 5 (an encrypted store keeps no snapshot
 *   file: every open goes through the session index and decrypts each entry it reads); medians of 7
 *   rounds; and the same open through the session index on both sides (no snapshot file: the
 *   cost of encryption alone), medians of 14 alternating opens (`ARBOR_BENCH_OPEN_ROUNDS`, default 7).
 * Prints a table and one goal line per path: the encrypted/plain time ratio, goal <= 1.15.
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { openStore } from "../src/cli/store-context.ts";
import type { EncryptionOptions } from "../src/store/crypto/log-cipher.ts";
import type { NewEvent } from "../src/store/event-log.ts";
import { createDefaultEventRegistry } from "../src/store/events/index.ts";
import { createSessionRepository } from "../src/store/session-repository.ts";
import { createSqliteEventLog } from "../src/store/sqlite/sqlite-event-log.ts";
import { median, printGoal } from "./goal.ts";
import { sessionEntries } from "./load.bench.ts";

const TEXT = "The quick brown fox jumps over the lazy dog. ".repeat(7);
const APPEND_ROUNDS = 11;
const OPEN_ROUNDS = Number(process.env.ARBOR_BENCH_OPEN_ROUNDS ?? 7);
const OPENS = 5;
const SIZE = Number(process.env.ARBOR_BENCH_ENTRIES ?? 100_000);

const registry = () => createDefaultEventRegistry().register("note.added", 1, z.object({ text: z.string(), n: z.number(), tags: z.array(z.string()) }));
const batchOf = (size: number, offset: number): NewEvent[] =>
  Array.from({ length: size }, (_, index) => ({ type: "note.added", data: { text: TEXT, n: offset + index, tags: ["bench", "append"] }, metadata: { runId: "run-1", turnId: `turn-${offset}` } }));

/** Events/s of wall and CPU time appending `total` events in batches of `size`. */
async function appendRate(path: string, size: number, encryption: EncryptionOptions | undefined): Promise<{ wall: number; cpu: number }> {
  const log = createSqliteEventLog({ path, registry: registry(), ...(encryption ? { encryption } : {}) });
  // Long enough (100-400 ms a side) that a WAL checkpoint or a GC pause does not decide a round.
  const total = size === 1 ? 1000 : size === 10 ? 20000 : 60000;
  const batches = Array.from({ length: total / size }, (_, index) => batchOf(size, index * size));
  // Set-up, not timed, on both sides: the log's first write (an encrypted log creates its key store then, once per log). The timed appends go to a
  // new session, whose own data key is created by its first append, as for every session.
  await log.append("session-warmup", batchOf(1, 0));
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  for (const batch of batches) await log.append("session-bench", batch);
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuStart);
  await log.close();
  return { wall: total / (wallMs / 1000), cpu: total / ((cpu.user + cpu.system) / 1e6) };
}

/** Mean wall and CPU ms of `OPENS` opens + leaf context through the CLI's `openStore`, on a fresh copy of the log (and of its key file). */
async function userOpens(dir: string, source: string, key: string | undefined, round: number): Promise<{ wall: number; cpu: number }> {
  const copy = join(dir, `open-${round}-${key ? "enc" : "plain"}.db`);
  copyFileSync(source, copy);
  if (key) copyFileSync(source.replace(/\.db$/, ".keys.db"), copy.replace(/\.db$/, ".keys.db"));
  const previous = process.env.ARBOR_ENCRYPTION_KEY;
  if (key) process.env.ARBOR_ENCRYPTION_KEY = key;
  else delete process.env.ARBOR_ENCRYPTION_KEY;
  try {
    let total = 0;
    const cpuStart = process.cpuUsage();
    for (let open = 0; open < OPENS; open++) {
      const started = performance.now();
      const store = openStore({ db: copy });
      const session = await store.openSession("linear");
      const context = session.view.buildContext();
      total += performance.now() - started;
      if (context.messages.length === 0) throw new Error("empty context");
      await store.close();
    }
    const cpu = process.cpuUsage(cpuStart);
    return { wall: total / OPENS, cpu: (cpu.user + cpu.system) / 1000 / OPENS };
  } finally {
    if (previous === undefined) delete process.env.ARBOR_ENCRYPTION_KEY;
    else process.env.ARBOR_ENCRYPTION_KEY = previous;
  }
}

/** Wall and CPU ms of one open + leaf context through the session index (no snapshot file on either side). */
async function indexOpen(path: string, key: string | undefined): Promise<{ wall: number; cpu: number }> {
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  const log = createSqliteEventLog({ path, ...(key ? { encryption: { key } } : {}) });
  const session = await createSessionRepository({ log }).open("linear");
  if (session.view.buildContext().messages.length === 0) throw new Error("empty context");
  const wall = performance.now() - started;
  const cpu = process.cpuUsage(cpuStart);
  await log.close();
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

export default async function encryptionBench(): Promise<void> {
  const root = process.env.ARBOR_BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
  const dir = mkdtempSync(join(root, "arbor-encryption-"));
  const key = randomBytes(32).toString("base64");
  try {
    const table: Record<string, string | number>[] = [];
    for (const size of [1, 10, 100]) {
      const ratios: number[] = [];
      const cpuRatios: number[] = [];
      const plain: number[] = [];
      const sealed: number[] = [];
      for (let round = 0; round < APPEND_ROUNDS; round++) {
        const run = async (encrypted: boolean) => appendRate(join(dir, `append-${size}-${round}-${encrypted ? "enc" : "plain"}.db`), size, encrypted ? { key } : undefined);
        const [a, b] = round % 2 === 0 ? [await run(false), await run(true)] : (([x, y]) => [y, x])([await run(true), await run(false)]);
        plain.push(a.wall);
        sealed.push(b.wall);
        // Rates: plain/encrypted is the encrypted side's time over the plain side's.
        ratios.push(a.wall / b.wall);
        cpuRatios.push(a.cpu / b.cpu);
      }
      table.push({ path: `append batch ${size}`, "plain ev/s": Math.round(median(plain)), "encrypted ev/s": Math.round(median(sealed)), "time ratio": median(ratios).toFixed(3), "cpu ratio": median(cpuRatios).toFixed(3) });
      printGoal({ bench: `encryption: append batch ${size} (P1 shape), encrypted/plain time`, arbor: median(sealed), baseline: median(plain), unit: "events/s", ratio: median(ratios), goal: "<= 1.15" });
    }

    const sources: Record<"plain" | "enc", string> = { plain: join(dir, "linear-plain.db"), enc: join(dir, "linear-enc.db") };
    for (const side of ["plain", "enc"] as const) {
      const log = createSqliteEventLog({ path: sources[side], synchronous: "NORMAL", ...(side === "enc" ? { encryption: { key } } : {}) });
      await createSessionRepository({ log }).importEntries({ id: "linear", cwd: "/bench", entries: sessionEntries(SIZE, { compactionEvery: 0 }) as never });
      await log.close();
    }
    const plain: { wall: number; cpu: number }[] = [];
    const sealed: { wall: number; cpu: number }[] = [];
    for (let round = 0; round < OPEN_ROUNDS; round++) {
      if (round % 2 === 0) {
        plain.push(await userOpens(dir, sources.plain, undefined, round));
        sealed.push(await userOpens(dir, sources.enc, key, round));
      } else {
        sealed.push(await userOpens(dir, sources.enc, key, round));
        plain.push(await userOpens(dir, sources.plain, undefined, round));
      }
    }
    const plainOpens = plain.map((one) => one.wall);
    const sealedOpens = sealed.map((one) => one.wall);
    const ratio = median(sealedOpens.map((ms, index) => ms / plainOpens[index]));
    const cpuRatio = median(sealed.map((one, index) => one.cpu / plain[index].cpu));
    table.push({ path: `open ${SIZE} entries (P2b shape)`, "plain ms": median(plainOpens).toFixed(1), "encrypted ms": median(sealedOpens).toFixed(1), "time ratio": ratio.toFixed(3), "cpu ratio": cpuRatio.toFixed(3) });
    const indexPlain: { wall: number; cpu: number }[] = [];
    const indexSealed: { wall: number; cpu: number }[] = [];
    for (let round = 0; round < OPEN_ROUNDS * 2; round++) {
      if (round % 2 === 0) {
        indexPlain.push(await indexOpen(sources.plain, undefined));
        indexSealed.push(await indexOpen(sources.enc, key));
      } else {
        indexSealed.push(await indexOpen(sources.enc, key));
        indexPlain.push(await indexOpen(sources.plain, undefined));
      }
    }
    const indexRatio = median(indexSealed.map((one, index) => one.wall / indexPlain[index].wall));
    table.push({
      path: `open ${SIZE} entries through the session index`,
      "plain ms": median(indexPlain.map((one) => one.wall)).toFixed(1),
      "encrypted ms": median(indexSealed.map((one) => one.wall)).toFixed(1),
      "time ratio": indexRatio.toFixed(3),
      "cpu ratio": median(indexSealed.map((one, index) => one.cpu / indexPlain[index].cpu)).toFixed(3),
    });
    console.table(table);
    printGoal({ bench: `encryption: open ${SIZE} linear entries through the session index, encrypted/plain time`, arbor: median(indexSealed.map((one) => one.wall)), baseline: median(indexPlain.map((one) => one.wall)), unit: "ms", ratio: indexRatio, goal: "<= 1.15" });
    printGoal({ bench: `encryption: open ${SIZE} linear entries (P2b shape), encrypted/plain time`, arbor: median(sealedOpens), baseline: median(plainOpens), unit: "ms", ratio, goal: "<= 1.15" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
