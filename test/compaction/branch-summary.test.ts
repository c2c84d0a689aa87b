/**
 * Branch summarization and moveTo: differential against pi 0.73.1 for collection
 * and budgeting, behaviour on real sessions for the move itself.
 */
import fc from "fast-check";
import { collectEntriesForBranchSummary as piCollect, prepareBranchEntries as piPrepareBranchEntries } from "@mariozechner/pi-coding-agent";
import { describe, expect, it, vi } from "vitest";
import { collectEntriesForBranchSummary, moveTo, prepareBranchEntries } from "../../src/compaction/branch-summary.ts";
import { compact } from "../../src/compaction/compact.ts";
import type { BranchSummaryEntry, SessionEntry } from "../../src/core/entries.ts";
import { SessionBusyError } from "../../src/core/errors.ts";
import { appendTurns, assistant, newSession, pairingProblems, summaryModel, user } from "./fixtures.ts";
import { pathArb } from "./session-gen.ts";

const userEntries = (session: { view: { getEntries(): SessionEntry[] } }) =>
  session.view.getEntries().filter((entry) => entry.type === "message" && (entry as { message: { role: string } }).message.role === "user");

describe("branch entries vs pi 0.73.1", () => {
  it("prepareBranchEntries agrees with pi on generated branches and budgets", () => {
    fc.assert(
      fc.property(pathArb(40), fc.integer({ min: 0, max: 20000 }), (entries, budget) => {
        const ours = prepareBranchEntries(entries, budget);
        const pi = piPrepareBranchEntries(entries as never, budget);
        expect(ours.messages).toEqual(pi.messages);
        expect(ours.totalTokens).toBe(pi.totalTokens);
        expect([...ours.fileOps.read].sort()).toEqual([...pi.fileOps.read].sort());
        expect([...ours.fileOps.edited].sort()).toEqual([...pi.fileOps.edited].sort());
        expect([...ours.fileOps.written].sort()).toEqual([...pi.fileOps.written].sort());
      }),
      { numRuns: 200, seed: 9 },
    );
  });

  it("collectEntriesForBranchSummary agrees with pi on a real session tree", async () => {
    const { session } = await newSession();
    await appendTurns(session, 3, 50);
    const fork = userEntries(session)[1];
    await session.moveLeaf(fork.parentId);
    await session.appendEntries([{ type: "message", message: user("other way") }, { type: "message", message: assistant("ok") }]);
    for (const target of session.view.getEntries()) {
      const ours = collectEntriesForBranchSummary(session.view, session.view.leafId, target.id);
      const pi = piCollect(session.view as never, session.view.leafId, target.id);
      expect(ours.commonAncestorId).toBe(pi.commonAncestorId);
      expect(ours.entries.map((entry) => entry.id)).toEqual(pi.entries.map((entry: { id: string }) => entry.id));
    }
  });
});

