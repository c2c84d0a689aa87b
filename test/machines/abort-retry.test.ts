/**
 * Abort (ours: no model call after an abort, pi makes one), errors as data, and
 * retries with backoff over a real session and a scripted model.
 */
import { describe, expect, it } from "vitest";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { z } from "zod";
import type { AssistantMessage, ToolResultMessage } from "../../src/core/messages.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { retryDecision, resolveRetrySettings } from "../../src/machines/loop-retry.ts";
import { recoverSession } from "../../src/machines/recovery.ts";
import { deferred, fakeModel, memorySession, sessionEvents, sleepTool } from "./helpers.ts";

const waitFor = (agent: ReturnType<typeof createAgent>, type: string, predicate: (data: any) => boolean = () => true) => {
  const done = deferred();
  const subscription = agent.runEvents$.subscribe((event) => {
    if (event.type === type && predicate(event.data)) {
      subscription.unsubscribe();
      done.resolve();
    }
  });
  return done.promise;
};

describe("abort", () => {
  it("mid-stream keeps the partial message as aborted and makes no further model call", async () => {
    const { log, session } = await memorySession();
    const model = fakeModel([{ hang: true, partialText: "partial answer" }, { text: "never" }]);
    const agent = createAgent({ session, model });
    let streamed = "";
    const allDeltas = deferred();
    agent.runEvents$.subscribe((event) => {
      if (event.type !== "message.delta") return;
      streamed += (event.data as { delta: string }).delta;
      if (streamed === "partial answer") allDeltas.resolve();
    });
    const outcome = agent.prompt("go");
    await allDeltas.promise;
    // A reader replays the stream in progress from the committed deltas.
    const inProgress = (await sessionEvents(log, session.id)).filter((e) => e.type === "message.delta").map((e) => (e.data as { delta: string }).delta);
    expect(inProgress.join("")).toBe("partial answer");
    agent.abort("user pressed stop");
    const result = await outcome;
    expect(result.status).toBe("aborted");
    expect(model.calls).toBe(1);
    const last = session.view.buildContext().messages.at(-1) as AssistantMessage;
    expect(last).toMatchObject({ role: "assistant", stopReason: "aborted", errorMessage: "user pressed stop" });
    expect(last.content).toEqual([{ type: "text", text: "partial answer" }]);
    const types = (await sessionEvents(log, session.id)).map((event) => event.type);
    expect(types.at(-1)).toBe("run.ended");
    expect((await sessionEvents(log, session.id)).at(-1)?.data).toMatchObject({ status: "aborted" });
    expect(types.filter((type) => type === "turn.started")).toHaveLength(1);
  });

  it("mid-tool aborts every running tool through its signal, gives each an aborted result, and calls no model", async () => {
    const { log, session } = await memorySession();
    const signals: AbortSignal[] = [];
    const bothRunning = deferred();
    const wait = defineTool({
      name: "wait",
      description: "waits until aborted",
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise<never>((_, reject) => {
          signals.push(signal);
          if (signals.length === 2) bothRunning.resolve();
          signal.addEventListener("abort", () => reject(new Error("stopped")));
        }),
    });
    const model = fakeModel([{ toolCalls: [{ id: "A", name: "wait", arguments: {} }, { id: "B", name: "wait", arguments: {} }] }, { text: "never" }]);
    const agent = createAgent({ session, model, tools: [wait] });
    const outcome = agent.prompt("go");
    await bothRunning.promise;
    agent.abort();
    const result = await outcome;
    expect(result.status).toBe("aborted");
    expect(model.calls).toBe(1);
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
    const toolResults = session.view.buildContext().messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
    expect(toolResults.map((m) => [m.toolCallId, m.isError, (m.content[0] as { text: string }).text])).toEqual([
      ["A", true, expect.stringMatching(/^Tool "wait" was aborted while running, so it may not have finished.*may need to be run again\.$/)],
      ["B", true, expect.stringMatching(/^Tool "wait" was aborted while running, so it may not have finished.*may need to be run again\.$/)],
    ]);
    const finished = (await sessionEvents(log, session.id)).filter((e) => isEventOfType(e, "tool.ended")).map((e) => e.data.outcome);
    expect(finished).toEqual(["aborted", "aborted"]);
  });

  it("no prepared-but-unstarted tool starts after an abort during preflight (pi #8935)", async () => {
    const { log, session } = await memorySession();
    const executed: string[] = [];
    const hookEntered = deferred();
    const tool = defineTool({
      name: "t",
      description: "records",
      parameters: z.object({}),
      async execute(_args, { toolCallId }) {
        executed.push(toolCallId);
        return { content: [{ type: "text", text: "ran" }] };
      },
    });
    const model = fakeModel([{ toolCalls: [{ id: "A", name: "t", arguments: {} }, { id: "B", name: "t", arguments: {} }, { id: "C", name: "t", arguments: {} }] }]);
    const agent = createAgent({
      session,
      model,
      tools: [tool],
      hooks: {
        beforeToolCall: async ({ toolCallId }, signal) => {
          if (toolCallId !== "B") return undefined;
          hookEntered.resolve();
          await new Promise((resolve) => signal.addEventListener("abort", resolve));
          return undefined;
        },
      },
    });
    const outcome = agent.prompt("go");
    await hookEntered.promise;
    agent.abort();
    expect((await outcome).status).toBe("aborted");
    expect(executed).toEqual([]);
    const events = await sessionEvents(log, session.id);
    expect(events.filter((e) => e.type === "tool.started").map((e) => (e.data as { toolCallId: string }).toolCallId)).toEqual(["A", "B"]);
    const results = session.view.buildContext().messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
    expect(results.map((m) => m.toolCallId)).toEqual(["A", "B", "C"]);
    expect(results.every((m) => m.isError && /did not run: the run was aborted.*may need to be run again/.test((m.content[0] as { text: string }).text))).toBe(true);
  });

  it("continue() works after an abort and duplicates nothing", async () => {
    const { session } = await memorySession();
    const model = fakeModel([{ hang: true, partialText: "half" }, { text: "full answer" }]);
    const agent = createAgent({ session, model });
    const delta = waitFor(agent, "message.delta");
    const outcome = agent.prompt("go");
    await delta;
    agent.abort();
    await outcome;
    const next = await agent.continue();
    expect(next.status).toBe("done");
    const roles = session.view.buildContext().messages.map((m) => `${m.role}:${m.role === "assistant" ? m.stopReason : ""}`);
    expect(roles).toEqual(["user:", "assistant:aborted", "assistant:stop"]);
  });
});

