/**
 * Stored context text (issue 17 P2b, `context-chunks.ts`, `sqlite-context-chunks.ts`): a context
 * built from the chunks the SQLite writer keeps equals the context of a plain fold of the events,
 * on real SQLite files, for random session trees (appends in turns and in bulk, leaf moves,
 * forks, compactions, branch summaries, labels, custom and system messages, context edits,
 * unknown kinds, deletes and re-imports, reopenings); every stored chunk holds exactly what its
 * committed entries give, also after a writer was killed with SIGKILL mid-append; files without
 * the chunk table (an earlier Arbor) open read-only and writable; chunks an earlier Arbor left
 * behind a recreated stream are ignored.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/core/entries.ts";
import { entryToMessage } from "../../src/store/session/context.ts";
import { BLOCK_ENTRIES, CHUNK_ENTRIES } from "../../src/store/session/context-chunks.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import type { LazySessionView } from "../../src/store/session/lazy-session-view.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import type { SessionIndex } from "../../src/store/session/session-index.ts";
import type { SessionHandle, SessionView } from "../../src/store/session-types.ts";
import { createSessionView } from "../../src/store/session/session-view.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { spawnTsx } from "./child-process.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-context-chunks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `log-${files++}.db`);

const isLazy = (view: SessionView) => "headState" in view && !(view as LazySessionView).inflated;

/** The log with its session index's chunk reads counted (messages served from chunks). */
function counting(log: EventLog): { log: EventLog; chunkReads: () => number } {
  const index = log.sessionIndex as SessionIndex;
  let reads = 0;
  const contextChunks = index.contextChunks;
  const sessionIndex: SessionIndex = contextChunks
    ? {
        ...index,
        contextChunks: (streamId, from, to) => {
          const chunks = contextChunks(streamId, from, to);
          reads += chunks.length;
          return chunks;
        },
      }
    : index;
  return { log: { ...log, sessionIndex }, chunkReads: () => reads };
}

async function folded(log: EventLog, id: string): Promise<SessionView> {
  const view = createSessionView(id);
  view.applyAll(await log.readStream(sessionStreamId(id)));
  return view;
}

/** The contexts of `lazy` equal the fold's at the leaf and at every entry. */
function expectSameContexts(lazy: SessionView, reference: SessionView): void {
  expect(lazy.leafId).toBe(reference.leafId);
  expect(lazy.buildContext()).toEqual(reference.buildContext());
  for (const entry of reference.getEntries()) expect(lazy.buildContext({ leafId: entry.id }), entry.id).toEqual(reference.buildContext({ leafId: entry.id }));
}

/**
 * Every chunk row of `streamId` in the file: aligned, not overlapping, within the indexed
 * entries, and holding exactly the items of the committed entries it covers. Returns the rows.
 */
function expectChunksMatchEvents(path: string, streamId: string): { from: number; to: number }[] {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare("SELECT first_event_id AS firstEventId, from_seq AS \"from\", to_seq AS \"to\", kinds, ids, items FROM arbor_context_chunks WHERE stream_id = ? ORDER BY from_seq").all(streamId) as {
      firstEventId: string;
      from: number;
      to: number;
      kinds: string;
      ids: string;
      items: string;
    }[];
    const entries = (db.prepare("SELECT e.data FROM arbor_entry_index i JOIN events e ON e.stream_id = i.stream_id AND e.version = i.version WHERE i.stream_id = ? ORDER BY i.seq").pluck().all(streamId) as string[]).map(
      (text) => (JSON.parse(text) as { entry: SessionEntry }).entry,
    );
    const first = db.prepare("SELECT event_id FROM events WHERE stream_id = ? AND version = 1").pluck().get(streamId);
    let next = 0;
    for (const row of rows) {
      expect(row.firstEventId).toBe(first);
      expect(row.from).toBeGreaterThanOrEqual(next);
      expect([CHUNK_ENTRIES, BLOCK_ENTRIES]).toContain(row.to - row.from + 1);
      expect(row.from % (row.to - row.from + 1)).toBe(0);
      expect(row.to).toBeLessThan(entries.length);
      const covered = entries.slice(row.from, row.to + 1);
      const expectedKinds = covered.map((entry) => (entry.type === "custom_message" || entry.type === "branch_summary" ? "e" : entry.type === "message" && entryToMessage(entry) ? "m" : "-")).join("");
      expect(row.kinds).toBe(expectedKinds);
      const withItem = covered.filter((_, position) => expectedKinds[position] !== "-");
      expect(JSON.parse(row.ids)).toEqual(withItem.map((entry) => entry.id));
      expect(JSON.parse(row.items)).toEqual(withItem.map((entry) => (entry.type === "message" ? (entry as { message: unknown }).message : entry)));
      next = row.to + 1;
    }
    // Every complete chunk below the last complete block boundary is there (nothing is skipped on an ordinary log).
    return rows;
  } finally {
    db.close();
  }
}

