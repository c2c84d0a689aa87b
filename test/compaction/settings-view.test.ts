/** Settings validation, overflow recognition and the compaction view. */
import { describe, expect, it } from "vitest";
import { compact } from "../../src/compaction/compact.ts";
import { compactionView } from "../../src/compaction/compaction-view.ts";
import { compactIfNeeded, createCompactionHooks } from "../../src/compaction/hooks.ts";
import { isContextOverflow } from "../../src/compaction/overflow.ts";
import { DEFAULT_COMPACTION_SETTINGS, effectiveKeepRecentTokens, resolveCompactionSettings, resolveContextWindow } from "../../src/compaction/settings.ts";
import { estimateContextTokens, estimateFreshContextTokens, shouldCompact } from "../../src/compaction/tokens.ts";
import { HarnessConfigError } from "../../src/core/errors.ts";
import type { AssistantMessage } from "../../src/core/messages.ts";
import { appendTurns, assistant, newSession, summaryModel, user } from "./fixtures.ts";

describe("settings", () => {
  it("defaults to pi's figures and resolves the window per model", () => {
    expect(resolveCompactionSettings()).toEqual({ enabled: true, reserveTokens: 16384, keepRecentTokens: 20000, branchSummaryReserveTokens: 16384 });
    const settings = resolveCompactionSettings({ contextWindow: { "openai/gpt-a": 1000, "gpt-b": 2000 } });
    expect(resolveContextWindow(settings, { provider: "openai", modelId: "gpt-a" })).toBe(1000);
    expect(resolveContextWindow(settings, { provider: "other", modelId: "gpt-b" })).toBe(2000);
    expect(resolveContextWindow(settings, { provider: "x", modelId: "y", contextWindow: 3000 })).toBe(3000);
    expect(resolveContextWindow(settings, { provider: "x", modelId: "y" })).toBeUndefined();
    expect(shouldCompact(183_617, 200_000, DEFAULT_COMPACTION_SETTINGS)).toBe(true);
    expect(shouldCompact(183_616, 200_000, DEFAULT_COMPACTION_SETTINGS)).toBe(false);
    expect(effectiveKeepRecentTokens({ keepRecentTokens: 20000, reserveTokens: 1000 }, 8000)).toBe(3500);
    expect(effectiveKeepRecentTokens({ keepRecentTokens: 20000, reserveTokens: 16384 }, undefined)).toBe(20000);
  });

  it("names the bad field", () => {
    expect(() => resolveCompactionSettings({ reserveTokens: -1 })).toThrow(/compaction\.reserveTokens/);
    expect(() => resolveCompactionSettings({ keepRecentTokens: 1.5 })).toThrow(HarnessConfigError);
    expect(() => resolveCompactionSettings({ reserveTokens: 100, surprise: true } as never)).toThrow(/surprise/);
    expect(() => resolveCompactionSettings({ summarizationModel: {} as never })).toThrow(/summarizationModel: must be a ModelClient/);
    const session = { id: "s" } as never;
    expect(() => createCompactionHooks({ session, model: summaryModel([]).client, settings: { contextWindow: 1000, reserveTokens: 1000 } })).toThrow(
      /reserveTokens \(1000\) must be smaller than compaction\.contextWindow \(1000\)/,
    );
  });
});

describe("isContextOverflow", () => {
  const base = assistant("");
  const failed = (errorMessage: string): AssistantMessage => ({ ...base, stopReason: "error", errorMessage });
  it("recognizes provider messages, the adapter flag and silent overflow, but not rate limits", () => {
    expect(isContextOverflow(failed("This model's maximum context length is 8192 tokens. However, your messages resulted in 9024 tokens."))).toBe(true);
    expect(isContextOverflow(failed("prompt is too long: 210000 tokens > 200000 maximum"))).toBe(true);
    expect(isContextOverflow(failed("Rate limit reached for gpt-4o: too many tokens per min"))).toBe(false);
    expect(isContextOverflow(failed("boom"), undefined, { retryable: false, contextOverflow: true })).toBe(true);
    const usage = (input: number, output: number) => ({ input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output });
    expect(isContextOverflow({ ...base, stopReason: "stop", usage: usage(9000, 10) }, 8000)).toBe(true);
    expect(isContextOverflow({ ...base, stopReason: "stop", usage: usage(7000, 10) }, 8000)).toBe(false);
    expect(isContextOverflow({ ...base, stopReason: "length", usage: usage(7950, 0) }, 8000)).toBe(true);
  });
});

describe("compactionView", () => {
  it("lists each compaction on the path with what it covers and its size before and after", async () => {
    const { session } = await newSession();
    expect(compactionView(session)).toEqual([]);
    const { client } = summaryModel(Array.from({ length: 4 }, (_, index) => ({ text: `summary ${index}`, usage: { input: 100, output: 10 } })));
    const settings = { reserveTokens: 4096, keepRecentTokens: 2500 };
    const firstEntries = await appendTurns(session, 5);
    const first = await compact(session, { model: client, settings });
    await appendTurns(session, 5);
    const second = await compact(session, { model: client, settings });
    const view = compactionView(session);
    expect(view.map((item) => item.entryId)).toEqual([first.id, second.id]);
    expect(view[0]).toMatchObject({ tokensBefore: first.tokensBefore, firstKeptEntryId: first.firstKeptEntryId, fromHook: false, usage: first.usage });
    expect(view[0].covers.fromEntryId).toBe(firstEntries[0].id);
    expect(view[0].covers.toEntryId).not.toBe(first.firstKeptEntryId);
    // The second covers from where the first stopped keeping to its own cut.
    expect(view[1].covers.fromEntryId).toBe(first.firstKeptEntryId);
    for (const item of view) {
      expect(item.estimatedTokensAfter).toBeLessThan(item.tokensBefore);
      expect(item.covers.messageCount).toBeGreaterThan(0);
      expect(item.modifiedFiles).toContain("src/file0.ts");
    }
    // The estimate after is the chars/4 size of the context right after the entry.
    const context = session.view.buildContext().messages;
    expect(context[0]).toMatchObject({ role: "compactionSummary", summary: second.summary });
  });
});

describe("compactIfNeeded and stale usage", () => {
  it("compacts over the threshold once, then ignores usage reported before the compaction", async () => {
    const { session } = await newSession();
    await appendTurns(session, 4);
    await session.appendEntries([{ type: "message", message: user("one more") }, { type: "message", message: assistant("big context", [], 9000) }]);
    const { client, mock } = summaryModel([{ text: "S" }, { text: "P" }]);
    const options = { session, model: client, settings: { contextWindow: 10_000, reserveTokens: 2000, keepRecentTokens: 3000 } };
    const outcome = await compactIfNeeded(options);
    expect(outcome?.status).toBe("appended");
    const calls = mock.doStreamCalls.length;
    const context = session.view.buildContext().messages;
    // The kept assistant still carries the pre-compaction usage (9000 tokens) ...
    expect(estimateContextTokens(context).tokens).toBeGreaterThan(8000);
    // ... which the fresh estimate ignores, so no second compaction happens.
    expect(estimateFreshContextTokens(context).tokens).toBeLessThan(8000);
    expect(await compactIfNeeded(options)).toBeUndefined();
    expect(mock.doStreamCalls).toHaveLength(calls);
  });
});