describe("moveTo", () => {
  it("summarizes the abandoned branch as a labelled child of the new leaf and returns a user target's text", async () => {
    const { session } = await newSession("sqlite");
    await appendTurns(session, 3, 200);
    const oldLeaf = session.view.leafId;
    const target = userEntries(session)[1]; // user message of turn 1
    const { client, mock } = summaryModel([{ text: "## Goal\nexplored turn 2", usage: { input: 800, output: 30 } }]);
    const result = await moveTo(session, target.id, { summarize: true, label: "first attempt", model: client });

    expect(mock.doStreamCalls).toHaveLength(1);
    expect(mock.doStreamCalls[0].tools).toBeUndefined();
    expect(mock.doStreamCalls[0].maxOutputTokens).toBe(2048);
    expect(result.oldLeafId).toBe(oldLeaf);
    expect(result.newLeafId).toBe(target.parentId);
    expect(result.editorText).toMatch(/^Turn 1: please look at src\/file1\.ts/);
    const summary = result.summaryEntry!;
    expect(summary).toMatchObject({ type: "branch_summary", parentId: target.parentId, fromId: target.parentId });
    expect(summary.summary).toContain("explored turn 2");
    expect(summary.summary).toContain("<modified-files>\nsrc/file1.ts\nsrc/file2.ts\n</modified-files>");
    expect(summary.usage).toMatchObject({ input: 800, output: 30 });
    expect(result.labelEntry).toMatchObject({ type: "label", targetId: summary.id, label: "first attempt", parentId: summary.id });
    expect(session.view.leafId).toBe(result.labelEntry!.id);
    expect(session.view.getLabel(summary.id)).toBe("first attempt");
    const context = session.view.buildContext();
    expect(context.messages.at(-1)).toMatchObject({ role: "branchSummary", fromId: target.parentId });
    expect(pairingProblems(context.messages)).toEqual([]);
  });

  it("uses a hook-supplied summary without calling the model, and hooks can override the label", async () => {
    const { session } = await newSession();
    await appendTurns(session, 2, 50);
    const target = session.view.getEntries()[4]; // an assistant message without tool calls: the leaf becomes the target itself
    const { client, mock } = summaryModel([]);
    const trees: unknown[] = [];
    const result = await moveTo(session, target.id, {
      summarize: true,
      model: client,
      label: "mine",
      hooks: {
        sessionBeforeTree: ({ preparation }) => ({ summary: { summary: `hook saw ${preparation.entriesToSummarize.length}` }, label: "hooked" }),
        sessionTree: (event) => void trees.push(event),
      },
    });
    expect(mock.doStreamCalls).toHaveLength(0);
    expect(result.editorText).toBeUndefined();
    expect(result.newLeafId).toBe(target.id);
    expect(result.summaryEntry).toMatchObject({ fromHook: true, summary: "hook saw 5", parentId: target.id });
    expect(result.labelEntry).toMatchObject({ label: "hooked" });
    expect(trees).toEqual([{ newLeafId: target.id, oldLeafId: expect.any(String), summaryEntry: result.summaryEntry, fromHook: true }]);
  });

  it("without a summary only the leaf moves (a label then targets the target); the current leaf is a no-op", async () => {
    const { session } = await newSession();
    await appendTurns(session, 2, 50);
    const { client, mock } = summaryModel([]);
    const leaf = session.view.leafId;
    expect(await moveTo(session, leaf!, { summarize: true, model: client })).toEqual({ oldLeafId: leaf, newLeafId: leaf });
    const target = session.view.getEntries()[4];
    const version = session.view.version;
    const plain = await moveTo(session, target.id);
    expect(plain).toEqual({ oldLeafId: leaf, newLeafId: target.id });
    expect(session.view.leafId).toBe(target.id);
    expect(session.view.version).toBe(version + 1);
    const other = session.view.getEntries()[9];
    const labelled = await moveTo(session, other.id, { label: "here" });
    expect(labelled.labelEntry).toMatchObject({ type: "label", targetId: other.id, parentId: other.id, label: "here" });
    expect(session.view.leafId).toBe(labelled.labelEntry!.id);
    expect(mock.doStreamCalls).toHaveLength(0);
  });

  it("custom instructions are appended as extra focus, or replace the prompt; a hook can override them", async () => {
    const { session } = await newSession();
    await appendTurns(session, 2, 50);
    const start = session.view.leafId!;
    const target = session.view.getEntries()[1];
    const { client, mock } = summaryModel([{ text: "a" }, { text: "b" }]);
    await moveTo(session, target.id, { summarize: true, model: client, customInstructions: "name the files" });
    const appended = JSON.stringify(mock.doStreamCalls[0].prompt);
    expect(appended).toContain("## Next Steps");
    expect(appended).toContain("Additional focus: name the files");
    await session.moveLeaf(start);
    await moveTo(session, target.id, {
      summarize: true,
      model: client,
      customInstructions: "ignored",
      hooks: { sessionBeforeTree: () => ({ customInstructions: "ONLY THIS", replaceInstructions: true }) },
    });
    const replaced = JSON.stringify(mock.doStreamCalls[1].prompt);
    expect(replaced).toContain("</conversation>\\n\\nONLY THIS");
    expect(replaced).not.toContain("## Next Steps");
    expect(replaced).not.toContain("ignored");
  });

  it("a cancel from sessionBeforeTree, or an abort during the summary, leaves the session unchanged", async () => {
    const { session } = await newSession("sqlite");
    await appendTurns(session, 3, 50);
    const before = { version: session.view.version, leaf: session.view.leafId, count: session.view.getEntries().length };
    const target = session.view.getEntries()[2];
    const cancelled = await moveTo(session, target.id, { summarize: true, model: summaryModel([]).client, hooks: { sessionBeforeTree: () => ({ cancel: true }) } });
    expect(cancelled).toMatchObject({ cancelled: true, newLeafId: before.leaf });

    const { client, mock } = summaryModel(["hang"]);
    const controller = new AbortController();
    const running = moveTo(session, target.id, { summarize: true, model: client, signal: controller.signal });
    await vi.waitFor(() => expect(mock.doStreamCalls).toHaveLength(1), { timeout: 10_000 });
    controller.abort();
    expect(await running).toMatchObject({ cancelled: true, aborted: true });
    // The hook's cancel wrote nothing; the aborted call left its intent and its ending (summary.started, summary.ended).
    expect({ version: session.view.version, leaf: session.view.leafId, count: session.view.getEntries().length }).toEqual({ ...before, version: before.version + 2 });
  });

  it("is refused while the session is compacting, and the compaction stays on the branch it was prepared from (pi #9178)", async () => {
    const { session } = await newSession();
    await appendTurns(session, 6);
    const preparedLeaf = session.view.leafId;
    const { client, mock } = summaryModel(["hang", "hang"]);
    const controller = new AbortController();
    const running = compact(session, { model: client, settings: { reserveTokens: 4096, keepRecentTokens: 2500 }, signal: controller.signal });
    await vi.waitFor(() => expect(mock.doStreamCalls.length).toBeGreaterThan(0), { timeout: 10_000 });
    const error = await moveTo(session, session.view.getEntries()[0].id).catch((caught: unknown) => caught);
    expect(SessionBusyError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/busy with a compaction/);
    expect(session.view.leafId).toBe(preparedLeaf);
    controller.abort();
    await running.catch(() => undefined);

    const { client: second } = summaryModel([{ text: "S" }, { text: "P" }]);
    const entry = await compact(session, { model: second, settings: { reserveTokens: 4096, keepRecentTokens: 2500 } });
    expect(entry.parentId).toBe(preparedLeaf);
  });

  it("keeps every tool call paired with its result after three chained compactions and a branch move", async () => {
    const { session } = await newSession("sqlite");
    const steps = Array.from({ length: 6 }, (_, index) => ({ text: `S${index}` }));
    const { client } = summaryModel(steps);
    const settings = { reserveTokens: 4096, keepRecentTokens: 2500 };
    for (let round = 0; round < 3; round++) {
      await appendTurns(session, 4);
      await compact(session, { model: client, settings });
    }
    await appendTurns(session, 2);
    // Go back to the end of the turn before last (an assistant text reply), leaving one turn behind.
    const replies = session.view.getBranch().filter((entry) => {
      const message = (entry as { message?: { role: string; content: { type: string }[] } }).message;
      return message?.role === "assistant" && !message.content.some((block) => block.type === "toolCall");
    });
    const target = replies[replies.length - 2];
    const { client: branchModel } = summaryModel([{ text: "branch notes" }]);
    const moved = await moveTo(session, target.id, { summarize: true, model: branchModel });
    expect(moved.summaryEntry).toBeDefined();
    await appendTurns(session, 1);
    const context = session.view.buildContext();
    expect(context.messages[0].role).toBe("compactionSummary");
    expect(context.messages.some((message) => message.role === "branchSummary")).toBe(true);
    expect(pairingProblems(context.messages)).toEqual([]);
    expect(context.diagnostics).toEqual([]);
    expect((moved.summaryEntry as BranchSummaryEntry).fromId).toBe(moved.newLeafId ?? "root");
  });
});