const text = (role: "user" | "assistant" | "system", value: string, calls: string[] = []) =>
  role === "assistant"
    ? { role, content: [{ type: "text", text: value }, ...calls.map((id) => ({ type: "toolCall", id, name: "read", arguments: {} }))], api: "a", provider: "p", model: "m", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 }, stopReason: calls.length ? "toolUse" : "stop", timestamp: 2 }
    : { role, content: value, timestamp: 1 };

type Step =
  | { kind: "turn" | "result" | "system" | "thinking" | "label" | "custom" | "future" | "reopen" | "reimport" }
  | { kind: "bulk"; count: number }
  | { kind: "move" | "compaction" | "branchSummary" | "fork" | "edit"; pick: number };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom<Step>({ kind: "turn" }, { kind: "result" }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("bulk" as const), count: fc.integer({ min: 1, max: 120 }) }) },
  { weight: 3, arbitrary: fc.constantFrom<Step>({ kind: "system" }, { kind: "thinking" }, { kind: "label" }, { kind: "custom" }, { kind: "future" }, { kind: "reopen" }, { kind: "reimport" }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constantFrom("move" as const, "compaction" as const, "branchSummary" as const, "fork" as const, "edit" as const), pick: fc.nat(10_000) }) },
);

interface World {
  path: string;
  log: EventLog;
  session: SessionHandle;
  calls: string[];
  n: number;
}

async function applyStep(world: World, step: Step): Promise<void> {
  const n = world.n++;
  const { session } = world;
  const branch = session.view.getBranch();
  const pick = <T>(items: T[], at: number) => items[at % items.length];
  switch (step.kind) {
    case "turn": {
      const call = `c${n}`;
      world.calls.push(call);
      await session.appendEntries([
        { type: "message", message: text("user", `u${n}`) },
        { type: "message", message: text("assistant", `a${n}`, n % 3 ? [call] : []) },
      ]);
      break;
    }
    case "bulk":
      await session.appendEntries(Array.from({ length: step.count }, (_, k) => ({ type: "message" as const, message: text(k % 2 ? "assistant" : "user", `b${n}.${k}`) })));
      break;
    case "result":
      await session.appendEntry({ type: "message", message: { role: "toolResult", toolCallId: world.calls.shift() ?? "stray", toolName: "read", content: [{ type: "text", text: `r${n}` }], isError: false, timestamp: 3 } });
      break;
    case "system":
      await session.appendEntry({ type: "message", message: text("system", `s${n}`) });
      break;
    case "thinking":
      await session.appendEntry({ type: "thinking_level_change", thinkingLevel: n % 2 ? "high" : "low" });
      break;
    case "label":
      if (branch.length) await session.appendEntry({ type: "label", targetId: pick(branch, n).id, label: `l${n}` });
      break;
    case "custom":
      await session.appendEntry({ type: "custom_message", customType: "note", content: `c${n}`, display: n % 2 === 0, ...(n % 3 ? { details: { n } } : {}) });
      break;
    case "future":
      await session.appendEntry({ type: "future_kind", payload: n });
      break;
    case "move": {
      const entries = session.view.getEntries();
      if (entries.length) await session.moveLeaf(pick(entries, step.pick).id);
      break;
    }
    case "compaction":
      if (branch.length) await session.appendEntry({ type: "compaction", summary: `s${n}`, firstKeptEntryId: pick(branch, step.pick).id, tokensBefore: 5 });
      break;
    case "branchSummary": {
      const entries = session.view.getEntries();
      if (entries.length) await session.appendEntry({ type: "branch_summary", fromId: pick(entries, step.pick).id, summary: n % 4 ? `b${n}` : "" });
      break;
    }
    case "edit":
      if (branch.length) {
        const target = pick(branch, step.pick).id;
        const replacement = step.pick % 3 === 0 ? null : step.pick % 3 === 1 ? text("user", `edited ${n}`) : { not: "a message" };
        await session.appendEntry({ type: "context_edit", targetId: target, replacement } as never);
      }
      break;
    case "fork": {
      // Continue in a fork of the path up to a random entry of it (the fork is one import: its own stream and chunks).
      if (branch.length) world.session = await createSessionRepository({ log: world.log }).fork(session.id, { entryId: pick(branch, step.pick).id });
      break;
    }
    case "reimport": {
      // Delete the session and import its entries again under the same id: a new incarnation of the stream.
      const entries = session.view.getEntries();
      const leafId = session.view.leafId;
      const repo = createSessionRepository({ log: world.log });
      await repo.delete(session.id);
      world.session = await repo.importEntries({ id: session.id, entries, leafId });
      break;
    }
    case "reopen":
      await world.log.close();
      world.log = createSqliteEventLog({ path: world.path, synchronous: "OFF" });
      world.session = await createSessionRepository({ log: world.log }).open(session.id);
      break;
  }
}

