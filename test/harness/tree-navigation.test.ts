import { describe, expect, it } from "vitest";
import type { LabelEntry } from "../../src/core/entries.ts";
import { EntryNotFoundError, InvalidStateError, SessionBusyError } from "../../src/core/errors.ts";
import type { AgentMessage } from "../../src/core/messages.ts";
import { acquireSessionLock } from "../../src/compaction/lock.ts";
import { createHookRunner, type HookRecord } from "../../src/harness/hooks.ts";
import type { HarnessHooks } from "../../src/harness/hook-types.ts";
import { collectAbandonedBranch, navigateTo } from "../../src/harness/tree-navigation.ts";
import { createMemoryEventLog } from "../../src/store/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });
const assistant = (text: string): AgentMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "a",
  provider: "p",
  model: "m",
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
  stopReason: "stop",
  timestamp: 2,
});

/** u1 → a1 → u2 → a2 (leaf); returns ids. */
async function setup(hooks: HarnessHooks = {}) {
  const repository = createSessionRepository({ log: createMemoryEventLog() });
  const session = await repository.create({ cwd: "/w" });
  const [u1, a1, u2, a2] = await session.appendEntries([user("first"), assistant("one"), user("second"), assistant("two")].map((message) => ({ type: "message", message })));
  const records: HookRecord[] = [];
  const runner = createHookRunner({ hooks, record: (r) => records.push(r) });
  return { session, runner, records, ids: { u1: u1.id, a1: a1.id, u2: u2.id, a2: a2.id }, context: { session, hooks: runner, isBusy: () => false } };
}

describe("moveTo (navigateTo)", () => {
  it("computes the abandoned branch back to the common ancestor", async () => {
    const { session, ids } = await setup();
    expect(collectAbandonedBranch(session, ids.a2, ids.a1)).toEqual({ commonAncestorId: ids.a1, entries: [session.view.getEntry(ids.u2), session.view.getEntry(ids.a2)] });
  });

  it("moving to a user message puts the leaf on its parent and returns the text for editing", async () => {
    const { session, ids, context } = await setup();
    const result = await navigateTo(context, ids.u2);
    expect(result).toMatchObject({ cancelled: false, changed: true, oldLeafId: ids.a2, newLeafId: ids.a1, editorText: "second" });
    expect(session.view.leafId).toBe(ids.a1);
  });

  it("moving to the root user message gives a null leaf; to the current leaf is a no-op", async () => {
    const { session, ids, context, runner } = await setup();
    let calls = 0;
    runner.on("sessionBeforeTree", () => void calls++);
    expect(await navigateTo(context, ids.a2)).toMatchObject({ changed: false });
    expect(calls).toBe(0);
    expect((await navigateTo(context, ids.u1)).newLeafId).toBeNull();
    expect(session.view.leafId).toBeNull();
  });

  it("a hook cancel writes nothing", async () => {
    const { session, ids, context } = await setup({ sessionBeforeTree: () => ({ cancel: true }) });
    const version = session.view.version;
    expect(await navigateTo(context, ids.a1)).toMatchObject({ cancelled: true, newLeafId: ids.a2 });
    expect(session.view.version).toBe(version);
  });

  it("a hook-supplied summary becomes a branch_summary child of the new leaf, labelled by the hook's label", async () => {
    const seen: unknown[] = [];
    const { session, ids, context, records } = await setup({
      sessionBeforeTree: ({ preparation }) => {
        seen.push(preparation);
        return { summary: { summary: "tried approach B", details: { files: 1 } }, label: "from-hook" };
      },
      sessionTree: (event) => void seen.push(event),
    });
    const result = await navigateTo(context, ids.a1, { summarize: true, label: "mine" });
    expect(seen[0]).toMatchObject({ targetId: ids.a1, oldLeafId: ids.a2, commonAncestorId: ids.a1, userWantsSummary: true, label: "mine" });
    expect(result.summaryEntry).toMatchObject({ type: "branch_summary", parentId: ids.a1, fromId: ids.a1, summary: "tried approach B", fromHook: true, details: { files: 1 } });
    const leaf = session.view.getEntry(session.view.leafId!) as LabelEntry;
    expect(leaf).toMatchObject({ type: "label", targetId: result.summaryEntry!.id, label: "from-hook" });
    expect(seen[1]).toMatchObject({ newLeafId: leaf.id, oldLeafId: ids.a2, fromHook: true });
    expect(session.view.buildContext().messages.map((m) => m.role)).toEqual(["user", "assistant", "branchSummary"]);
    expect(records).toEqual([{ type: "hook.applied", data: { hook: "sessionBeforeTree", changes: ["summary", "label"] }, metadata: undefined }]);
  });

  it("ignores a hook summary when no summary was asked for, and labels the target", async () => {
    const { session, ids, context } = await setup({ sessionBeforeTree: () => ({ summary: { summary: "unused" } }) });
    const result = await navigateTo(context, ids.a1, { label: "checkpoint" });
    expect(result.summaryEntry).toBeUndefined();
    expect(session.view.getLabel(ids.a1)).toBe("checkpoint");
    expect(session.view.getEntries().some((entry) => entry.type === "branch_summary")).toBe(false);
  });

  it("uses the configured summarizer with the hook's instruction overrides", async () => {
    const { ids, context } = await setup({ sessionBeforeTree: () => ({ customInstructions: "focus on errors", replaceInstructions: true }) });
    let input: unknown;
    const result = await navigateTo(
      {
        ...context,
        summarize: async (given) => {
          input = given;
          return { summary: "generated" };
        },
      },
      ids.a1,
      { summarize: true, customInstructions: "x" },
    );
    expect(input).toMatchObject({ customInstructions: "focus on errors", replaceInstructions: true });
    expect((input as { entries: unknown[] }).entries).toHaveLength(2);
    expect(result.summaryEntry).toMatchObject({ summary: "generated" });
    expect(result.summaryEntry).not.toHaveProperty("fromHook");
  });

  it("refuses, writing nothing: unknown id, busy agent, compaction running, summary with no source", async () => {
    const { session, ids, context } = await setup();
    const version = session.view.version;
    await expect(navigateTo(context, "nope")).rejects.toThrow(EntryNotFoundError);
    await expect(navigateTo({ ...context, isBusy: () => true }, ids.a1)).rejects.toThrow(SessionBusyError);
    const release = acquireSessionLock(session.id, "compaction", () => {});
    try {
      await expect(navigateTo(context, ids.a1)).rejects.toThrow(InvalidStateError);
    } finally {
      release();
    }
    await expect(navigateTo(context, ids.a1, { summarize: true })).rejects.toThrow(/no branch summarizer/);
    expect(session.view.version).toBe(version);
  });
});
