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
import { fakeModel, memorySession, sessionEvents } from "./helpers.ts";

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
