/**
 * The compaction actor through `compact()`: real sessions (memory and SQLite logs),
 * the real AI SDK adapter over a scripted mock model.
 */
import { MockLanguageModelV4 } from "ai/test";
import { createAiSdkModelClient } from "../../src/adapters/model/ai-sdk-client.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { describe, expect, it, vi } from "vitest";
import { compact, runCompaction } from "../../src/compaction/compact.ts";
import { sessionActorOf } from "../../src/machines/session-actor.ts";
import type { CompactionEntry } from "../../src/core/entries.ts";
import { CompactionError, CompactionFailedError, SessionBusyError } from "../../src/core/errors.ts";
import { appendTurns, assistant, newSession, pairingProblems, summaryModel, toolResult, user } from "./fixtures.ts";

const settings = { reserveTokens: 4096, keepRecentTokens: 2500 };
const SUMMARY = "## Goal\nFix files.\n\n## Next Steps\n1. Continue";

describe("compact()", () => {
  it("summarizes without tools, records usage, keeps the recent tail and the pairing", async () => {
    const { session } = await newSession();
    await appendTurns(session, 6);
    const { client, mock } = summaryModel([{ text: SUMMARY, usage: { input: 3000, output: 120 } }, { text: "PREFIX", usage: { input: 500, output: 20 } }]);
    const entry = await compact(session, { model: client, settings });
    // The cut lands inside a turn here: a history call (0.8 × reserve) and a turn-prefix call (0.5 × reserve).
    expect(mock.doStreamCalls.map((call) => call.maxOutputTokens)).toEqual([3276, 2048]);
    expect(JSON.stringify(mock.doStreamCalls[1].prompt)).toContain("## Original Request");
    expect(entry.summary).toContain("**Earlier part of the current turn:**\n\nPREFIX");

    const call = mock.doStreamCalls[0];
    expect(call.tools).toBeUndefined();
    expect(call.maxOutputTokens).toBe(Math.floor(0.8 * 4096));
    const system = call.prompt.find((message) => message.role === "system");
    expect(String(system?.content)).toMatch(/handover notes/);
    const userText = JSON.stringify(call.prompt.find((message) => message.role === "user"));
    expect(userText).toContain("<conversation>");
    expect(userText).toContain("[Assistant tool calls]: read(path=");
    expect(userText).not.toContain("<previous-summary>");

    expect(entry.type).toBe("compaction");
    expect(entry.summary.startsWith(SUMMARY)).toBe(true);
    expect(entry.summary).toMatch(/<modified-files>\nsrc\/file0\.ts/);
    expect(entry.usage).toMatchObject({ input: 3500, output: 140 });
    expect(entry.tokensBefore).toBeGreaterThan(6 * 1400);
    expect(entry.details).toMatchObject({ modifiedFiles: expect.arrayContaining(["src/file0.ts"]) });
    expect(entry.retainedTail?.[0]).toBe(entry.firstKeptEntryId);
    expect(session.view.leafId).toBe(entry.id);

    const context = session.view.buildContext();
    expect(context.messages[0].role).toBe("compactionSummary");
    expect(context.diagnostics).toEqual([]);
    expect(pairingProblems(context.messages)).toEqual([]);
    expect(context.messages.length).toBeLessThan(30);
  });

  it("updates the previous summary and carries file lists through three chained compactions", async () => {
    const { session } = await newSession("sqlite");
    // History and turn-prefix summaries are requested in parallel; answer each kind from its own
    // script (by the history call's output cap) so the test does not depend on which call lands first.
    const historyScript = scriptedModel([{ text: "S1" }, { text: "S2" }, { text: "S3" }]);
    const prefixScript = scriptedModel([{ text: "P1" }, { text: "P2" }, { text: "P3" }]);
    const mock = new MockLanguageModelV4({
      provider: "mock.scripted",
      modelId: "mock-model",
      doStream: (options) => (options.maxOutputTokens === 3276 ? historyScript.doStream(options) : prefixScript.doStream(options)),
    });
    const client = createAiSdkModelClient(mock, { provider: "openai", modelId: "gpt-test" });
    const entries: CompactionEntry[] = [];
    for (let round = 0; round < 3; round++) {
      await appendTurns(session, 4);
      entries.push(await compact(session, { model: client, settings }));
      expect(pairingProblems(session.view.buildContext().messages)).toEqual([]);
    }
    const history = mock.doStreamCalls.filter((call) => call.maxOutputTokens === 3276).map((call) => JSON.stringify(call.prompt));
    expect(history).toHaveLength(3);
    expect(history[0]).not.toContain("<previous-summary>");
    expect(history[1]).toContain("<previous-summary>\\nS1");
    expect(history[1]).toContain("Revise those notes");
    expect(history[2]).toContain("<previous-summary>\\nS2");
    // Files modified before the first compaction are still listed after the third.
    expect((entries[2].details as { modifiedFiles: string[] }).modifiedFiles).toContain("src/file0.ts");
    expect(session.view.buildContext().diagnostics).toEqual([]);
  });

  it("refuses when there is nothing to compact, and never calls the model", async () => {
    const { session } = await newSession();
    await appendTurns(session, 1, 100);
    const { client, mock } = summaryModel([]);
    const version = session.view.version;
    const error = await compact(session, { model: client, settings }).catch((caught: unknown) => caught);
    expect(CompactionError.isInstance(error)).toBe(true);
    expect((error as InstanceType<typeof CompactionError>).details.reason).toBe("nothing_to_compact");
    expect((error as Error).message).toMatch(/^Nothing to compact/);
    expect(mock.doStreamCalls).toHaveLength(0);
    expect(session.view.version).toBe(version);
  });

  it("a sessionBeforeCompact cancel leaves the session unchanged", async () => {
    const { session } = await newSession("sqlite");
    await appendTurns(session, 6);
    const before = { version: session.view.version, entries: session.view.getEntries().map((entry) => entry.id) };
    const { client, mock } = summaryModel([{ text: SUMMARY }]);
    const seen: string[] = [];
    const error = await compact(session, {
      model: client,
      settings,
      hooks: { sessionBeforeCompact: ({ preparation, reason }) => (seen.push(`${reason}:${preparation.firstKeptEntryId}`), { cancel: true }) },
    }).catch((caught: unknown) => caught);
    expect(CompactionError.isInstance(error)).toBe(true);
    expect((error as InstanceType<typeof CompactionError>).details.reason).toBe("cancelled");
    expect(seen).toHaveLength(1);
    expect(mock.doStreamCalls).toHaveLength(0);
    expect(session.view.version).toBe(before.version);
    expect(session.view.getEntries().map((entry) => entry.id)).toEqual(before.entries);
  });

  it("abort while summarizing leaves the session unchanged and frees the session's operation slot", async () => {
    const { session } = await newSession("sqlite");
    await appendTurns(session, 6);
    const before = { version: session.view.version, entries: session.view.getEntries().map((entry) => entry.id) };
    const { client, mock } = summaryModel(["hang", "hang"]);
    const controller = new AbortController();
    const events: string[] = [];
    const running = compact(session, { model: client, settings, signal: controller.signal, onEvent: (event) => events.push(event.type) });
    await vi.waitFor(() => expect(mock.doStreamCalls.length).toBeGreaterThan(0), { timeout: 10_000 });
    expect(sessionActorOf(session).operation()).toBe("compacting");
    const second = await compact(session, { model: client, settings }).catch((caught: unknown) => caught);
    expect(SessionBusyError.isInstance(second)).toBe(true);
    controller.abort();
    const error = await running.catch((caught: unknown) => caught);
    expect(CompactionError.isInstance(error)).toBe(true);
    expect((error as InstanceType<typeof CompactionError>).details.reason).toBe("aborted");
    expect(events).toEqual(["compactionStarted", "compactionCancelled"]);
    expect(sessionActorOf(session).operation()).toBe("idle");
    // No entry; the log holds the call's intent and its ending (summary.started, summary.ended cancelled).
    expect(session.view.version).toBe(before.version + 2);
    expect(session.view.getEntries().map((entry) => entry.id)).toEqual(before.entries);
  });

  it("uses a hook-supplied compaction (fromHook) without calling the model, and tells sessionCompact", async () => {
    const { session } = await newSession();
    await appendTurns(session, 6);
    const { client, mock } = summaryModel([]);
    const observed: { id: string; fromHook: boolean }[] = [];
    const entry = await compact(session, {
      model: client,
      settings,
      hooks: {
        sessionBeforeCompact: () => ({ compaction: { summary: "from the hook", details: { kind: "custom" } } }),
        sessionCompact: ({ compactionEntry, fromHook }) => void observed.push({ id: compactionEntry.id, fromHook }),
      },
    });
    expect(mock.doStreamCalls).toHaveLength(0);
    expect(entry).toMatchObject({ summary: "from the hook", fromHook: true, details: { kind: "custom" } });
    expect(observed).toEqual([{ id: entry.id, fromHook: true }]);
  });

  it("rejects a hook-supplied compaction that would orphan a tool result (pi #6832)", async () => {
    const { session } = await newSession();
    const entries = await appendTurns(session, 6);
    const resultEntry = entries.find((entry) => entry.type === "message" && (entry as { message: { role: string } }).message.role === "toolResult")!;
    const { client } = summaryModel([]);
    const version = session.view.version;
    const error = await compact(session, {
      model: client,
      settings,
      hooks: { sessionBeforeCompact: () => ({ compaction: { summary: "bad", firstKeptEntryId: resultEntry.id } }) },
    }).catch((caught: unknown) => caught);
    expect(CompactionFailedError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/is a tool result/);
    expect(session.view.version).toBe(version);
  });

  it("a failing summary call fails with the provider's message and appends nothing", async () => {
    const { session } = await newSession();
    await appendTurns(session, 6);
    const { client } = summaryModel([new Error("upstream exploded")]);
    const count = session.view.getEntries().length;
    const version = session.view.version;
    const outcome = await runCompaction(session, { model: client, settings, reason: "threshold" });
    expect(outcome).toMatchObject({ status: "failed", reason: "summary_failed" });
    expect((outcome as { message: string }).message).toMatch(/Summarization failed: .*upstream exploded/);
    expect(session.view.getEntries()).toHaveLength(count);
    expect(session.view.version).toBe(version + 2); // summary.started, summary.ended failed
  });

  it("an empty model answer is a failure, never an empty summary", async () => {
    const { session } = await newSession();
    await appendTurns(session, 6);
    const { client } = summaryModel([{ text: "   " }]);
    const outcome = await runCompaction(session, { model: client, settings });
    expect(outcome).toMatchObject({ status: "failed", reason: "summary_failed" });
    expect((outcome as { message: string }).message).toMatch(/empty summary/);
  });
});

