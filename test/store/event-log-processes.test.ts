/**
 * SQLite event log across REAL processes: child writers spawned with
 * `node --import tsx test/store/fixtures-log/log-writer.ts`.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { collect, notes, testRegistry } from "./event-log.contract.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const script = join(root, "test/store/fixtures-log/log-writer.ts");
const directory = mkdtempSync(join(tmpdir(), "arbor-log-processes-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let counter = 0;
const newPath = () => join(directory, `log-${++counter}.db`);

interface Child {
  process: ChildProcessWithoutNullStreams;
  /** Resolves with the next stdout line. */
  nextLine(): Promise<string>;
  /** Resolves with the exit code or signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

function startWriter(...args: string[]): Child {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
  let errors = "";
  child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else queue.push(line);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on("exit", (code, signal) => done({ code, signal })),
  );
  return {
    process: child,
    nextLine: () => {
      const line = queue.shift();
      if (line !== undefined) return Promise.resolve(line);
      return new Promise((done, fail) => {
        waiting.push(done);
        void exited.then(({ code, signal }) => fail(new Error(`writer exited (${code ?? signal}) before printing a line: ${errors}`)));
      });
    },
    exited,
    stderr: () => errors,
  };
}

async function expectCleanExit(child: Child): Promise<void> {
  const { code } = await child.exited;
  expect(code, child.stderr()).toBe(0);
}

describe("SQLite event log across processes", () => {
  it("lets exactly one of two processes win a no_stream append; the other gets the conflict error", { timeout: 60_000 }, async () => {
    const path = newPath();
    await createSqliteEventLog({ path }).close();
    const writers = [startWriter("race", path, "one"), startWriter("race", path, "two")];
    expect(await Promise.all(writers.map((writer) => writer.nextLine()))).toEqual(["ready", "ready"]);
    for (const writer of writers) writer.process.stdin.write("go\n");
    const outcomes = (await Promise.all(writers.map((writer) => writer.nextLine()))).map(
      (line) => JSON.parse(line) as { ok: boolean; code?: string; positions?: number[] },
    );
    await Promise.all(writers.map(expectCleanExit));
    const winners = outcomes.filter((outcome) => outcome.ok);
    const losers = outcomes.filter((outcome) => !outcome.ok);
    expect(winners).toHaveLength(1);
    expect(losers).toEqual([expect.objectContaining({ ok: false, code: "EXPECTED_VERSION_CONFLICT" })]);
    const log = createSqliteEventLog({ path, registry: testRegistry() });
    const events = await log.readStream("race");
    await log.close();
    const winner = outcomes.indexOf(winners[0]) === 0 ? "one" : "two";
    expect(events.map((event) => [event.version, event.globalPosition, event.data])).toEqual(
      [0, 1, 2].map((n) => [n + 1, winners[0].positions?.[n], { text: winner, n }]),
    );
  });

  it("loses and duplicates nothing when two processes contend with expectedVersion and retry", { timeout: 60_000 }, async () => {
    const path = newPath();
    await createSqliteEventLog({ path }).close();
    const rounds = 25;
    const writers = [startWriter("contend", path, "one", String(rounds)), startWriter("contend", path, "two", String(rounds))];
    const reports = await Promise.all(writers.map((writer) => writer.nextLine()));
    await Promise.all(writers.map(expectCleanExit));
    const conflicts = reports.map((line) => (JSON.parse(line) as { conflicts: number }).conflicts);
    const log = createSqliteEventLog({ path, registry: testRegistry() });
    const events = await log.readStream("shared");
    await log.close();
    expect(events.map((event) => event.version)).toEqual(Array.from({ length: 2 * rounds }, (_, index) => index + 1));
    const texts = events.map((event) => (event.data as { text: string }).text);
    expect(new Set(texts).size).toBe(2 * rounds);
    for (const writer of ["one", "two"]) {
      expect(texts.filter((text) => text.startsWith(`${writer}-`))).toEqual(Array.from({ length: rounds }, (_, round) => `${writer}-${round}`));
    }
    expect(conflicts.every((count) => count >= 0)).toBe(true);
  });

  it("delivers to a subscriber in this process the appends another process makes, interleaved with local ones, without gap", { timeout: 60_000 }, async () => {
    const path = newPath();
    const log = createSqliteEventLog({ path, registry: testRegistry(), pollIntervalMs: 20 });
    await log.append("here", [{ type: "note.added", data: { text: "local" } }]);
    const total = 1 + 5 * 4 + 10;
    const received = collect(log.subscribe(), total);
    const writer = startWriter("batches", path, "5", "4");
    expect(await writer.nextLine()).toBe("ready");
    for (let index = 0; index < 10; index++) {
      await log.append("here", [{ type: "note.added", data: { text: `local-${index}` } }]);
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    const events: StoredEvent[] = await received;
    await expectCleanExit(writer);
    expect(events.map((event) => event.globalPosition)).toEqual(Array.from({ length: total }, (_, index) => index + 1));
    const child = events.filter((event) => event.streamId === "child");
    expect(child.map((event) => [event.version, (event.data as { text: string }).text])).toEqual(
      Array.from({ length: 20 }, (_, index) => [index + 1, `b${Math.floor(index / 4)}`]),
    );
    expect(events.filter((event) => event.streamId === "here").map((event) => event.version)).toEqual(Array.from({ length: 11 }, (_, index) => index + 1));
    expect(events).toEqual(await log.readAll());
    // The two writers interleave (the child appends every 20 ms while this process appends every 15 ms);
    // how exactly depends on scheduling, so only the no-gap, no-duplicate outcome is asserted.
    await log.close();
  });

  it("after kill -9 of a process appending batches in a loop, reopening shows only whole committed batches", { timeout: 60_000 }, async () => {
    const path = newPath();
    const size = 50;
    const writer = startWriter("loop", path, String(size));
    let lastReported = -1;
    while (lastReported < 30) {
      const line = await writer.nextLine();
      const match = /^committed (\d+)$/.exec(line);
      expect(match, line).not.toBeNull();
      lastReported = Number(match?.[1]);
    }
    writer.process.kill("SIGKILL");
    expect((await writer.exited).signal).toBe("SIGKILL");
    const log = createSqliteEventLog({ path, registry: testRegistry() });
    const events = await log.readStream("loop");
    expect(await log.headPosition()).toBe(events.length);
    const next = await log.append("loop", notes(1), { expectedVersion: events.length });
    expect(next.events[0]).toMatchObject({ version: events.length + 1, globalPosition: events.length + 1 });
    await log.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
    raw.close();
    expect(events.length % size).toBe(0);
    expect(events.map((event) => event.version)).toEqual(Array.from({ length: events.length }, (_, index) => index + 1));
    const batches = events.length / size;
    expect(batches).toBeGreaterThanOrEqual(lastReported + 1);
    for (let batch = 0; batch < batches; batch++) {
      const slice = events.slice(batch * size, (batch + 1) * size);
      expect(slice.map((event) => (event.data as { n: number }).n)).toEqual(Array.from({ length: size }, (_, n) => n));
      expect(new Set(slice.map((event) => (event.data as { text: string }).text.split(":")[0]))).toEqual(new Set([String(batch)]));
    }
  });

  it("never refuses a log another process is creating as foreign: the header and the schema are read as one snapshot", { timeout: 60_000 }, async () => {
    const path = newPath();
    const count = 120;
    const writer = startWriter("create", path, String(count));
    expect(await writer.nextLine()).toBe("ready");
    const created = writer.nextLine();
    let finished = false;
    void created.then(() => (finished = true));
    writer.process.stdin.write("go\n");
    const refusals: string[] = [];
    let opened = 0;
    // Opens each log of the child's as soon as its file exists, again and again while the child is creating the later ones.
    while (!finished) {
      for (let n = 1; n <= count && existsSync(`${path}.${n}`); n++) {
        try {
          await createSqliteEventLog({ path: `${path}.${n}`, registry: testRegistry() }).close();
          opened++;
        } catch (error) {
          refusals.push((error as Error).message);
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await created).toBe("created");
    expect(refusals).toEqual([]);
    expect(opened).toBeGreaterThan(0);
    await writer.exited;
  });
});
