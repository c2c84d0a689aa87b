/** createCompactionHooks called the way the run actor calls them, on real sessions. */
import { describe, expect, it, vi } from "vitest";
import { createCompactionHooks, type CompactionHookEvent } from "../../src/compaction/hooks.ts";
import type { AssistantMessage } from "../../src/core/messages.ts";
import { appendTurns, assistant, newSession, pairingProblems, summaryModel, user } from "./fixtures.ts";

const settings = { contextWindow: 10_000, reserveTokens: 2000, keepRecentTokens: 3000 };

async function sessionAt(total: number) {
  const { session } = await newSession("sqlite");
  await appendTurns(session, 4);
  const last = assistant("checking", [], total) as AssistantMessage;
  await session.appendEntries([{ type: "message", message: user("next") }, { type: "message", message: last }]);
  return { session, last };
}

describe("createCompactionHooks", () => {
  it("betweenTurns compacts above window − reserve (from the provider's usage) and returns the compacted context", async () => {
    const { session, last } = await sessionAt(8500);
    const { client } = summaryModel([{ text: "S" }, { text: "P" }]);
    const events: CompactionHookEvent[] = [];
    const hooks = createCompactionHooks({ session, model: client, settings, onEvent: (event) => events.push(event) });
    const messages = session.view.buildContext().messages;
    const result = await hooks.betweenTurns({ messages, lastAssistant: last, signal: new AbortController().signal });
    expect(events[0]).toEqual({ type: "compactionChecked", reason: "threshold", contextTokens: 8500, contextWindow: 10_000, threshold: 8000, compacting: true });
    expect(events[1]).toMatchObject({ type: "compactionAppended", reason: "threshold", tokensBefore: 8500 });
    expect(result?.[0].role).toBe("compactionSummary");
    expect(result).toEqual(session.view.buildContext().messages);
    expect(pairingProblems(result!)).toEqual([]);
  });

  it("betweenTurns leaves the context alone under the threshold, when disabled, or when the window is unknown", async () => {
    const { session, last } = await sessionAt(7900);
    const { client, mock } = summaryModel([]);
    const messages = session.view.buildContext().messages;
    const signal = new AbortController().signal;
    expect(await createCompactionHooks({ session, model: client, settings }).betweenTurns({ messages, lastAssistant: last, signal })).toBeUndefined();
    const over = await sessionAt(9900);
    const overMessages = over.session.view.buildContext().messages;
    expect(await createCompactionHooks({ session: over.session, model: client, settings: { ...settings, enabled: false } }).betweenTurns({ messages: overMessages, lastAssistant: over.last, signal })).toBeUndefined();
    expect(await createCompactionHooks({ session: over.session, model: client, settings: { reserveTokens: 2000 } }).betweenTurns({ messages: overMessages, lastAssistant: over.last, signal })).toBeUndefined();
    expect(mock.doStreamCalls).toHaveLength(0);
  });

  it("an aborted run cancels the compaction: undefined, session unchanged, reported", async () => {
    const { session, last } = await sessionAt(9000);
    const { client, mock } = summaryModel(["hang", "hang"]);
    const events: CompactionHookEvent[] = [];
    const hooks = createCompactionHooks({ session, model: client, settings, onEvent: (event) => events.push(event) });
    const before = { version: session.view.version, ids: session.view.getEntries().map((entry) => entry.id) };
    const controller = new AbortController();
    const running = hooks.betweenTurns({ messages: session.view.buildContext().messages, lastAssistant: last, signal: controller.signal });
    await vi.waitFor(() => expect(mock.doStreamCalls.length).toBeGreaterThan(0), { timeout: 10_000 });
    controller.abort();
    expect(await running).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "compactionSkipped", status: "cancelled" });
    // No entry; the call's intent and its cancelled ending are logged (summary.started, summary.ended).
    expect({ version: session.view.version, ids: session.view.getEntries().map((entry) => entry.id) }).toEqual({ ...before, version: before.version + 2 });
  });

  it("a failed summary is data: the run goes on with its context (undefined) and the failure is reported", async () => {
    const { session, last } = await sessionAt(9000);
    const { client } = summaryModel([new Error("503 upstream"), new Error("503 upstream")]);
    const events: CompactionHookEvent[] = [];
    const hooks = createCompactionHooks({ session, model: client, settings, onEvent: (event) => events.push(event) });
    const result = await hooks.betweenTurns({ messages: session.view.buildContext().messages, lastAssistant: last, signal: new AbortController().signal });
    expect(result).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "compactionSkipped", status: "failed", detail: expect.stringMatching(/Summarization failed/) });
  });

  it("sessionBeforeCompact sees the reason; the summarization model writes the summary when set", async () => {
    const { session, last } = await sessionAt(9000);
    const main = summaryModel([]);
    const summarizer = summaryModel([{ text: "by the summarizer" }, { text: "prefix" }]);
    const reasons: string[] = [];
    const hooks = createCompactionHooks({
      session,
      model: main.client,
      settings: { ...settings, summarizationModel: summarizer.client },
      hooks: { sessionBeforeCompact: ({ reason }) => void reasons.push(reason) },
    });
    await hooks.betweenTurns({ messages: session.view.buildContext().messages, lastAssistant: last, signal: new AbortController().signal });
    const overflowed = await hooks.onContextOverflow({ messages: session.view.buildContext().messages, signal: new AbortController().signal });
    expect(reasons[0]).toBe("threshold");
    expect(main.mock.doStreamCalls).toHaveLength(0);
    expect(summarizer.mock.doStreamCalls.length).toBeGreaterThan(0);
    // Right after a compaction the leaf is the compaction: an overflow there cannot compact again.
    expect(overflowed).toBeUndefined();
  });
});
