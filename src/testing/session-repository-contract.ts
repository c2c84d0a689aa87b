/**
 * The session-repository contract suite, exported so that any `EventLog` implementation can check that sessions (trees of entries with a movable
 * leaf, labels, forks and deletes) work on it. Like the event-log suite, it takes the runner's functions instead of importing a framework.
 */
import { firstValueFrom, take, toArray } from "../core/rx.ts";
import { EntryNotFoundError, EventSchemaError, ExpectedVersionConflictError, SessionNotFoundError } from "../core/errors.ts";
import type { AgentMessage } from "../core/messages.ts";
import type { EventLog } from "../store/event-log.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import { createSessionRepository } from "../store/session-repository.ts";
import { type ContractTestApi, freshLogs } from "./contract-api.ts";

/** Creates a fresh, empty log (with the default event registry) for one test. */
export type SessionLogFactory = () => EventLog | Promise<EventLog>;

/** A user message (test fixture). */
export const user = (text: string, timestamp = Date.now()): AgentMessage => ({ role: "user", content: text, timestamp });
/** A finished assistant text message (test fixture). */
export const assistant = (text: string, timestamp = Date.now()): AgentMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "test",
  provider: "p",
  model: "m",
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
  stopReason: "stop",
  timestamp,
});

/** Whether `promise` rejects with an error that `is` accepts (false when it resolves). */
async function rejection(promise: Promise<unknown>, is: (error: unknown) => boolean): Promise<boolean> {
  try {
    await promise;
    return false;
  } catch (error) {
    return is(error);
  }
}

/**
 * Runs the session-repository contract suite over logs from `factory`, with your runner's test functions.
 *
 * Each test gets a fresh log and closes it afterwards. The suite checks creating, appending and reopening on the leaf the log records, the session
 * list's order and fields, stale handles (`ExpectedVersionConflictError`, nothing written), serialized concurrent writes of one handle,
 * schema-invalid entries (`EventSchemaError`), unknown parents (`EntryNotFoundError`), physical deletion (`SessionNotFoundError` afterwards), forks
 * with labels copied as pi copies them, and catch-up-then-live session events. One `describe` block, `session repository contract: <name>`.
 * @param name - shown in the describe block's title.
 * @param factory - creates one fresh, empty log per test (the default event registry suffices).
 * @param api - `describe`, `it`, `expect` and `afterEach` from vitest (or a runner with the same API).
 * @example
 * import { afterEach, describe, expect, it } from "vitest";
 * import { runSessionRepositoryContract } from "arbor-agent/testing";
 * import { createMemoryEventLog } from "arbor-agent/log";
 *
 * runSessionRepositoryContract("memory", () => createMemoryEventLog(), { describe, it, expect, afterEach });
 */
export function runSessionRepositoryContract(name: string, factory: SessionLogFactory, api: ContractTestApi): void {
  const { describe, it, expect, afterEach } = api;
  describe(`session repository contract: ${name}`, () => {
    const fresh = freshLogs(factory, afterEach);

    it("creates, appends, reopens on the leaf the log says, and lists newest first", async () => {
      const log = await fresh();
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
    });

    it("gives a stale handle ExpectedVersionConflictError and writes nothing", async () => {
      const log = await fresh();
      const repo = createSessionRepository({ log });
      const session = await repo.create({ id: "s-stale" });
      const other = await repo.open("s-stale");
      await session.appendEntry({ type: "message", message: user("first") });
      const before = await log.streamVersion(sessionStreamId("s-stale"));
      expect(await rejection(other.appendEntry({ type: "message", message: user("second") }), ExpectedVersionConflictError.isInstance)).toBe(true);
      expect(await log.streamVersion(sessionStreamId("s-stale"))).toBe(before);
      expect(other.view.getEntries()).toEqual([]);
      // After refresh the same handle writes fine.
      expect(await other.refresh()).toBe(1);
      const entry = await other.appendEntry({ type: "message", message: user("second") });
      expect(entry.parentId).toBe(session.view.leafId);
    });

    it("serializes concurrent writes of one handle instead of conflicting", async () => {
      const log = await fresh();
      const repo = createSessionRepository({ log });
      const session = await repo.create();
      const written = await Promise.all([1, 2, 3, 4].map((n) => session.appendEntry({ type: "message", message: user(`m${n}`) })));
      expect(new Set(written.map((entry) => entry.id)).size).toBe(4);
      expect(session.view.getBranch().map((entry) => entry.id)).toEqual(written.map((entry) => entry.id));
    });

    it("rejects an entry that fails its schema and writes nothing", async () => {
      const log = await fresh();
      const repo = createSessionRepository({ log });
      const session = await repo.create({ id: "s-bad" });
      const version = session.view.version;
      const entries = session.appendEntries([{ type: "message", message: user("ok") }, { type: "message", message: { role: "user" } }]);
      expect(await rejection(entries, EventSchemaError.isInstance)).toBe(true);
      expect(await log.streamVersion(sessionStreamId("s-bad"))).toBe(version);
      expect(session.view.version).toBe(version);
      expect((await repo.open("s-bad")).view.getEntries()).toEqual([]);
    });

    it("refuses unknown parents and leaf targets with EntryNotFoundError", async () => {
      const log = await fresh();
      const session = await createSessionRepository({ log }).create();
      expect(await rejection(session.appendEntry({ type: "message", parentId: "nope0000", message: user("x") }), EntryNotFoundError.isInstance)).toBe(true);
      expect(await rejection(session.moveLeaf("nope0000"), EntryNotFoundError.isInstance)).toBe(true);
      expect(session.view.version).toBe(1);
    });

    it("deletes a session physically", async () => {
      const log = await fresh();
      const repo = createSessionRepository({ log });
      const session = await repo.create({ id: "s-del" });
      await session.appendEntry({ type: "message", message: user("secret") });
      await repo.delete("s-del");
      expect(await log.readStream(sessionStreamId("s-del"))).toEqual([]);
      expect((await log.readAll()).some((event) => JSON.stringify(event.data).includes("secret"))).toBe(false);
      expect(await rejection(repo.open("s-del"), SessionNotFoundError.isInstance)).toBe(true);
      expect(await rejection(repo.delete("s-del"), SessionNotFoundError.isInstance)).toBe(true);
      expect(await repo.list()).toEqual([]);
    });

    it("forks the path to an entry, recording the parent and copying labels like pi", async () => {
      const log = await fresh();
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
      expect(await rejection(repo.fork("s-src", { entryId: "zzzzzzzz" }), EntryNotFoundError.isInstance)).toBe(true);
      expect(await rejection(repo.fork("missing"), SessionNotFoundError.isInstance)).toBe(true);
    });

    it("streams catch-up then live events of the session", async () => {
      const log = await fresh();
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
    });
  });
}