describe("stored context text: contexts from chunks equal the fold", () => {
  it("for random session trees, on real SQLite files", { timeout: 240_000 }, async () => {
    let chunkReads = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 1, maxLength: 30 }), async (steps) => {
        const path = freshPath();
        const log = createSqliteEventLog({ path, synchronous: "OFF" });
        const world: World = { path, log, session: await createSessionRepository({ log }).create({ cwd: "/w" }), calls: [], n: 0 };
        for (const step of steps) await applyStep(world, step);
        const id = world.session.id;
        await world.log.close();
        expectChunksMatchEvents(path, sessionStreamId(id));
        const counted = counting(createSqliteEventLog({ path, synchronous: "OFF" }));
        const reopened = await createSessionRepository({ log: counted.log }).open(id);
        expect(isLazy(reopened.view)).toBe(true);
        expectSameContexts(reopened.view, await folded(counted.log, id));
        chunkReads += counted.chunkReads();
        await counted.log.close();
      }),
      { numRuns: 50, seed: 1717 },
    );
    expect(chunkReads).toBeGreaterThan(100);
  });

  it("serves a long linear context from merged blocks, a leaf in mid-chunk, and its tail from the entries", async () => {
    const path = freshPath();
    let log = createSqliteEventLog({ path, synchronous: "OFF" });
    const session = await createSessionRepository({ log }).create();
    const total = 2 * BLOCK_ENTRIES + 3 * CHUNK_ENTRIES + 5;
    for (let start = 0; start < total; start += 50) {
      await session.appendEntries(Array.from({ length: Math.min(50, total - start) }, (_, k) => ({ type: "message" as const, message: text((start + k) % 2 ? "assistant" : "user", `m${start + k}`) })));
    }
    await log.close();
    const rows = expectChunksMatchEvents(path, sessionStreamId(session.id));
    expect(rows.map((row) => row.to - row.from + 1)).toEqual([BLOCK_ENTRIES, BLOCK_ENTRIES, CHUNK_ENTRIES, CHUNK_ENTRIES, CHUNK_ENTRIES]);
    log = createSqliteEventLog({ path, synchronous: "OFF" });
    const counted = counting(log);
    const reopened = await createSessionRepository({ log: counted.log }).open(session.id);
    const reference = await folded(log, session.id);
    expect(reopened.view.buildContext()).toEqual(reference.buildContext());
    expect(reopened.view.buildContext().messages).toHaveLength(total);
    expect(counted.chunkReads()).toBe(rows.length);
    const middle = reference.getEntries()[BLOCK_ENTRIES + 37].id;
    expect(reopened.view.buildContext({ leafId: middle })).toEqual(reference.buildContext({ leafId: middle }));
    await log.close();
  });

  it("after kill -9 of a process appending to the session, the chunks match the committed entries", { timeout: 60_000 }, async () => {
    const path = freshPath();
    const log = createSqliteEventLog({ path, synchronous: "NORMAL" });
    const created = await createSessionRepository({ log }).create();
    await log.close();
    const writer = spawnTsx("test/store/fixtures-log/session-writer.ts", [path, created.id]);
    for (let line = 0; line < 300; line++) expect(await writer.nextLine()).toMatch(/^turn \d+$/);
    writer.process.kill("SIGKILL");
    expect((await writer.exited).signal).toBe("SIGKILL");
    const rows = expectChunksMatchEvents(path, sessionStreamId(created.id));
    expect(rows.length).toBeGreaterThan(2);
    const counted = counting(createSqliteEventLog({ path }));
    const reopened = await createSessionRepository({ log: counted.log }).open(created.id);
    expect(isLazy(reopened.view)).toBe(true);
    expectSameContexts(reopened.view, await folded(counted.log, created.id));
    expect(counted.chunkReads()).toBeGreaterThan(0);
    await counted.log.close();
  });

  it("opens a file without the chunk table (an earlier Arbor) read-only and writable, and chunks what is appended after", async () => {
    const path = freshPath();
    let log = createSqliteEventLog({ path, synchronous: "OFF" });
    const session = await createSessionRepository({ log }).create();
    for (let turn = 0; turn < 40; turn++) await session.appendEntries([{ type: "message", message: text("user", `u${turn}`) }, { type: "message", message: text("assistant", `a${turn}`) }]);
    await log.close();
    const db = new Database(path);
    db.exec("DROP TABLE arbor_context_chunks");
    db.close();
    const readOnly = createSqliteEventLog({ path, readOnly: true });
    expect(readOnly.sessionIndex?.contextChunks).toBeUndefined();
    const fromIndex = await createSessionRepository({ log: readOnly }).open(session.id);
    expect(isLazy(fromIndex.view)).toBe(true);
    expectSameContexts(fromIndex.view, await folded(readOnly, session.id));
    await readOnly.close();
    log = createSqliteEventLog({ path, synchronous: "OFF" });
    const writable = await createSessionRepository({ log }).open(session.id);
    expect(isLazy(writable.view)).toBe(true);
    expectSameContexts(writable.view, await folded(log, session.id));
    // 80 entries indexed without chunks; appending past the next block boundary chunks the new entries and builds that block.
    for (let turn = 0; turn < 100; turn++) await writable.appendEntries([{ type: "message", message: text("user", `v${turn}`) }, { type: "message", message: text("assistant", `w${turn}`) }]);
    await log.close();
    const rows = expectChunksMatchEvents(path, sessionStreamId(session.id));
    expect(rows[0]).toMatchObject({ from: 0, to: BLOCK_ENTRIES - 1 });
    const counted = counting(createSqliteEventLog({ path, synchronous: "OFF" }));
    const again = await createSessionRepository({ log: counted.log }).open(session.id);
    expectSameContexts(again.view, await folded(counted.log, session.id));
    expect(counted.chunkReads()).toBeGreaterThan(0);
    await counted.log.close();
  });

  it("ignores chunks an earlier Arbor left behind a deleted and recreated stream, and a writable read deletes them", async () => {
    const path = freshPath();
    let log = createSqliteEventLog({ path, synchronous: "OFF" });
    const repo = createSessionRepository({ log });
    const first = await repo.create({ id: "same" });
    for (let k = 0; k < 3 * CHUNK_ENTRIES; k++) await first.appendEntry({ type: "message", message: text(k % 2 ? "assistant" : "user", `old ${k}`) });
    await log.close();
    const stale = copyRows(path);
    expect(stale.length).toBe(3);
    log = createSqliteEventLog({ path, synchronous: "OFF" });
    const again = createSessionRepository({ log });
    await again.delete("same");
    const second = await again.create({ id: "same" });
    for (let k = 0; k < 3 * CHUNK_ENTRIES; k++) await second.appendEntry({ type: "message", message: text(k % 2 ? "assistant" : "user", `new ${k}`) });
    await log.close();
    // What an earlier Arbor leaves: its delete kept the chunk rows, its writer wrote none for the new stream.
    const db = new Database(path);
    db.prepare("DELETE FROM arbor_context_chunks").run();
    const insert = db.prepare("INSERT INTO arbor_context_chunks (stream_id, first_event_id, from_seq, to_seq, kinds, ids, items) VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (const row of stale) insert.run(...row);
    db.close();
    const readOnly = createSqliteEventLog({ path, readOnly: true });
    const view = (await createSessionRepository({ log: readOnly }).open("same")).view;
    expectSameContexts(view, await folded(readOnly, "same"));
    expect(JSON.stringify(view.buildContext().messages)).not.toContain("old ");
    await readOnly.close();
    log = createSqliteEventLog({ path, synchronous: "OFF" });
    const writable = await createSessionRepository({ log }).open("same");
    expectSameContexts(writable.view, await folded(log, "same"));
    await log.close();
    expect(copyRows(path)).toEqual([]);
  });
});

