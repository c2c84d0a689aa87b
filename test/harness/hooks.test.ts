import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.ts";
import type { AgentMessage, UserMessage } from "../../src/core/messages.ts";
import { createHookRunner, type HookRecord } from "../../src/harness/hooks.ts";
import { HOOK_NAMES, type HarnessHooks, type SessionBeforeTreeEvent, type ToolResultEvent } from "../../src/harness/hook-types.ts";

const user = (text: string): UserMessage => ({ role: "user", content: text, timestamp: 1 });

function setup(hooks: HarnessHooks = {}) {
  const records: HookRecord[] = [];
  const runner = createHookRunner({ hooks, record: (r) => records.push(r) });
  return { runner, records };
}

const treeEvent = (): SessionBeforeTreeEvent => ({
  preparation: { targetId: "t", oldLeafId: "o", commonAncestorId: null, entriesToSummarize: [], userWantsSummary: true },
  signal: new AbortController().signal,
});

describe("hook runner: ordering", () => {
  it("runs option handlers in list order, then on() handlers in registration order", async () => {
    const seen: string[] = [];
    const { runner } = setup({ sessionTree: [() => void seen.push("a"), () => void seen.push("b")] });
    runner.on("sessionTree", () => void seen.push("c"));
    const off = runner.on("sessionTree", () => void seen.push("d"));
    runner.on("sessionTree", () => void seen.push("e"));
    off();
    await runner.observe("sessionTree", { newLeafId: "x", oldLeafId: null });
    expect(seen).toEqual(["a", "b", "c", "e"]);
  });

  it("awaits each async handler before starting the next", async () => {
    const seen: string[] = [];
    const { runner } = setup();
    runner.on("modelUpdate", async () => {
      await new Promise((resolve) => setImmediate(resolve));
      seen.push("slow");
    });
    runner.on("modelUpdate", () => void seen.push("fast"));
    await runner.observe("modelUpdate", { model: "m", provider: "p", modelId: "m", previous: { model: "n", provider: "p", modelId: "n" } });
    expect(seen).toEqual(["slow", "fast"]);
  });

  it("rejects an unknown hook name", () => {
    const { runner } = setup();
    expect(() => runner.on("nope" as never, () => {})).toThrow(InvalidArgumentError);
    expect(() => runner.on("nope" as never, () => {})).toThrow(/Unknown hook "nope"/);
    expect(() => runner.on("context", "not a function" as never)).toThrow(/must be a function/);
  });
});

describe("hook runner: throws", () => {
  it("records a throwing observer as hook.failed and still runs the others", async () => {
    const seen: number[] = [];
    const { runner, records } = setup({
      retryScheduled: [() => { throw new Error("boom"); }, (event) => void seen.push(event.attempt)],
    });
    await runner.observe("retryScheduled", { attempt: 2, delayMs: 10, error: "503" });
    expect(seen).toEqual([2]);
    expect(records).toEqual([{ type: "hook.failed", data: { hook: "retryScheduled", error: "boom" }, metadata: { handlerIndex: 0 } }]);
  });

  it("skips a throwing patch handler and keeps the chain", async () => {
    const { runner, records } = setup({
      context: [({ messages }) => ({ messages: [...messages, user("b")] }), () => { throw new Error("bad"); }, ({ messages }) => ({ messages: [...messages, user("c")] })],
    });
    const result = await runner.context([user("a")]);
    expect(result.map((m) => (m as UserMessage).content)).toEqual(["a", "b", "c"]);
    expect(records.map((r) => r.type)).toEqual(["hook.failed", "hook.applied"]);
  });

  it("a throwing toolCall handler blocks the call with the thrown message", async () => {
    let reached = false;
    const { runner, records } = setup({ toolCall: [() => { throw new Error("policy engine down"); }, () => { reached = true; }] });
    const decision = await runner.toolCall({ toolCallId: "c1", toolName: "bash", input: { command: "ls" } });
    expect(decision).toMatchObject({ block: true, reason: "policy engine down" });
    expect(reached).toBe(false);
    expect(records.map((r) => [r.type, r.data.hook])).toEqual([["hook.failed", "toolCall"], ["hook.applied", "toolCall"]]);
  });
});

