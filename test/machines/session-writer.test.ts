/**
 * The session writer over a real session (in-memory log): order, one append per
 * tick (group commit), delta coalescing, entry chaining, and poisoning on a refused append.
 */
import { describe, expect, it } from "vitest";
import { ExpectedVersionConflictError } from "../../src/core/errors.ts";
import type { NewEvent } from "../../src/store/event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSessionWriter } from "../../src/machines/session-writer.ts";
import { messageEntryEvent, runEvent } from "../../src/machines/run-records.ts";
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
});
