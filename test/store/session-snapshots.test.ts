import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { LogSchemaError } from "../../src/core/errors.ts";
import type { AgentMessage } from "../../src/core/messages.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteSnapshotStore, type SessionSnapshotStore } from "../../src/store/session/session-snapshots.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import type { SessionView } from "../../src/store/session-types.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import type { SessionViewInternals } from "../../src/store/session/session-view.ts";

/** The view's internal parts (the context builder's counters), which the public handle does not expose. */
const internals = (view: SessionView): SessionViewInternals => view as SessionViewInternals;

const dir = mkdtempSync(join(tmpdir(), "arbor-snap-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: Date.now() });
const assistant = (text: string, model = "m"): AgentMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "a",
  provider: "p",
  model,
  usage: { input: 3, output: 4, cacheRead: null, cacheWrite: null, totalTokens: 7 },
  stopReason: "stop",
  timestamp: Date.now(),
});

/**
 * The SQLite log without its session index (issue 17): snapshots are the fast open path of logs
 * that have none (other backends, read-only files written before it), so these tests hide it.
 */
function withoutIndex(log: EventLog): EventLog {
  const { sessionIndex: _hidden, ...rest } = log;
  return rest;
}

/** Counts entry reads of a snapshot store. */
function counting(store: SessionSnapshotStore) {
  const counts = { load: 0, loadMany: 0, loadAll: 0 };
  const wrapped: SessionSnapshotStore = {
    ...store,
    loader(sessionId) {
      const inner = store.loader(sessionId);
      return {
        load: (seq) => (counts.load++, inner.load(seq)),
        loadMany: (seqs) => (counts.loadMany += seqs.length, inner.loadMany(seqs)),
        loadAll: () => (counts.loadAll++, inner.loadAll()),
      };
    },
  };
  return { store: wrapped, counts };
}

function expectSameView(actual: SessionView, expected: SessionView) {
  expect(actual.version).toBe(expected.version);
  expect(actual.leafId).toBe(expected.leafId);
  expect(actual.name).toBe(expected.name);
  expect(actual.getStats()).toEqual(expected.getStats());
  for (const entry of expected.getEntries()) {
    expect(actual.buildContext({ leafId: entry.id })).toEqual(expected.buildContext({ leafId: entry.id }));
    expect(actual.getLabel(entry.id)).toBe(expected.getLabel(entry.id));
    expect(actual.getChildren(entry.id)).toEqual(expected.getChildren(entry.id));
  }
  expect(actual.getEntries()).toEqual(expected.getEntries());
  expect(actual.getTree()).toEqual(expected.getTree());
}

