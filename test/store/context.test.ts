import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EntryNotFoundError } from "../../src/core/errors.ts";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/core/messages.ts";
import { createContextBuilder } from "../../src/store/session/context.ts";
import { repairToolPairing } from "../../src/store/session/pairing.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSessionView } from "../../src/store/session/session-view.ts";
import type { SessionViewInternals } from "../../src/store/session/session-view.ts";
import type { SessionView } from "../../src/store/session-types.ts";

/** The view's internal parts (the context builder's counters), which the public handle does not expose. */
const internals = (view: SessionView): SessionViewInternals => view as SessionViewInternals;

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });
const call = (id: string, name = "read") => ({ type: "toolCall" as const, id, name, arguments: {} });
const assistant = (calls: string[], stopReason: AssistantMessage["stopReason"] = calls.length ? "toolUse" : "stop"): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text: "t" }, ...calls.map((id) => call(id))],
  api: "a",
  provider: "p",
  model: "m",
  usage: { input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null },
  stopReason,
  timestamp: 2,
});
const result = (id: string, text = `r-${id}`): ToolResultMessage => ({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp: 3 });

const shape = (messages: AgentMessage[]) =>
  messages.map((message) =>
    message.role === "toolResult" ? `R:${message.toolCallId}${(message.details as { arborSynthetic?: boolean } | undefined)?.arborSynthetic ? "*" : ""}` : message.role === "assistant" ? "A" : "U",
  );