describe("hook runner: each hook's effect", () => {
  it("beforeAgentStart appends messages from every handler and chains the system prompt", async () => {
    const prompts: string[] = [];
    const { runner, records } = setup({
      beforeAgentStart: [
        (event) => {
          prompts.push(event.systemPrompt);
          return { messages: [user("one")], systemPrompt: `${event.systemPrompt} +A` };
        },
        (event) => {
          prompts.push(event.systemPrompt);
          expect(event.messages).toHaveLength(2);
          return { messages: [user("two")], systemPrompt: `${event.systemPrompt} +B` };
        },
      ],
    });
    const result = await runner.beforeAgentStart({ prompt: "p", images: [], messages: [user("p")], systemPrompt: "base" });
    expect(prompts).toEqual(["base", "base +A"]);
    expect(result.systemPrompt).toBe("base +A +B");
    expect(result.messages.map((m) => (m as UserMessage).content)).toEqual(["p", "one", "two"]);
    expect(records).toEqual([{ type: "hook.applied", data: { hook: "beforeAgentStart", changes: ["messages", "systemPrompt"] }, metadata: undefined }]);
  });

  it("context hands handlers a clone, so the caller's messages stay untouched", async () => {
    const original: AgentMessage[] = [user("keep")];
    const { runner, records } = setup({
      context: ({ messages }) => {
        (messages[0] as UserMessage).content = "mutated";
      },
    });
    await runner.context(original);
    expect((original[0] as UserMessage).content).toBe("keep");
    expect(records).toEqual([]);
  });

  it("context returns the same array when no handler is registered", async () => {
    const { runner } = setup();
    const messages = [user("x")];
    expect(await runner.context(messages)).toBe(messages);
  });

  it("beforeProviderRequest patches field by field and cannot change the model", async () => {
    const { runner, records } = setup({
      beforeProviderRequest: [
        (event) => {
          expect(event.options.timeoutMs).toBe(1000);
          return { timeoutMs: 5000, headers: { "x-a": "1" } };
        },
        (event) => ({ maxTokens: (event.options.timeoutMs ?? 0) / 10, model: "other" } as never),
      ],
    });
    const result = await runner.beforeProviderRequest({ options: { model: "main", timeoutMs: 1000, temperature: 0.2 }, toolNames: [] });
    expect(result).toEqual({ model: "main", timeoutMs: 5000, headers: { "x-a": "1" }, maxTokens: 500, temperature: 0.2 });
    expect(records[0].data).toEqual({ hook: "beforeProviderRequest", changes: ["timeoutMs", "headers", "maxTokens"] });
  });

  it("beforeProviderPayload chains replacements; undefined keeps the payload", async () => {
    const { runner } = setup({
      beforeProviderPayload: [
        ({ payload }) => ({ payload: { ...(payload as object), a: 1 } }),
        () => undefined,
        ({ payload }) => ({ payload: { ...(payload as object), b: 2 } }),
      ],
    });
    expect(await runner.beforeProviderPayload({ model: "m" })).toEqual({ model: "m", a: 1, b: 2 });
  });

  it("toolCall: in-place mutation counts as a change and the first block wins", async () => {
    const reasons: string[] = [];
    const { runner, records } = setup({
      toolCall: [
        ({ input }) => {
          input.path = "/safe/file";
        },
        () => ({ block: true, reason: "first" }),
        () => {
          reasons.push("never");
          return { block: true, reason: "second" };
        },
      ],
    });
    const decision = await runner.toolCall({ toolCallId: "c", toolName: "read", input: { path: "/etc/passwd" } });
    expect(decision).toEqual({ block: true, reason: "first", input: { path: "/safe/file" } });
    expect(reasons).toEqual([]);
    expect(records.map((r) => r.data)).toEqual([{ hook: "toolCall", changes: ["block"] }]);
  });

  it("toolCall: replaced input without a block is reported as an input change", async () => {
    const { runner, records } = setup({ toolCall: () => ({ input: { n: 2 } }) });
    const decision = await runner.toolCall({ toolCallId: "c", toolName: "t", input: { n: 1 } });
    expect(decision).toEqual({ block: false, input: { n: 2 } });
    expect(records[0]).toMatchObject({ data: { hook: "toolCall", changes: ["input"] }, metadata: { toolCallId: "c" } });
  });

  it("toolResult chains partial patches field by field", async () => {
    const base: ToolResultEvent = { toolCallId: "c", toolName: "t", input: {}, content: [{ type: "text", text: "raw" }], details: { a: 1 }, isError: false, terminate: false };
    const { runner, records } = setup({
      toolResult: [
        () => ({ isError: true }),
        (event) => {
          expect(event.isError).toBe(true);
          return { content: [{ type: "text", text: "redacted" }] };
        },
        () => ({ terminate: true }),
      ],
    });
    const result = await runner.toolResult(base);
    expect(result).toMatchObject({ isError: true, terminate: true, details: { a: 1 }, content: [{ type: "text", text: "redacted" }] });
    expect(records[0].data).toEqual({ hook: "toolResult", changes: ["isError", "content", "terminate"] });
  });

  it("sessionBeforeCompact: first cancel wins; otherwise the last compaction wins", async () => {
    const event = { preparation: {} as never, branchEntries: [], reason: "manual" as const, signal: new AbortController().signal };
    const compaction = (summary: string) => ({ compaction: { summary, firstKeptEntryId: "e", tokensBefore: 10 } });
    const cancelled = setup({ sessionBeforeCompact: [() => compaction("x"), () => ({ cancel: true }), () => compaction("y")] });
    expect(await cancelled.runner.sessionBeforeCompact(event)).toEqual({ cancel: true });
    expect(cancelled.records[0].data).toEqual({ hook: "sessionBeforeCompact", changes: ["cancel"] });
    const supplied = setup({ sessionBeforeCompact: [() => compaction("x"), () => compaction("y")] });
    expect((await supplied.runner.sessionBeforeCompact(event)).compaction?.summary).toBe("y");
  });

  it("sessionBeforeTree: overrides chain, summary is supplied, and a cancel stops the chain", async () => {
    const { runner } = setup({
      sessionBeforeTree: [
        () => ({ label: "first", customInstructions: "focus on tests" }),
        (event) => {
          expect(event.preparation.label).toBe("first");
          return { summary: { summary: "explored X" }, label: "second" };
        },
      ],
    });
    expect(await runner.sessionBeforeTree(treeEvent())).toEqual({
      cancel: false,
      label: "second",
      customInstructions: "focus on tests",
      summary: { summary: "explored X" },
    });
    let after = false;
    const cancelling = setup({ sessionBeforeTree: [() => ({ label: "x" }), () => ({ cancel: true }), () => { after = true; }] });
    expect(await cancelling.runner.sessionBeforeTree(treeEvent())).toEqual({ cancel: true });
    expect(after).toBe(false);
  });

  it("records nothing when no handler changed anything", async () => {
    const { runner, records } = setup({ toolCall: () => undefined, toolResult: () => ({}), beforeProviderPayload: () => undefined });
    await runner.toolCall({ toolCallId: "c", toolName: "t", input: { a: 1 } });
    await runner.toolResult({ toolCallId: "c", toolName: "t", input: {}, content: [], details: undefined, isError: false, terminate: false });
    await runner.beforeProviderPayload({});
    expect(records).toEqual([]);
  });
});