function copyRows(path: string): unknown[][] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT stream_id, first_event_id, from_seq, to_seq, kinds, ids, items FROM arbor_context_chunks ORDER BY from_seq").raw().all() as unknown[][];
  } finally {
    db.close();
  }
}

describe("stored context text: deleting a session", () => {
  it("removes the chunks' bytes from the file with the events", async () => {
    const path = freshPath();
    const log = createSqliteEventLog({ path });
    const repo = createSessionRepository({ log });
    const marker = "PRIVATE-CHUNK-MARKER-5d1e";
    const secret = await repo.create();
    await secret.appendEntries(Array.from({ length: BLOCK_ENTRIES + CHUNK_ENTRIES }, (_, k) => ({ type: "message" as const, message: text(k % 2 ? "assistant" : "user", `${marker} ${k}`) })));
    const kept = await repo.create();
    await kept.appendEntries(Array.from({ length: CHUNK_ENTRIES }, (_, k) => ({ type: "message" as const, message: text("user", `kept text ${k}`) })));
    expect(copyRows(path).length).toBe(3);
    await repo.delete(secret.id);
    expect(copyRows(path).length).toBe(1);
    await log.close();
    const contents = ["", "-wal"].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix).toString("latin1"));
    expect(contents.join("")).not.toContain(marker);
    expect(contents.join("")).toContain("kept text");
  });
});
