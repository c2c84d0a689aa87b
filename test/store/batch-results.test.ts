/**
 * A parallel batch's results are committed in completion order. An ordinary batch yields no
 * context diagnostic, and a fork or a move at any result of the batch keeps the siblings'
 * real results (no invented "missing result").
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { moveTo } from "../../src/compaction/branch-summary.ts";
import type { MessageEntry } from "../../src/core/entries.ts";
import type { ToolResultMessage } from "../../src/core/messages.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { batchEnd } from "../../src/store/session/batch-end.ts";
import { deferred, fakeModel, memorySession } from "../machines/helpers.ts";

/** Runs one batch where call "slow" finishes only after "fast"'s result is committed. */
async function batchInCompletionOrder() {
  const { repo, session } = await memorySession();
  const fastCommitted = deferred();
  const subscription = session.view.changes$.subscribe(() => {
    const committed = session.view.getEntries().some((entry) => entry.type === "message" && (entry as MessageEntry).message.role === "toolResult");
    if (committed) fastCommitted.resolve();
  });
  const tool = defineTool({
    name: "work",
    description: "works",
    parameters: z.object({ label: z.string() }),
    async execute({ label }) {
      if (label === "slow") await fastCommitted.promise;
      return { content: [{ type: "text", text: `${label} done` }] };
    },
  });
  const model = fakeModel([
    {
      toolCalls: [
        { id: "slow", name: "work", arguments: { label: "slow" } },
        { id: "fast", name: "work", arguments: { label: "fast" } },
      ],
    },
    { text: "both done" },
  ]);
  const outcome = await createAgent({ session, model, tools: [tool] }).prompt("go");
  subscription.unsubscribe();
  expect(outcome.status).toBe("done");
  const resultEntries = session.view.getEntries().filter((entry) => entry.type === "message" && (entry as MessageEntry).message.role === "toolResult");
  // Completion order in the log: fast first, then slow chained under it.
  expect(resultEntries.map((entry) => ((entry as MessageEntry).message as ToolResultMessage).toolCallId)).toEqual(["fast", "slow"]);
  return { repo, session, fastEntry: resultEntries[0], slowEntry: resultEntries[1] };
}

const realResults = (messages: readonly { role: string }[]) =>
  messages.filter((m): m is ToolResultMessage => m.role === "toolResult").map((m) => [m.toolCallId, (m.content[0] as { text: string }).text]);

describe("a parallel batch in the tree", () => {
  it("an ordinary batch whose results were committed out of call order yields no diagnostic", async () => {
    const { session } = await batchInCompletionOrder();
    const context = session.view.buildContext();
    expect(context.diagnostics).toEqual([]);
    expect(realResults(context.messages)).toEqual([
      ["slow", "slow done"],
      ["fast", "fast done"],
    ]);
  });

  it("a fork at the first committed result keeps the sibling's real result", async () => {
    const { repo, session, fastEntry, slowEntry } = await batchInCompletionOrder();
    const fork = await repo.fork(session.id, { entryId: fastEntry.id });
    expect(fork.view.leafId).toBe(slowEntry.id);
    const context = fork.view.buildContext();
    expect(context.diagnostics).toEqual([]);
    expect(realResults(context.messages)).toEqual([
      ["slow", "slow done"],
      ["fast", "fast done"],
    ]);
  });

  it("a fork at the last result and a move to any result land at the batch's end", async () => {
    const { repo, session, fastEntry, slowEntry } = await batchInCompletionOrder();
    expect((await repo.fork(session.id, { entryId: slowEntry.id })).view.leafId).toBe(slowEntry.id);
    const assistant = session.view.getEntry(fastEntry.parentId!)!;
    // A move to the assistant that made the calls lands after its results too: its calls were answered.
    expect((await moveTo(session, assistant.id)).newLeafId).toBe(slowEntry.id);
    expect(session.view.buildContext().diagnostics).toEqual([]);
    await moveTo(session, session.view.getEntry(assistant.parentId!)!.id);
    const moved = await moveTo(session, fastEntry.id);
    expect(moved.newLeafId).toBe(slowEntry.id);
    expect(session.view.leafId).toBe(slowEntry.id);
    expect(realResults(session.view.buildContext().messages)).toEqual([
      ["slow", "slow done"],
      ["fast", "fast done"],
    ]);
  });

  it("batchEnd takes an assistant that made calls to its batch's end, and leaves entries outside a batch alone", async () => {
    const { session, fastEntry, slowEntry } = await batchInCompletionOrder();
    const assistantId = fastEntry.parentId!;
    expect(batchEnd(session.view, assistantId)).toBe(slowEntry.id);
    const user = session.view.getBranch(assistantId).find((entry) => entry.type === "message" && (entry as MessageEntry).message.role === "user")!;
    expect(batchEnd(session.view, user.id)).toBe(user.id);
  });
});