describe("hook runner: every hook runs its handlers in registration order", () => {
  const signal = new AbortController().signal;
  const invocations: Record<string, (runner: ReturnType<typeof createHookRunner>) => Promise<unknown>> = {
    beforeAgentStart: (r) => r.beforeAgentStart({ prompt: "p", images: [], messages: [], systemPrompt: "s" }),
    context: (r) => r.context([user("a")]),
    beforeProviderRequest: (r) => r.beforeProviderRequest({ options: { model: "m" }, toolNames: [] }),
    beforeProviderPayload: (r) => r.beforeProviderPayload({}),
    afterProviderResponse: (r) => r.observe("afterProviderResponse", { status: 200, headers: {} }),
    toolCall: (r) => r.toolCall({ toolCallId: "c", toolName: "t", input: {} }),
    toolResult: (r) => r.toolResult({ toolCallId: "c", toolName: "t", input: {}, content: [], details: undefined, isError: false, terminate: false }),
    sessionBeforeCompact: (r) => r.sessionBeforeCompact({ preparation: {} as never, branchEntries: [], reason: "manual", signal }),
    sessionCompact: (r) => r.observe("sessionCompact", { compactionEntry: {} as never, fromHook: false, reason: "manual" }),
    sessionBeforeTree: (r) => r.sessionBeforeTree(treeEvent()),
    sessionTree: (r) => r.observe("sessionTree", { newLeafId: null, oldLeafId: null }),
    retryScheduled: (r) => r.observe("retryScheduled", { attempt: 1, delayMs: 1, error: "e" }),
    retryAttemptStart: (r) => r.observe("retryAttemptStart", { attempt: 1 }),
    retryFinished: (r) => r.observe("retryFinished", { attempt: 1, success: true }),
    modelUpdate: (r) => r.observe("modelUpdate", { model: "m", provider: "p", modelId: "m", previous: { model: "n", provider: "p", modelId: "n" } }),
    thinkingLevelUpdate: (r) => r.observe("thinkingLevelUpdate", { thinkingLevel: "low", previous: "off" }),
    toolsUpdate: (r) => r.observe("toolsUpdate", { activeToolNames: [], previous: [] }),
    resourcesUpdate: (r) => r.observe("resourcesUpdate", { skills: [], promptTemplates: [] }),
  };

  it("covers every hook name", () => {
    expect(Object.keys(invocations).sort()).toEqual([...HOOK_NAMES].sort());
  });

  it.each([...HOOK_NAMES])("%s: option handlers, then on() handlers, each awaited", async (name) => {
    const seen: string[] = [];
    const slow = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      seen.push("option-1");
    };
    const { runner } = setup({ [name]: [slow, () => void seen.push("option-2")] } as HarnessHooks);
    runner.on(name, (() => void seen.push("on-1")) as never);
    await invocations[name](runner);
    expect(seen).toEqual(["option-1", "option-2", "on-1"]);
  });
});
