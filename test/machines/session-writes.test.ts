/**
 * Issue 10 item 2: writes that are not a run's own (compaction and branch-summary entries,
 * summary intents, custom entries and messages, resources, the CLI's endpoint record) go
 * through the session's one writer: after everything pushed before them, never racing its
 * chaining, and a refused one rejects and poisons the writer instead of being swallowed.
 */
import { describe, expect, it } from "vitest";
import { EntryNotFoundError, ExpectedVersionConflictError } from "../../src/core/errors.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { messageEntryEvent, runEvent } from "../../src/machines/run-records.ts";
import { sessionActorOf } from "../../src/machines/session-actor.ts";
import { createSessionWriter } from "../../src/machines/session-writer.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import type { NewEvent } from "../../src/store/event-log.ts";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { fakeModel, memorySession, sessionEvents, sqliteSession } from "./helpers.ts";

const user = (text: string) => ({ role: "user" as const, content: text, timestamp: Date.now() });

describe("prepared appends through the session writer", () => {
  it("come after everything pushed before them, and their entries chain after the pushed ones", async () => {
    const { log, session } = await memorySession();
    const writer = createSessionWriter({ session });
    writer.push(runEvent({ runId: "r" }, "turn.started", { runId: "r", turnId: "t", index: 0 }), messageEntryEvent({ runId: "r" }, user("first")));
    // Not awaited: the prepared append must wait for the pushed events (same tick).
    const custom = writer.appendEntries([{ type: "custom", customType: "note", data: 1 }]);
    const [entry] = await custom;
    writer.push(messageEntryEvent({ runId: "r" }, user("after")));
    await writer.flush();
    const events = (await sessionEvents(log, session.id)).slice(1);
    expect(events.map((event) => event.type)).toEqual(["turn.started", "entry.appended", "entry.appended", "entry.appended"]);
    const entries = session.view.getBranch();
    expect(entries.map((item) => item.type)).toEqual(["message", "custom", "message"]);
    expect(entry.parentId).toBe(entries[0].id);
    expect(entries[2].parentId).toBe(entry.id);
  });

  it("a refused append rejects with the log's error and poisons the writer; bad input rejects without poisoning", async () => {
    const { log, session } = await memorySession();
    const other = await createSessionRepository({ log }).open(session.id);
    const errors: unknown[] = [];
    const writer = createSessionWriter({ session, onError: (error) => errors.push(error) });
    await expect(writer.appendEntries([{ type: "custom", customType: "x", parentId: "nope" }])).rejects.toBeInstanceOf(EntryNotFoundError);
    expect(writer.failure).toBeUndefined();
    await other.appendEntry({ type: "session_info", name: "written elsewhere" });
    await expect(writer.appendEvents([runEvent({ runId: "r" }, "turn.started", { runId: "r", turnId: "t", index: 0 })])).rejects.toBeInstanceOf(ExpectedVersionConflictError);
    expect(writer.failure).toBeInstanceOf(ExpectedVersionConflictError);
    expect(errors).toHaveLength(1);
    // Nothing more is written: neither pushes nor prepared appends.
    writer.push(messageEntryEvent({ runId: "r" }, user("dropped")));
    await writer.flush();
    await expect(writer.moveLeaf(null)).rejects.toBeInstanceOf(ExpectedVersionConflictError);
    expect((await sessionEvents(log, session.id)).map((event) => event.type)).toEqual(["session.created", "entry.appended"]);
  });

  it("the agent's slot writes through the agent's writer: a write the log refuses is reported to its caller and fails nothing silently", async () => {
    const { log, session } = await memorySession();
    const agent = createAgent({ session, model: fakeModel([{ text: "hi" }]) });
    await agent.whenReady();
    expect(sessionActorOf(session).writes).toBe(agent.writes);
    const [entry] = await agent.writes.appendEntries([{ type: "custom", customType: "note" }]);
    expect(session.view.leafId).toBe(entry.id);
    const other = await createSessionRepository({ log }).open(session.id);
    await other.appendEntry({ type: "session_info", name: "elsewhere" });
    await expect(agent.writes.appendEntries([{ type: "custom", customType: "lost?" }])).rejects.toBeInstanceOf(ExpectedVersionConflictError);
    // The next run reloads from the log (the refusal poisoned the writer) and goes on.
    expect((await agent.prompt("go")).status).toBe("done");
    expect(session.view.getEntries().some((item) => item.type === "session_info")).toBe(true);
    await agent.dispose();
  });
});

describe("handing a session from its standalone slot to an agent", () => {
  it("the agent's first write waits for the writes queued on the standalone slot: one chain, in call order; a stale standalone handle writes through the agent", async () => {
    const { log, session } = await sqliteSession();
    const note = (n: number): NewEvent => ({ type: "entry.appended", data: { entry: { type: "custom", customType: "note", data: { n }, id: `note-${n}`, parentId: null, timestamp: new Date().toISOString() } } });
    const standalone = sessionActorOf(session);
    const early = [1, 2, 3].map((n) => standalone.writes.record([note(n)]));
    // In the same tick, before any of those committed: an agent takes the session and writes.
    const agent = createAgent({ session, model: fakeModel([]) });
    const mine = agent.writes.record([note(4)]);
    const stale = standalone.writes.record([note(5)]);
    await Promise.all([...early, mine, stale]);
    const notes = (await sessionEvents(log, session.id)).flatMap((event) =>
      isEventOfType(event, "entry.appended") && event.data.entry.type === "custom" ? [event.data.entry as { id: string; parentId: string | null; data: { n: number } }] : [],
    );
    expect(notes.map((entry) => entry.data.n)).toEqual([1, 2, 3, 4, 5]);
    // One chain: each note's parent is the note before it (no fork at the handover).
    notes.slice(1).forEach((entry, at) => expect(entry.parentId, `note ${entry.data.n}`).toBe(notes[at].id));
    expect(session.view.leafId).toBe(notes[4].id);
    await agent.dispose();
    await log.close();
  });
});
