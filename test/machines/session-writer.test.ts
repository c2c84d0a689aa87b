/**
 * The session writer over a real session (in-memory log): order, one append per
 * tick (group commit), delta coalescing, entry chaining, poisoning on a refused append, and the
 * order and failure isolation of prepared writes (`appendEntries` / `appendEvents` / `moveLeaf`)
 * made by different callers in the same tick.
 */
import { describe, expect, it } from "vitest";
import { EntryNotFoundError, ExpectedVersionConflictError } from "../../src/core/errors.ts";
import type { NewEvent } from "../../src/store/event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSessionWriter } from "../../src/machines/session-writer.ts";
import { messageEntryEvent, runEvent } from "../../src/machines/run-records.ts";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { memorySession, sessionEvents } from "./helpers.ts";

const delta = (text: string, contentIndex = 0): NewEvent =>
  runEvent({ runId: "r" }, "message.delta", { messageId: "m1", kind: "text", contentIndex, delta: text });

describe("createSessionWriter", () => {
  it("commits one tick in one append, in push order, coalescing deltas of the same block", async () => {
    const { log, session } = await memorySession();
    let appends = 0;
    const original = session.appendEvents.bind(session);
    session.appendEvents = (events) => {
      appends += 1;
      return original(events);
    };
    const writer = createSessionWriter({ session });
    writer.push(runEvent({ runId: "r" }, "message.started", { messageId: "m1", role: "assistant" }));
    writer.push(delta("Hel"), delta("lo"), delta(" world"), delta("!", 1), delta("?", 1));
    writer.push(runEvent({ runId: "r" }, "turn.started", { runId: "r", turnId: "t", index: 0 }));
    await writer.flush();
    expect(appends).toBe(1);
    const stored = (await sessionEvents(log, session.id)).slice(1);
    expect(stored.map((event) => event.type)).toEqual(["message.started", "message.delta", "message.delta", "turn.started"]);
    expect(stored.filter((e) => e.type === "message.delta").map((e) => (e.data as { delta: string }).delta)).toEqual(["Hello world", "!?"]);
    writer.push(delta("next tick"));
    await writer.flush();
    expect(appends).toBe(2);
  });

  it("commit() resolves only once the append holding the events pushed before it has returned", async () => {
    const { log, session } = await memorySession();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const original = session.appendEvents.bind(session);
    let appends = 0;
    session.appendEvents = async (events) => {
      appends += 1;
      if (appends === 2) await gate; // the second group commit stalls
      return original(events);
    };
    const writer = createSessionWriter({ session });
    writer.push(runEvent({ runId: "r" }, "run.started", { runId: "r", kind: "prompt" }));
    const first = writer.commit();
    await first;
    const stored = await sessionEvents(log, session.id);
    expect(stored.map((event) => event.type)).toContain("run.started");
    writer.push(delta("later"));
    const second = writer.commit();
    let secondDone = false;
    void second.then(() => (secondDone = true));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(secondDone).toBe(false);
    release();
    await second;
    expect(secondDone).toBe(true);
  });

  it("commit() rejects with the failure when the log refused the events", async () => {
    const { log, session } = await memorySession();
    const other = await createSessionRepository({ log }).open(session.id);
    await other.appendEntry({ type: "session_info", name: "someone else" });
    const writer = createSessionWriter({ session });
    writer.push(runEvent({ runId: "r" }, "run.started", { runId: "r", kind: "prompt" }));
    await expect(writer.commit()).rejects.toBeInstanceOf(ExpectedVersionConflictError);
  });

  it("chains entries from the leaf at commit time and re-draws a colliding id", async () => {
    const { session } = await memorySession();
    const [first] = await session.appendEntries([{ type: "message", message: { role: "user", content: "a", timestamp: 1 } }]);
    const writer = createSessionWriter({ session });
    const collide = messageEntryEvent({ runId: "r" }, { role: "user", content: "b", timestamp: 2 }, first.id);
    writer.push(collide, runEvent({ runId: "r" }, "message.ended", { messageId: "m", role: "user", entryId: first.id }));
    await writer.flush();
    const entries = session.view.getEntries();
    expect(entries).toHaveLength(2);
    expect(entries[1].id).not.toBe(first.id);
    expect(entries[1].parentId).toBe(first.id);
  });

  it("a refused append poisons the writer: nothing more is written and onError is called once", async () => {
    const { log, repo, session } = await memorySession();
    const other = await createSessionRepository({ log }).open(session.id);
    void repo;
    await other.appendEntry({ type: "session_info", name: "someone else" });
    const errors: unknown[] = [];
    const writer = createSessionWriter({ session, onError: (error) => errors.push(error) });
    writer.push(runEvent({ runId: "r" }, "run.started", { runId: "r", kind: "prompt" }));
    await writer.flush();
    writer.push(runEvent({ runId: "r" }, "run.ended", { runId: "r", status: "done", turns: 1 }));
    await writer.flush();
    expect(errors).toHaveLength(1);
    expect(ExpectedVersionConflictError.isInstance(writer.failure)).toBe(true);
    const types = (await sessionEvents(log, session.id)).map((e) => e.type);
    expect(types).toEqual(["session.created", "entry.appended"]);
  });

  it("prepared writes of different callers in the same tick land in call order, after what was pushed before them, even when the first is slow", async () => {
    const { log, session } = await memorySession();
    const [root] = await session.appendEntries([{ type: "message", message: { role: "user", content: "a", timestamp: 1 } }]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const original = session.appendEntries.bind(session);
    let slow = true;
    session.appendEntries = async (entries, options) => {
      if (slow) {
        slow = false;
        await gate; // the first caller's append stalls: the others must not overtake it
      }
      return original(entries, options);
    };
    const writer = createSessionWriter({ session });
    writer.push(runEvent({ runId: "r" }, "run.started", { runId: "r", kind: "prompt" }));
    const order: string[] = [];
    // Four callers, one tick.
    const calls = [
      writer.appendEntries([{ type: "label", targetId: root.id, label: "first" }]).then(() => order.push("label")),
      writer.moveLeaf(null).then(() => order.push("move")),
      writer.appendEvents([{ type: "hook.applied", data: { hook: "context", changes: ["messages"] } }]).then(() => order.push("hook")),
      writer.appendEntries([{ type: "session_info", name: "fourth" }]).then(() => order.push("name")),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    release();
    await Promise.all(calls);
    expect(order).toEqual(["label", "move", "hook", "name"]);
    const stored = (await sessionEvents(log, session.id)).slice(2);
    const described = stored.map((event) =>
      isEventOfType(event, "entry.appended") ? `entry:${event.data.entry.type}` : event.type,
    );
    expect(described).toEqual(["run.started", "entry:label", "leaf.moved", "hook.applied", "entry:session_info"]);
    expect(session.view.getEntries().at(-1)).toMatchObject({ type: "session_info", parentId: null });
  });

  it("a prepared write that fails on its input is reported to its caller only: another caller's write of the same tick lands", async () => {
    const { log, session } = await memorySession();
    const errors: unknown[] = [];
    const writer = createSessionWriter({ session, onError: (error) => errors.push(error) });
    const moved = writer.moveLeaf("no-such-entry");
    const appended = writer.appendEntries([{ type: "session_info", name: "kept" }]);
    const events = writer.appendEvents([{ type: "hook.failed", data: { hook: "context", error: "boom" } }]);
    await expect(moved).rejects.toBeInstanceOf(EntryNotFoundError);
    expect(await appended).toMatchObject([{ type: "session_info", name: "kept" }]);
    expect((await events).map((event) => event.type)).toEqual(["hook.failed"]);
    expect(writer.failure).toBeUndefined();
    expect(errors).toEqual([]);
    const types = (await sessionEvents(log, session.id)).map((event) => event.type);
    expect(types).toEqual(["session.created", "entry.appended", "hook.failed"]);
  });

  it("a refused prepared write is reported to its caller, and every caller queued behind it gets the refusal too (none is dropped silently)", async () => {
    const { log, session } = await memorySession();
    const other = await createSessionRepository({ log }).open(session.id);
    await other.appendEntry({ type: "session_info", name: "someone else" });
    const errors: unknown[] = [];
    const writer = createSessionWriter({ session, onError: (error) => errors.push(error) });
    const results = await Promise.allSettled([
      writer.appendEntries([{ type: "session_info", name: "mine" }]),
      writer.moveLeaf(null),
      writer.appendEvents([{ type: "hook.failed", data: { hook: "context", error: "boom" } }]),
    ]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected", "rejected"]);
    for (const result of results) expect(ExpectedVersionConflictError.isInstance((result as PromiseRejectedResult).reason)).toBe(true);
    expect(errors).toHaveLength(1);
    const types = (await sessionEvents(log, session.id)).map((event) => event.type);
    expect(types).toEqual(["session.created", "entry.appended"]);
  });
});