describe("tool-pairing invariant", () => {
  it("leaves a valid context alone", () => {
    const messages = [user("u"), assistant(["a", "b"]), result("a"), result("b"), assistant([])];
    const repaired = repairToolPairing(messages);
    expect(repaired.messages).toEqual(messages);
    expect(repaired.diagnostics).toEqual([]);
  });

  it("adds a synthetic error result that says why for a call without a result", () => {
    const { messages, diagnostics } = repairToolPairing([user("u"), assistant(["a", "b"]), result("a"), user("next")]);
    expect(shape(messages)).toEqual(["U", "A", "R:a", "R:b*", "U"]);
    const synthetic = messages[3] as ToolResultMessage;
    expect(synthetic.isError).toBe(true);
    expect(synthetic.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/No result was recorded.*may not have run or may not have finished.*may need to be run again/) });
    expect(diagnostics).toEqual([expect.objectContaining({ kind: "missing_tool_result", toolCallId: "b" })]);
  });

  it("drops results without a call, duplicates, and late results; puts results in call order without a diagnostic", () => {
    const { messages, diagnostics } = repairToolPairing([
      result("ghost"),
      user("u"),
      assistant(["a", "b"]),
      result("b"),
      result("a"),
      result("a", "again"),
      user("u2"),
      result("b", "late"),
      assistant(["c"]),
      result("c"),
    ]);
    expect(shape(messages)).toEqual(["U", "A", "R:a", "R:b", "U", "A", "R:c"]);
    expect((messages[2] as ToolResultMessage).content[0]).toMatchObject({ text: "r-a" });
    expect(diagnostics.map((diagnostic) => `${diagnostic.kind}:${diagnostic.toolCallId}`)).toEqual([
      "orphan_tool_result:ghost",
      "duplicate_tool_result:a",
      "duplicate_tool_result:b",
    ]);
  });

  it("keeps error/aborted assistants but does not pair their calls (pi-ai drops them per provider)", () => {
    const { messages, diagnostics } = repairToolPairing([user("u"), assistant(["x"], "aborted"), result("x"), user("again")]);
    expect(shape(messages)).toEqual(["U", "A", "U"]);
    expect(diagnostics.map((diagnostic) => diagnostic.kind)).toEqual(["orphan_tool_result"]);
    expect(diagnostics[0].message).toMatch(/error or abort/);
  });

  it("never throws and always yields a valid pairing on arbitrary message soup", () => {
    const messageArbitrary = fc.oneof(
      fc.constant(user("u")),
      fc.array(fc.constantFrom("a", "b", "c"), { maxLength: 3 }).map((ids) => assistant(ids)),
      fc.constantFrom("a", "b", "c", "z").map((id) => result(id)),
    );
    fc.assert(
      fc.property(fc.array(messageArbitrary, { maxLength: 30 }), (soup) => {
        const { messages } = repairToolPairing(soup);
        for (let index = 0; index < messages.length; index++) {
          const message = messages[index];
          if (message.role === "toolResult") {
            // Every result directly answers the nearest preceding assistant, in call order.
            let back = index - 1;
            while (messages[back].role === "toolResult") back -= 1;
            const owner = messages[back] as AssistantMessage;
            expect(owner.role).toBe("assistant");
            const ids = owner.content.filter((block) => block.type === "toolCall").map((block) => (block as { id: string }).id);
            expect(message.toolCallId).toBe(ids[index - back - 1]);
          }
          if (message.role === "assistant") {
            const ids = message.content.filter((block) => block.type === "toolCall").map((block) => (block as { id: string }).id);
            expect(messages.slice(index + 1, index + 1 + ids.length).map((next) => (next as ToolResultMessage).toolCallId)).toEqual(ids);
          }
        }
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});

describe("context projection", () => {
  it("throws EntryNotFoundError for an unknown leaf (pi silently uses the last entry)", () => {
    const view = createSessionView("x");
    expect(() => view.buildContext({ leafId: "nope" })).toThrow(EntryNotFoundError);
  });

  it("builds incrementally on the current leaf and equals a full rebuild, across appends and leaf moves", async () => {
    const steps = fc.array(
      fc.oneof(
        fc.record({ kind: fc.constant("user" as const) }),
        fc.record({ kind: fc.constant("assistant" as const), calls: fc.integer({ min: 0, max: 2 }) }),
        fc.record({ kind: fc.constant("result" as const) }),
        fc.record({ kind: fc.constant("thinking" as const) }),
        fc.record({ kind: fc.constant("move" as const), pick: fc.nat(100) }),
        fc.record({ kind: fc.constant("compaction" as const), pick: fc.nat(100) }),
      ),
      { minLength: 1, maxLength: 30 },
    );
    let extensions = 0;
    await fc.assert(
      fc.asyncProperty(steps, async (plan) => {
        const repo = createSessionRepository({ log: createMemoryEventLog() });
        const session = await repo.create();
        const openCalls: string[] = [];
        let callCounter = 0;
        for (const step of plan) {
          if (step.kind !== "user") session.view.buildContext(); // prime the cache (not always: a build may extend over several entries)
          switch (step.kind) {
            case "user":
              await session.appendEntry({ type: "message", message: user("u") });
              break;
            case "assistant": {
              const ids = Array.from({ length: step.calls }, () => `c${callCounter++}`);
              openCalls.push(...ids);
              await session.appendEntry({ type: "message", message: assistant(ids) });
              break;
            }
            case "result":
              await session.appendEntry({ type: "message", message: result(openCalls.shift() ?? "stray") });
              break;
            case "thinking":
              await session.appendEntry({ type: "thinking_level_change", thinkingLevel: "high" });
              break;
            case "move": {
              const entries = session.view.getEntries();
              if (entries.length) await session.moveLeaf(entries[step.pick % entries.length].id);
              break;
            }
            case "compaction": {
              const path = session.view.getBranch();
              if (path.length) await session.appendEntry({ type: "compaction", summary: "s", firstKeptEntryId: path[step.pick % path.length].id, tokensBefore: 5 });
              break;
            }
          }
          const incremental = session.view.buildContext();
          const fresh = createContextBuilder({ getEntry: (id) => session.view.getEntry(id) }).build(session.view.leafId);
          expect(incremental).toEqual(fresh);
        }
        extensions += internals(session.view).contexts.stats.extensions;
      }),
      { numRuns: 150, seed: 11 },
    );
    expect(extensions).toBeGreaterThan(100);
  });

  it("extends the cached context by one entry instead of re-walking the path", async () => {
    const repo = createSessionRepository({ log: createMemoryEventLog() });
    const session = await repo.create();
    for (let index = 0; index < 50; index++) await session.appendEntry({ type: "message", message: user(`m${index}`) });
    session.view.buildContext();
    const { fullBuilds } = internals(session.view).contexts.stats;
    await session.appendEntry({ type: "message", message: user("one more") });
    expect(session.view.buildContext().messages).toHaveLength(51);
    expect(internals(session.view).contexts.stats.fullBuilds).toBe(fullBuilds);
    // A leaf move to an uncached entry costs one full build.
    await session.moveLeaf(session.view.getEntries()[10].id);
    expect(session.view.buildContext().messages).toHaveLength(11);
    expect(internals(session.view).contexts.stats.fullBuilds).toBe(fullBuilds + 1);
  });

  it("extends the cached context over the several entries of a turn (P3), and rebuilds past a compaction or a far leaf", async () => {
    const repo = createSessionRepository({ log: createMemoryEventLog() });
    const session = await repo.create();
    for (let index = 0; index < 40; index++) await session.appendEntry({ type: "message", message: user(`m${index}`) });
    session.view.buildContext();
    const stats = internals(session.view).contexts.stats;
    const { fullBuilds } = stats;
    const fresh = () => createContextBuilder({ getEntry: (id) => session.view.getEntry(id) }).build(session.view.leafId);
    // One ordinary turn: four entries appended, then the next context.
    await session.appendEntry({ type: "message", message: user("next") });
    await session.appendEntry({ type: "message", message: assistant(["t1"]) });
    await session.appendEntry({ type: "message", message: result("t1") });
    await session.appendEntry({ type: "thinking_level_change", thinkingLevel: "high" });
    await session.appendEntry({ type: "message", message: assistant([]) });
    const extended = session.view.buildContext();
    expect(extended).toEqual(fresh());
    expect(extended.thinkingLevel).toBe("high");
    expect(stats.fullBuilds).toBe(fullBuilds);
    // A compaction among the new entries needs a full build (its summary replaces the history).
    const path = session.view.getBranch();
    await session.appendEntry({ type: "message", message: user("before compaction") });
    await session.appendEntry({ type: "compaction", summary: "s", firstKeptEntryId: path[30].id, tokensBefore: 5 });
    await session.appendEntry({ type: "message", message: user("after") });
    expect(session.view.buildContext()).toEqual(fresh());
    expect(stats.fullBuilds).toBe(fullBuilds + 1);
    // More than 64 entries since the cached leaf: a full build too.
    for (let index = 0; index < 70; index++) await session.appendEntry({ type: "message", message: user(`n${index}`) });
    expect(session.view.buildContext()).toEqual(fresh());
    expect(stats.fullBuilds).toBe(fullBuilds + 2);
  });

  it("reports unknown entry kinds and leaves them out; activeToolNames from the latest change", async () => {
    const repo = createSessionRepository({ log: createMemoryEventLog() });
    const session = await repo.create();
    await session.appendEntries([
      { type: "active_tools_change", toolNames: ["read"] },
      { type: "message", message: user("u") },
      { type: "future_kind", payload: 1 },
      { type: "active_tools_change", toolNames: ["read", "bash"] },
    ]);
    const context = session.view.buildContext();
    expect(context.messages).toHaveLength(1);
    expect(context.activeToolNames).toEqual(["read", "bash"]);
    expect(context.diagnostics.map((diagnostic) => diagnostic.kind)).toEqual(["unknown_entry"]);
  });
});