describe("session snapshots (checkpoints)", () => {
  it("restores a checkpoint plus the log's tail exactly like folding the whole stream, reading content lazily", async () => {
    const log = withoutIndex(createSqliteEventLog({ path: join(dir, "a.db") }));
    const raw = createSqliteSnapshotStore({ path: join(dir, "a.snapshots.db") });
    const { store, counts } = counting(raw);
    const plain = createSessionRepository({ log });
    const withSnapshots = createSessionRepository({ log, snapshots: store, checkpointEvery: 1 });

    const session = await plain.create({ id: "s" });
    const entries = await session.appendEntries(Array.from({ length: 40 }, (_, index) => ({ type: "message", message: index % 2 ? assistant(`a${index}`) : user(`u${index}`) })));
    await session.appendEntry({ type: "label", targetId: entries[3].id, label: "three" });
    await session.appendEntry({ type: "compaction", summary: "S", firstKeptEntryId: entries[36].id, tokensBefore: 99 });
    const afterCompaction = await session.appendEntry({ type: "message", message: user("after compaction") });
    await session.moveLeaf(entries[20].id);
    await session.appendEntry({ type: "message", message: user("branch") });

    // First open folds the log and writes the checkpoint.
    await withSnapshots.open("s");
    expect(raw.read("s")?.entryCount).toBe(44);

    // More events after the checkpoint.
    await session.appendEntry({ type: "session_info", name: "snap" });
    await session.moveLeaf(afterCompaction.id);
    await session.appendEntry({ type: "message", message: assistant("tail", "m2") });

    const restored = await withSnapshots.open("s");
    // Building the leaf's context read only what it needs: the compaction, the kept entries
    // (36..39) and the entry after it; not the 36 compacted ones, not the other branch.
    expect(restored.view.buildContext().messages).toHaveLength(7);
    expect(counts.loadAll).toBe(0);
    expect(counts.load).toBe(6);
    const reference = await plain.open("s");
    expectSameView(restored.view, reference.view);
    // The tail was checkpointed incrementally.
    expect(raw.read("s")).toMatchObject({ entryCount: 46, snapshot: { version: reference.view.version } });

    // Writes through a restored handle work and are seen by the next open.
    await restored.appendEntry({ type: "message", message: user("more") });
    expectSameView((await withSnapshots.open("s")).view, (await plain.open("s")).view);
    raw.close();
    await log.close();
  });

  it("ignores a snapshot of a deleted and re-created session, and deletes snapshots with the session", async () => {
    const log = withoutIndex(createSqliteEventLog({ path: join(dir, "b.db") }));
    const snapshots = createSqliteSnapshotStore({ path: join(dir, "b.snapshots.db") });
    const repo = createSessionRepository({ log, snapshots, checkpointEvery: 1 });
    const first = await repo.create({ id: "same" });
    await first.appendEntry({ type: "message", message: user("old secret") });
    await repo.open("same");
    expect(snapshots.read("same")).toBeDefined();
    await repo.delete("same");
    expect(snapshots.read("same")).toBeUndefined();
    snapshots.close();
    const file = readFileSync(join(dir, "b.snapshots.db"));
    expect(file.includes(Buffer.from("old secret"))).toBe(false);

    // A stale snapshot (written by an older process) of a re-created session is not used.
    const again = createSqliteSnapshotStore({ path: join(dir, "b.snapshots.db") });
    const second = await createSessionRepository({ log }).create({ id: "same" });
    await second.appendEntry({ type: "message", message: user("new") });
    const other = await createSessionRepository({ log }).create({ id: "donor" });
    await other.appendEntries([{ type: "message", message: user("x") }, { type: "message", message: user("y") }, { type: "message", message: user("z") }]);
    const donor = await createSessionRepository({ log, snapshots: again, checkpointEvery: 1 }).open("donor");
    const stale = again.read("donor")!;
    again.write("same", { ...stale.snapshot, info: { ...stale.snapshot.info, sessionId: "same" } }, "not-the-first-event", 0, donor.view.getEntries());
    const opened = await createSessionRepository({ log, snapshots: again }).open("same");
    expect(opened.view.buildContext().messages.map((message) => (message as { content: string }).content)).toEqual(["new"]);
    expect(again.read("same")).toBeUndefined();
    again.close();
    await log.close();
  });

  it("refuses a file of another snapshot schema version without touching it", () => {
    const path = join(dir, "foreign.db");
    const db = new Database(path);
    db.exec("CREATE TABLE t (x); PRAGMA user_version = 7;");
    db.close();
    const before = readFileSync(path);
    expect(() => createSqliteSnapshotStore({ path })).toThrow(LogSchemaError);
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

describe("session snapshots: bulk reads", () => {
  it("reads a long context's entries in one range read, and equals folding the log", async () => {
    const log = withoutIndex(createSqliteEventLog({ path: join(dir, "c.db") }));
    const raw = createSqliteSnapshotStore({ path: join(dir, "c.snapshots.db") });
    const { store, counts } = counting(raw);
    const plain = createSessionRepository({ log });
    const session = await plain.create({ id: "long" });
    const first = await session.appendEntries(Array.from({ length: 300 }, (_, index) => ({ type: "message", message: index % 2 ? assistant(`a${index}`) : user(`u${index}`) })));
    await session.appendEntry({ type: "compaction", summary: "S", firstKeptEntryId: first[250].id, tokensBefore: 1 });
    await session.appendEntries(Array.from({ length: 100 }, (_, index) => ({ type: "message", message: user(`after ${index}`) })));
    await createSessionRepository({ log, snapshots: store, checkpointEvery: 1 }).open("long");
    const restored = await createSessionRepository({ log, snapshots: store }).open("long");
    const context = restored.view.buildContext();
    expect(context).toEqual((await plain.open("long")).view.buildContext());
    expect(context.messages).toHaveLength(1 + 50 + 100);
    // 150 message entries plus the compaction entry, each read once; almost all in the bulk read.
    expect(counts.loadMany + counts.load).toBe(151);
    expect(counts.load).toBeLessThanOrEqual(3);
    expect(counts.loadAll).toBe(0);
    // Asking for everything reads the rest in one pass.
    expect(restored.view.getEntries()).toEqual((await plain.open("long")).view.getEntries());
    expect(counts.loadAll).toBe(1);
    raw.close();
    await log.close();
  });
});

describe("session snapshots: skeleton encoding", () => {
  it("round-trips ids and timestamps holding the column separator or empty strings", async () => {
    const log = withoutIndex(createSqliteEventLog({ path: join(dir, "d.db") }));
    const snapshots = createSqliteSnapshotStore({ path: join(dir, "d.snapshots.db") });
    const plain = createSessionRepository({ log });
    const odd = "a\u0001b";
    await plain.importEntries({
      id: "odd",
      entries: [
        { type: "message", id: odd, parentId: null, timestamp: "", message: user("x") },
        { type: "message", id: "\u0000", parentId: odd, timestamp: "2026-01-01T00:00:00.000Z", message: user("y") },
        { type: "custom", id: "c", parentId: "", timestamp: "t", customType: "k" },
      ],
    });
    await createSessionRepository({ log, snapshots, checkpointEvery: 1 }).open("odd");
    const stored = snapshots.read("odd")!;
    expect(stored.snapshot.skeleton.ids).toEqual([odd, "\u0000", "c"]);
    expect(stored.snapshot.skeleton.parents).toEqual([null, odd, ""]);
    expect(stored.snapshot.skeleton.timestamps).toEqual(["", "2026-01-01T00:00:00.000Z", "t"]);
    const restored = await createSessionRepository({ log, snapshots }).open("odd");
    expectSameView(restored.view, (await plain.open("odd")).view);
    snapshots.close();
    await log.close();
  });
});

describe("session snapshots: stored context plan", () => {
  it("builds the checkpointed leaf's context from the stored plan, without walking the path, and equals a fresh build", async () => {
    const log = withoutIndex(createSqliteEventLog({ path: join(dir, "e.db") }));
    const snapshots = createSqliteSnapshotStore({ path: join(dir, "e.snapshots.db") });
    const plain = createSessionRepository({ log });
    const session = await plain.create({ id: "plan" });
    const first = await session.appendEntries(Array.from({ length: 60 }, (_, index) => ({ type: "message", message: index % 2 ? assistant(`a${index}`) : user(`u${index}`) })));
    await session.appendEntries([
      { type: "thinking_level_change", thinkingLevel: "high" },
      { type: "compaction", summary: "S", firstKeptEntryId: first[50].id, tokensBefore: 3 },
      { type: "future_kind", payload: 1 },
      { type: "message", message: user("after") },
    ]);
    await createSessionRepository({ log, snapshots, checkpointEvery: 1 }).open("plan");
    expect(snapshots.read("plan")?.snapshot.contextPlan).toMatchObject({ leafId: session.view.leafId, emitIds: expect.any(Array) });
    const restored = await createSessionRepository({ log, snapshots }).open("plan");
    const context = restored.view.buildContext();
    expect(internals(restored.view).contexts.stats.seededBuilds).toBe(1);
    expect(context).toEqual((await plain.open("plan")).view.buildContext());
    expect(context.thinkingLevel).toBe("high");
    expect(context.diagnostics.map((diagnostic) => diagnostic.kind)).toEqual(["unknown_entry"]);
    // One more entry extends the seeded state incrementally.
    await restored.appendEntry({ type: "message", message: assistant("next") });
    expect(restored.view.buildContext()).toEqual((await plain.open("plan")).view.buildContext());
    expect(internals(restored.view).contexts.stats.extensions).toBe(1);
    snapshots.close();
    await log.close();
  });
});