describe("tool batches in flight", () => {
  it("refuses to compact while the last assistant's tool calls have no results yet", async () => {
    const { session } = await newSession();
    await appendTurns(session, 6);
    await session.appendEntries([
      { type: "message", message: user("one more file") },
      { type: "message", message: assistant("", [{ id: "live1", name: "read", arguments: { path: "x" } }, { id: "live2", name: "read", arguments: { path: "y" } }]) },
      { type: "message", message: toolResult("live1", "read", "first result landed") },
    ]);
    const { client, mock } = summaryModel([]);
    const version = session.view.version;
    const outcome = await runCompaction(session, { model: client, settings, reason: "manual" });
    expect(outcome).toMatchObject({ status: "failed", reason: "tool_batch_in_flight" });
    expect((outcome as { message: string }).message).toMatch(/no result yet for live2/);
    expect(mock.doStreamCalls).toHaveLength(0);
    expect(session.view.version).toBe(version);
  });
});

describe("summary budget", () => {
  it("caps maxTokens at the model's own output limit when it declares one", async () => {
    const { session } = await newSession();
    await appendTurns(session, 6);
    const { client, mock } = summaryModel([{ text: "S" }, { text: "P" }], { maxTokens: 1000 });
    await compact(session, { model: client, settings });
    expect(mock.doStreamCalls.map((call) => call.maxOutputTokens)).toEqual([1000, 1000]);
  });
});