describe("dispose during a run", () => {
  it("interrupts the run: every call gets a result, no model call follows, the run ends interrupted", async () => {
    const { log, session } = await memorySession();
    const running = deferred();
    const wait = defineTool({
      name: "wait",
      description: "waits until aborted",
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise<never>((_, reject) => {
          running.resolve();
          signal.addEventListener("abort", () => reject(new Error("stopped")));
        }),
    });
    const model = fakeModel([{ toolCalls: [{ id: "A", name: "wait", arguments: {} }] }, { text: "never" }]);
    const agent = createAgent({ session, model, tools: [wait] });
    const outcome = agent.prompt("go");
    await running.promise;
    await agent.dispose();
    expect((await outcome).status).toBe("interrupted");
    expect(model.calls).toBe(1);
    const types = (await sessionEvents(log, session.id)).map((e) => e.type);
    expect(types.slice(-2)).toEqual(["turn.ended", "run.ended"]);
    expect((await sessionEvents(log, session.id)).at(-1)?.data).toMatchObject({ status: "interrupted" });
    expect(session.view.buildContext().diagnostics).toEqual([]);
    expect(await recoverSession(session)).toMatchObject({ recovered: false });
  });
});

describe("errors are data", () => {
  it("a provider failure ends the run failed with a persisted error message", async () => {
    const { log, session } = await memorySession();
    const agent = createAgent({ session, model: fakeModel([{ error: "HTTP 400: bad request", info: { retryable: false, status: 400 } }]) });
    const outcome = await agent.prompt("go");
    expect(outcome).toMatchObject({ status: "failed", error: "HTTP 400: bad request" });
    expect(session.view.buildContext().messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "HTTP 400: bad request" });
    const types = (await sessionEvents(log, session.id)).map((e) => e.type);
    expect(types.slice(-3)).toEqual(["message.ended", "turn.ended", "run.ended"]);
    expect((await sessionEvents(log, session.id)).at(-1)?.data).toMatchObject({ status: "failed", error: "HTTP 400: bad request" });
    expect(agent.getState().errorMessage).toBe("HTTP 400: bad request");
  });

  it("a model client that throws becomes an error message, not an exception", async () => {
    const { session } = await memorySession();
    const model = fakeModel([]);
    const outcome = await createAgent({ session, model }).prompt("go");
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toMatch(/no step left/);
  });
});

