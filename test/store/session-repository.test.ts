import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstValueFrom, take, toArray } from "rxjs";
import { afterAll, describe, expect, it } from "vitest";
import { EntryNotFoundError, EventSchemaError, ExpectedVersionConflictError, SessionNotFoundError } from "../../src/core/errors.ts";
import type { AgentMessage } from "../../src/core/messages.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createMemoryEventLog } from "../../src/store/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite-event-log.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-repo-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const user = (text: string, timestamp = Date.now()): AgentMessage => ({ role: "user", content: text, timestamp });
const assistant = (text: string, timestamp = Date.now()): AgentMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "test",
  provider: "p",
  model: "m",
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
  stopReason: "stop",
  timestamp,
});

let counter = 0;
const logs: [string, () => EventLog][] = [
  ["memory", () => createMemoryEventLog()],
  ["sqlite", () => createSqliteEventLog({ path: join(dir, `repo-${counter++}.db`) })],
];

describe.each(logs)("session repository on the %s log", (_name, makeLog) => {
  it("creates, appends, reopens on the leaf the log says, and lists newest first", async () => {
    const log = makeLog();
    const repo = createSessionRepository({ log });
    const first = await repo.create({ id: "s-one", cwd: "/w", metadata: { team: "a" }, tenant: "t1" });
    const [u1, a1] = await first.appendEntries([{ type: "message", message: user("hello there", 1_000) }, { type: "message", message: assistant("hi", 2_000) }]);
    expect(u1.id).toMatch(/^[0-9a-f]{8}$/);
    expect(a1.parentId).toBe(u1.id);
    const second = await repo.create({ id: "s-two", cwd: "/w" });
    await second.appendEntry({ type: "message", message: user("later", 5_000) });
    await second.appendEntry({ type: "session_info", name: "  Second  " });

    // The leaf is restored from leaf.moved, not "the last entry". (Moved on a later millisecond
    // than s-two's last append, so the list's order, by the last append, is known.)
    const secondDone = Date.now();
    while (Date.now() <= secondDone);
    await first.moveLeaf(u1.id);
    const reopened = await repo.open("s-one");
    expect(reopened.view.leafId).toBe(u1.id);
    expect(reopened.view.info).toMatchObject({ sessionId: "s-one", cwd: "/w", metadata: { team: "a" }, tenant: "t1" });
    expect(reopened.view.getEntries().map((entry) => entry.id)).toEqual([u1.id, a1.id]);

    // Newest first by the last append (the leaf move), not by `modified` (pi's latest message time).
    const rows = await repo.list();
    expect(rows.map((row) => row.id)).toEqual(["s-one", "s-two"]);
    expect(rows[1]).toMatchObject({ name: "Second", messageCount: 1, firstMessage: "later", modified: new Date(5_000).toISOString(), tenant: "default" });
    expect(rows[0]).toMatchObject({ messageCount: 2, firstMessage: "hello there", modified: new Date(2_000).toISOString(), tenant: "t1" });
    await log.close();
  });

  it("gives a stale handle ExpectedVersionConflictError and writes nothing", async () => {
    const log = makeLog();
    const repo = createSessionRepository({ log });
    const session = await repo.create({ id: "s-stale" });
    const other = await repo.open("s-stale");
    await session.appendEntry({ type: "message", message: user("first") });
    const before = await log.streamVersion(sessionStreamId("s-stale"));
    await expect(other.appendEntry({ type: "message", message: user("second") })).rejects.toSatisfy(ExpectedVersionConflictError.isInstance);
    expect(await log.streamVersion(sessionStreamId("s-stale"))).toBe(before);
    expect(other.view.getEntries()).toEqual([]);
    // After refresh the same handle writes fine.
    expect(await other.refresh()).toBe(1);
    const entry = await other.appendEntry({ type: "message", message: user("second") });
    expect(entry.parentId).toBe(session.view.leafId);
    await log.close();
  });

  it("serializes concurrent writes of one handle instead of conflicting", async () => {
    const log = makeLog();
    const repo = createSessionRepository({ log });
    const session = await repo.create();
    const written = await Promise.all([1, 2, 3, 4].map((n) => session.appendEntry({ type: "message", message: user(`m${n}`) })));
    expect(new Set(written.map((entry) => entry.id)).size).toBe(4);
    expect(session.view.getBranch().map((entry) => entry.id)).toEqual(written.map((entry) => entry.id));
    await log.close();
  });

  it("rejects an entry that fails its schema and writes nothing", async () => {
    const log = makeLog();
    const repo = createSessionRepository({ log });
    const session = await repo.create({ id: "s-bad" });
    const version = session.view.version;
    await expect(
      session.appendEntries([{ type: "message", message: user("ok") }, { type: "message", message: { role: "user" } }]),
    ).rejects.toSatisfy(EventSchemaError.isInstance);
    expect(await log.streamVersion(sessionStreamId("s-bad"))).toBe(version);
    expect(session.view.version).toBe(version);
    expect((await repo.open("s-bad")).view.getEntries()).toEqual([]);
    await log.close();
  });

  it("refuses unknown parents and leaf targets with EntryNotFoundError", async () => {
    const log = makeLog();
    const session = await createSessionRepository({ log }).create();
    await expect(session.appendEntry({ type: "message", parentId: "nope0000", message: user("x") })).rejects.toSatisfy(EntryNotFoundError.isInstance);
    await expect(session.moveLeaf("nope0000")).rejects.toSatisfy(EntryNotFoundError.isInstance);
    expect(session.view.version).toBe(1);
    await log.close();
  });

  it("deletes a session physically", async () => {
    const log = makeLog();
    const repo = createSessionRepository({ log });
    const session = await repo.create({ id: "s-del" });
    await session.appendEntry({ type: "message", message: user("secret") });
    await repo.delete("s-del");
    expect(await log.readStream(sessionStreamId("s-del"))).toEqual([]);
    expect((await log.readAll()).some((event) => JSON.stringify(event.data).includes("secret"))).toBe(false);
    await expect(repo.open("s-del")).rejects.toSatisfy(SessionNotFoundError.isInstance);
    await expect(repo.delete("s-del")).rejects.toSatisfy(SessionNotFoundError.isInstance);
    expect(await repo.list()).toEqual([]);
    await log.close();
  });

  it("forks the path to an entry, recording the parent and copying labels like pi", async () => {
    const log = makeLog();
    const repo = createSessionRepository({ log });
    const source = await repo.create({ id: "s-src", cwd: "/src" });
    const [u1, a1, u2] = await source.appendEntries([
      { type: "message", message: user("one") },
      { type: "message", message: assistant("two") },
      { type: "message", message: user("three") },
    ]);
    await source.appendEntry({ type: "label", targetId: u1.id, label: "start" });
    await source.appendEntry({ type: "label", targetId: u2.id, label: "not on the fork path" });
    await source.appendEntry({ type: "label", targetId: u1.id, label: "renamed" });
    const fork = await repo.fork("s-src", { entryId: a1.id, newId: "s-fork" });
    expect(fork.view.info).toMatchObject({ parentSessionId: "s-src", parentEntryId: a1.id, cwd: "/src" });
    const entries = fork.view.getEntries();
    expect(entries.slice(0, 2).map((entry) => entry.id)).toEqual([u1.id, a1.id]);
    expect(entries).toHaveLength(3);
    expect(entries[2]).toMatchObject({ type: "label", parentId: a1.id, targetId: u1.id, label: "renamed" });
    expect(fork.view.getLabel(u1.id)).toBe("renamed");
    expect(fork.view.leafId).toBe(entries[2].id);
    expect(fork.view.buildContext().messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect((await repo.list()).find((row) => row.id === "s-fork")?.parentSessionId).toBe("s-src");
    await expect(repo.fork("s-src", { entryId: "zzzzzzzz" })).rejects.toSatisfy(EntryNotFoundError.isInstance);
    await expect(repo.fork("missing")).rejects.toSatisfy(SessionNotFoundError.isInstance);
    await log.close();
  });

  it("streams catch-up then live events of the session", async () => {
    const log = makeLog();
    const repo = createSessionRepository({ log });
    const session = await repo.create();
    await session.appendEntry({ type: "message", message: user("before") });
    const received = firstValueFrom(session.events$().pipe(take(4), toArray()));
    await session.appendEntry({ type: "message", message: user("after") });
    await session.appendEvents([{ type: "run.started", data: { runId: "r1", kind: "prompt" } }]);
    const events = await received;
    expect(events.map((event) => event.version)).toEqual([1, 2, 3, 4]);
    expect(events.map((event) => event.type)).toEqual(["session.created", "entry.appended", "entry.appended", "run.started"]);
    // The run event advanced the view's version without touching the tree.
    expect(session.view.version).toBe(4);
    expect(session.view.getEntries()).toHaveLength(2);
    await log.close();
  });
});

describe("session repository on a SQLite file", () => {
  it("survives closing and reopening the file: entries, leaf, labels, name", async () => {
    const path = join(dir, "reopen.db");
    const log = createSqliteEventLog({ path });
    const session = await createSessionRepository({ log }).create({ id: "persist" });
    const [u1] = await session.appendEntries([{ type: "message", message: user("a") }, { type: "message", message: assistant("b") }]);
    await session.appendEntry({ type: "label", targetId: u1.id, label: "here" });
    await session.appendEntry({ type: "session_info", name: "kept" });
    await session.moveLeaf(u1.id);
    await log.close();
    const again = createSqliteEventLog({ path });
    const reopened = await createSessionRepository({ log: again }).open("persist");
    expect(reopened.view.leafId).toBe(u1.id);
    expect(reopened.view.getLabel(u1.id)).toBe("here");
    expect(reopened.view.name).toBe("kept");
    expect(reopened.view.buildContext().messages).toEqual([user("a", (u1 as { message: AgentMessage }).message.timestamp)]);
    await again.close();
  });
});