describe("retry", () => {
  it("retries a retryable error with backoff, logs every attempt and appends one assistant message", async () => {
    const { log, session } = await memorySession();
    const model = fakeModel([
      { error: "503 overloaded", info: { retryable: true, status: 503 }, partialText: "par" },
      { error: "429 rate limited", info: { retryable: true, status: 429, retryAfterMs: 15 } },
      { text: "finally" },
    ]);
    const agent = createAgent({ session, model, retry: { baseDelayMs: 1, maxDelayMs: 50 } });
    const outcome = await agent.prompt("go");
    expect(outcome.status).toBe("done");
    const events = await sessionEvents(log, session.id);
    const retry = events.filter((e) => e.type.startsWith("retry.")).map((e) => ({ type: e.type, ...(e.data as object) }));
    expect(retry).toEqual([
      { type: "retry.scheduled", attempt: 1, delayMs: 1, error: "503 overloaded", status: 503 },
      { type: "retry.started", attempt: 1 },
      { type: "retry.scheduled", attempt: 2, delayMs: 15, error: "429 rate limited", status: 429 },
      { type: "retry.started", attempt: 2 },
      { type: "retry.ended", attempt: 2, success: true },
    ]);
    const ended = events.filter((e) => e.type === "message.ended" && (e.data as { role: string }).role === "assistant").map((e) => e.data as Record<string, unknown>);
    expect(ended.map((data) => data.discarded ?? false)).toEqual([true, true, false]);
    expect(ended[0].usage).toEqual({ input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null });
    expect(ended[2].usage).toMatchObject({ input: 10, output: 5 });
    const assistants = session.view.buildContext().messages.filter((m) => m.role === "assistant");
    expect(assistants).toHaveLength(1);
    expect(assistants[0]).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "finally" }] });
  });

  it("gives up after maxRetries and persists the last error", async () => {
    const { session } = await memorySession();
    const failing = { error: "502 bad gateway", info: { retryable: true, status: 502 } };
    const model = fakeModel([failing, failing, failing]);
    const outcome = await createAgent({ session, model, retry: { maxRetries: 2, baseDelayMs: 1 } }).prompt("go");
    expect(model.calls).toBe(3);
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toMatch(/502 bad gateway \(gave up after 2 retries\)/);
    expect(session.view.buildContext().messages.filter((m) => m.role === "assistant")).toHaveLength(1);
  });

  it("abort during the backoff cancels the retry", async () => {
    const { log, session } = await memorySession();
    const model = fakeModel([{ error: "503", info: { retryable: true } }, { text: "never" }]);
    const agent = createAgent({ session, model, retry: { baseDelayMs: 60_000 } });
    const scheduled = waitFor(agent, "retry.scheduled");
    const outcome = agent.prompt("go");
    await scheduled;
    agent.abort();
    expect((await outcome).status).toBe("aborted");
    expect(model.calls).toBe(1);
    const finished = (await sessionEvents(log, session.id)).find((e) => e.type === "retry.ended");
    expect(finished?.data).toEqual({ attempt: 1, success: false, error: "Retry cancelled" });
  });

  it("backoff doubles, is capped, honours retry-after up to the cap and refuses beyond it", () => {
    const settings = resolveRetrySettings({ baseDelayMs: 100, maxDelayMs: 1000, maxRetries: 5 });
    expect([1, 2, 3, 4, 5].map((n) => retryDecision({ retryable: true }, n, settings))).toEqual([
      { retry: true, delayMs: 100 },
      { retry: true, delayMs: 200 },
      { retry: true, delayMs: 400 },
      { retry: true, delayMs: 800 },
      { retry: true, delayMs: 1000 },
    ]);
    expect(retryDecision({ retryable: true }, 6, settings)).toMatchObject({ retry: false });
    expect(retryDecision({ retryable: true, retryAfterMs: 700 }, 1, settings)).toEqual({ retry: true, delayMs: 700 });
    expect(retryDecision({ retryable: true, retryAfterMs: 5000 }, 1, settings)).toMatchObject({ retry: false, reason: expect.stringMatching(/5000 ms/) });
    expect(retryDecision({ retryable: false }, 1, settings)).toMatchObject({ retry: false });
    expect(retryDecision({ retryable: true, contextOverflow: true }, 1, settings)).toMatchObject({ retry: false });
  });
});

describe("observables", () => {
  it("events$ replays the session then goes live; state$ starts with the current snapshot", async () => {
    const { session } = await memorySession();
    const agent = createAgent({ session, model: fakeModel([{ text: "one" }, { text: "two" }]), tools: [sleepTool("fast")] });
    await agent.prompt("first");
    const seen: string[] = [];
    const secondFinished = deferred();
    const subscription = agent.events$.subscribe((event) => {
      seen.push(event.type);
      if (seen.filter((type) => type === "run.ended").length === 2) secondFinished.resolve();
    });
    const states: string[] = [];
    const stateSubscription = agent.state$.subscribe((state) => states.push(state.status));
    await agent.prompt("second");
    await agent.waitForIdle();
    await secondFinished.promise;
    subscription.unsubscribe();
    stateSubscription.unsubscribe();
    expect(seen[0]).toBe("session.created");
    expect(seen.filter((type) => type === "run.ended")).toHaveLength(2);
    expect(states[0]).toBe("idle");
    expect(states).toContain("running");
    expect(states.at(-1)).toBe("idle");
  });
});
