/**
 * Model-based tests: paths from `xstate/graph` (guard-aware via `filterEvents`)
 * over the tool-execution and run machines; every path is then EXECUTED against
 * the running implementation (real actors, real tools and hooks, a real session
 * and writer; only the model is scripted) and must end in the state the path names.
 */
import { describe, expect, it } from "vitest";
import { assign, createActor, enqueueActions, setup, waitFor, type AnyActorRef } from "xstate";
import { getShortestPaths, getSimplePaths } from "xstate/graph";
import { z } from "zod";
import type { AgentMessage, AssistantMessage, ToolCall } from "../../src/core/messages.ts";
import { defineTool, type AgentTool } from "../../src/core/tools.ts";
import { convertToLlm } from "../../src/core/convert-to-llm.ts";
import type { LoopHooks } from "../../src/machines/agent-types.ts";
import { inputDigest } from "../../src/machines/approval-fold.ts";
import { DEFAULT_RETRY_SETTINGS } from "../../src/machines/loop-retry.ts";
import type { ToolRuntime } from "../../src/machines/loop-tools.ts";
import { provideRunLogic } from "../../src/machines/run-logic.ts";
import { runMachine, type RunInput, type RunOutput } from "../../src/machines/run.machine.ts";
import { createSessionWriter } from "../../src/machines/session-writer.ts";
import { provideToolRuntime, toolExecutionMachine } from "../../src/machines/tool-execution.machine.ts";
import { deferred, fakeModel, memorySession, sessionEvents, type FakeStep } from "./helpers.ts";

const usage = { input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null };
const call: ToolCall = { type: "toolCall", id: "c1", name: "t", arguments: {} };
const assistant = (content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"]): AssistantMessage => ({
  role: "assistant",
  content,
  api: "a",
  provider: "p",
  model: "m",
  usage,
  stopReason,
  timestamp: 0,
});
const hang = (signal: AbortSignal) => new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
const describeStep = (event: any): string =>
  event.type === "MODEL.EVENT"
    ? `${event.event.type}:${event.event.message?.stopReason}${event.event.error ? `:${event.event.error.retryable}` : ""}`
    : event.type.startsWith("xstate.done.actor.prepare") || event.type.startsWith("xstate.done.actor.finalize")
      ? `${event.type}:${event.output.kind ?? event.output.isError}`
      : event.type === "QUEUE.DRAINED"
        ? `${event.type}:${event.queue}:${event.messages.length}`
        : event.type;

describe("tool-execution machine: every simple path, executed", () => {
  const input = { toolCall: call, assistantMessage: assistant([call], "toolUse") };
  const events: any[] = [
    { type: "xstate.done.actor.prepare", output: { kind: "ready", args: {}, hookChanged: [] } },
    { type: "xstate.done.actor.prepare", output: { kind: "ready", args: {}, hookChanged: [], gate: { inputDigest: "d", source: "tool" } } },
    { type: "xstate.done.actor.prepare", output: { kind: "not_found", message: "Tool t not found" } },
    { type: "xstate.done.actor.prepare", output: { kind: "invalid", message: "bad" } },
    { type: "xstate.done.actor.prepare", output: { kind: "blocked", message: "no" } },
    { type: "EXECUTE" },
    { type: "ABORT" },
    { type: "TOOL.RETURNED", result: { content: [] } },
    { type: "TOOL.THREW", message: "x" },
    { type: "TOOL.TIMED_OUT", timeoutMs: 5 },
    { type: "xstate.done.actor.finalize", output: { result: { content: [] }, isError: false, hookChanged: [] } },
    { type: "xstate.done.actor.finalize", output: { result: { content: [] }, isError: true, hookChanged: [] } },
  ];
  const traversal = toolExecutionMachine.provide({ actions: { notifyPrepared: () => {} } });
  const paths = getSimplePaths(traversal, {
    input,
    events,
    filterEvents: (snapshot: any, event: any) => snapshot.can(event),
    serializeState: (snapshot: any) => JSON.stringify([snapshot.value, (snapshot.context as { outcome?: string }).outcome ?? ""]),
  } as never);

  it("covers every state of the machine", () => {
    const reached = new Set(paths.map((path) => String(path.state.value)));
    expect([...reached].sort()).toEqual(
      ["aborted", "blocked", "executing", "failed", "finalizing", "gated", "invalid", "not_found", "preparing", "ready", "skipped", "succeeded", "timed_out"].sort(),
    );
  });

  it.each(paths.map((path) => [path.steps.map((step) => describeStep(step.event)).join(" > "), path] as const))("%s", async (_name, path) => {
    const steps = path.steps.map((step) => step.event as any);
    const prepare = steps.find((event) => event.type === "xstate.done.actor.prepare")?.output.kind as string | undefined;
    const gated = steps.some((event) => event.type === "xstate.done.actor.prepare" && event.output.gate !== undefined);
    const execution = steps.find((event) => ["TOOL.RETURNED", "TOOL.THREW", "TOOL.TIMED_OUT"].includes(event.type))?.type as string | undefined;
    const finalize = steps.find((event) => event.type === "xstate.done.actor.finalize")?.output.isError as boolean | undefined;
    const tool: AgentTool<any> = {
      ...defineTool({
        name: "t",
        description: "scripted by the path",
        parameters: z.object({}),
        async execute(_args, { signal }) {
          if (execution === "TOOL.RETURNED") return { content: [{ type: "text", text: "ok" }] };
          if (execution === "TOOL.THREW") throw new Error("tool threw");
          return hang(signal);
        },
      }),
      ...(prepare === "invalid" ? { validate: () => ({ ok: false as const, message: "bad" }) } : {}),
      ...(execution === "TOOL.TIMED_OUT" ? { timeoutMs: 10 } : {}),
      // The gated path: the tool needs approval (issue 13), so it ends `gated` without running.
      ...(gated ? { needsApproval: true } : {}),
    };
    const hooks: LoopHooks = {
      beforeToolCall: async (_input, signal) => {
        if (prepare === undefined) return hang(signal);
        return prepare === "blocked" ? { block: true, reason: "no" } : undefined;
      },
      afterToolCall: async (_input, signal) => {
        if (finalize === undefined) return hang(signal);
        return { isError: finalize };
      },
    };
    const runtime: ToolRuntime = { getTool: (name) => (prepare === "not_found" ? undefined : name === "t" ? tool : undefined), hooks, toolContext: () => undefined };
    const actor = createActor(provideToolRuntime(toolExecutionMachine, runtime).provide({ actions: { notifyPrepared: () => {} } }), { input }).start();
    for (const [index, event] of steps.entries()) {
      if (event.type !== "EXECUTE" && event.type !== "ABORT") continue;
      const before = String(path.steps[index - 1]?.state.value ?? "preparing");
      await waitFor(actor, (snapshot) => snapshot.matches(before as never), { timeout: 5000 });
      actor.send(event);
    }
    const target = String(path.state.value);
    const snapshot = await waitFor(actor, (s) => s.matches(target as never), { timeout: 5000 });
    if (snapshot.status === "done") expect(snapshot.output?.message.toolCallId).toBe("c1");
    if (snapshot.status === "done") expect(snapshot.output?.gate !== undefined).toBe(gated);
    actor.stop();
  });
});

describe("run machine: shortest paths to every state, executed", () => {
  const user: AgentMessage = { role: "user", content: "steer", timestamp: 0 };
  const settled = { toolCallId: "c1", toolName: "t", outcome: "succeeded", message: { role: "toolResult", toolCallId: "c1", toolName: "t", content: [], isError: false, timestamp: 0 }, terminate: false, durationMs: 0, hooks: [] };
  const input: RunInput = {
    runId: "run-model",
    kind: "prompt",
    messages: [],
    prompts: [{ role: "user", content: "go", timestamp: 0 }],
    toolExecution: "parallel",
    sequentialTools: [],
    retry: { ...DEFAULT_RETRY_SETTINGS, maxRetries: 1, baseDelayMs: 1, maxDelayMs: 10 },
    model: { provider: "p", modelId: "m", api: "a" },
  };
  const events: any[] = [
    { type: "MODEL.EVENT", event: { type: "done", message: assistant([{ type: "text", text: "hi" }], "stop") } },
    { type: "MODEL.EVENT", event: { type: "done", message: assistant([call], "toolUse") } },
    { type: "MODEL.EVENT", event: { type: "error", message: { ...assistant([], "error"), errorMessage: "503" }, error: { retryable: true, status: 503 } } },
    { type: "MODEL.EVENT", event: { type: "error", message: { ...assistant([], "error"), errorMessage: "400" }, error: { retryable: false } } },
    { type: "QUEUE.DRAINED", queue: "steering", messages: [] },
    { type: "QUEUE.DRAINED", queue: "steering", messages: [user] },
    { type: "TOOL.PREPARED", toolCallId: "c1" },
    { type: "xstate.done.actor.tool:c1", output: settled },
    { type: "xstate.done.actor.tool:c1", output: { ...settled, gate: { inputDigest: "d", source: "tool" } } },
    { type: "xstate.after.retryDelay.run.retrying" },
    { type: "ABORT" },
    { type: "INTERRUPT", reason: "host shutting down" },
  ];
  const traversal = runMachine.provide({ actions: { drain: () => {} } });
  const paths = getShortestPaths(traversal, {
    input,
    events,
    limit: 20_000,
    filterEvents: (snapshot: any, event: any) => snapshot.can(event),
    serializeState: (snapshot: any) => {
      const context = snapshot.context as any;
      return JSON.stringify([snapshot.value, context.stopping?.status, context.attempt, context.batch?.settledCount ?? -1, context.batch?.readyCount ?? -1, context.batch?.gatedCount ?? -1, context.hasMoreToolCalls, context.pending.length, Math.min(context.turnIndex, 1)]);
    },
  } as never).filter((path) => path.state.status === "done");

  it("reaches done, failed, aborted, interrupted and suspended", () => {
    expect(new Set(paths.map((path) => String(path.state.value)))).toEqual(new Set(["done", "failed", "aborted", "interrupted", "suspended"]));
  });

  it.each(paths.map((path) => [path.steps.slice(1).map((step) => describeStep(step.event)).join(" > "), path] as const))("%s", async (_name, path) => {
    const steps = path.steps.slice(1).map((step, index) => ({ event: step.event as any, before: path.steps[index].state }));
    // The model replays the path's MODEL.EVENTs; the queues answer the path's drains.
    const modelSteps: FakeStep[] = steps
      .filter(({ event }) => event.type === "MODEL.EVENT")
      .map(({ event }) =>
        event.event.type === "done"
          ? event.event.message.stopReason === "toolUse"
            ? { toolCalls: [{ id: "c1", name: "t", arguments: {} }] }
            : { text: "hi" }
          : { error: event.event.message.errorMessage, info: event.event.error },
      );
    const abortIndex = steps.findIndex(({ event }) => event.type === "ABORT" || event.type === "INTERRUPT");
    if (abortIndex >= 0) {
      const before = String(JSON.stringify(steps[abortIndex].before.value));
      if (before.includes("streaming")) modelSteps.push({ hang: true });
    }
    const drains = steps.filter(({ event }) => event.type === "QUEUE.DRAINED").map(({ event }) => event.messages as AgentMessage[]);
    // Drains after the abort point are withheld, so an abort during a poll happens during the poll.
    const answered = abortIndex >= 0 ? steps.slice(0, abortIndex).filter(({ event }) => event.type === "QUEUE.DRAINED").length : Infinity;
    const prepared = steps.some(({ event }) => event.type === "TOOL.PREPARED");
    // The first settle of c1 decides: a gated one means the tool needs approval (issue 13).
    const gated = steps.find(({ event }) => event.type === "xstate.done.actor.tool:c1")?.event.output.gate !== undefined;
    const tool = defineTool({
      name: prepared || gated ? "t" : "other",
      description: "returns",
      parameters: z.object({}),
      needsApproval: gated,
      async execute() {
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const { log, session } = await memorySession();
    const writer = createSessionWriter({ session });
    const model = fakeModel(modelSteps);
    const runLogic = provideRunLogic({
      record: (recorded) => writer.push(...recorded),
      getModel: () => model,
      buildRequest: async (messages) => ({ messages: convertToLlm(messages), tools: [] }),
      runtime: { getTool: (name) => (name === tool.name ? tool : undefined), hooks: {}, toolContext: () => undefined },
      hooks: {},
      flush: () => writer.flush(),
    });
    let drainIndex = 0;
    const parent = setup({
      types: { context: {} as { output?: RunOutput } },
      actors: { run: runLogic },
      actions: {
        answer: enqueueActions(({ event, enqueue }) => {
          const queue = (event as unknown as { queue: "steering" | "followUp" }).queue;
          if (drainIndex >= answered) return;
          const messages = queue === "steering" ? (drains[drainIndex++] ?? []) : [];
          enqueue.sendTo("run", { type: "QUEUE.DRAINED", queue, messages });
        }),
      },
    }).createMachine({
      context: {},
      invoke: { id: "run", src: "run", input, onDone: { target: ".finished", actions: assign({ output: ({ event }) => event.output }) } },
      on: { "QUEUE.DRAIN": { actions: "answer" } },
      initial: "running",
      states: { running: {}, finished: { type: "final" } },
    });
    const actor = createActor(parent).start();
    // Every child is logic registered by key, so the whole tree persists (the dev build
    // XState runs under vitest throws for inline actors).
    const persisted = JSON.stringify(actor.getPersistedSnapshot());
    expect(persisted).toContain('"src":"run"');
    if (abortIndex >= 0) {
      const run = actor.getSnapshot().children.run as AnyActorRef;
      const before = steps[abortIndex].before;
      await waitFor(run, (snapshot) => snapshot.matches(before.value) && (!JSON.stringify(before.value).includes("tools") || snapshot.context.batch?.settledCount === (before.context as any).batch?.settledCount), { timeout: 5000 });
      expect(() => JSON.stringify(actor.getPersistedSnapshot())).not.toThrow();
      run.send(steps[abortIndex].event);
    }
    const done = await waitFor(actor, (snapshot) => snapshot.status === "done", { timeout: 10_000 });
    expect(done.context.output?.status).toBe(String(path.state.value));
    await writer.flush();
    const stored = await sessionEvents(log, session.id);
    const logged = stored.map((event) => event.type);
    expect(logged.at(-1)).toBe("run.ended");
    expect(stored.at(-1)?.data).toMatchObject({ status: String(path.state.value) });
    expect(logged.filter((type) => type === "turn.started").length).toBe(logged.filter((type) => type === "turn.ended").length);
  });
});

describe("resume run (issue 13): every simple path from a decided call, executed", () => {
  const gatedCall: ToolCall = { type: "toolCall", id: "c1", name: "t", arguments: {} };
  const waiting = assistant([gatedCall], "toolUse");
  const base: Omit<RunInput, "resume"> = {
    runId: "run-resume",
    kind: "resume",
    messages: [{ role: "user", content: "go", timestamp: 0 }, waiting],
    prompts: [],
    toolExecution: "parallel",
    sequentialTools: [],
    retry: { ...DEFAULT_RETRY_SETTINGS, maxRetries: 0 },
    model: { provider: "p", modelId: "m", api: "a" },
  };
  const decisions = ["approved", "denied", "cancelled"] as const;
  const settled = { toolCallId: "c1", toolName: "t", outcome: "succeeded", message: { role: "toolResult", toolCallId: "c1", toolName: "t", content: [], isError: false, timestamp: 0 }, terminate: false, durationMs: 0, hooks: [] };
  const events: any[] = [
    { type: "TOOL.PREPARED", toolCallId: "c1" },
    { type: "xstate.done.actor.tool:c1", output: settled },
    { type: "QUEUE.DRAINED", queue: "steering", messages: [] },
    { type: "QUEUE.DRAINED", queue: "followUp", messages: [] },
    { type: "MODEL.EVENT", event: { type: "done", message: assistant([{ type: "text", text: "hi" }], "stop") } },
    { type: "ABORT" },
  ];
  const cases = decisions.flatMap((status) => {
    const input: RunInput = {
      ...base,
      resume: { assistant: waiting, callIds: ["c1"], decisions: { c1: { status, inputDigest: inputDigest({}), ...(status === "denied" ? { reason: "no" } : {}) } }, ...(status === "cancelled" ? { abort: { reason: "stop" } } : {}) },
    };
    const paths = getSimplePaths(runMachine.provide({ actions: { drain: () => {} } }), {
      input,
      events,
      filterEvents: (snapshot: any, event: any) => snapshot.can(event),
      serializeState: (snapshot: any) => JSON.stringify([snapshot.value, snapshot.context.stopping?.status, snapshot.context.batch?.settledCount ?? -1, snapshot.context.batch?.readyCount ?? -1]),
    } as never).filter((path) => path.state.status === "done");
    return paths.map((path) => ({ status, input, path }));
  });

  it("ends done or aborted after every decision (a cancelled one always aborts; nothing gates again)", () => {
    const ends = new Set(cases.map(({ status, path }) => `${status}:${String(path.state.value)}`));
    expect([...ends].sort()).toEqual(["approved:aborted", "approved:done", "cancelled:aborted", "denied:aborted", "denied:done"]);
  });

  it.each(cases.map(({ status, input, path }) => [`${status}: ${path.steps.slice(1).map((step) => describeStep(step.event)).join(" > ")}`, input, path] as const))("%s", async (_name, input, path) => {
    const steps = path.steps.slice(1).map((step, index) => ({ event: step.event as any, before: path.steps[index].state }));
    const abortIndex = steps.findIndex(({ event }) => event.type === "ABORT");
    const modelSteps: FakeStep[] = steps.some(({ event }) => event.type === "MODEL.EVENT") ? [{ text: "hi" }] : [];
    if (abortIndex >= 0 && JSON.stringify(steps[abortIndex].before.value).includes("streaming")) modelSteps.push({ hang: true });
    const runs: string[] = [];
    const executing = deferred();
    const inTools = abortIndex >= 0 && JSON.stringify(steps[abortIndex].before.value).includes("tools");
    const preparedBeforeAbort = steps.slice(0, Math.max(0, abortIndex)).some(({ event }) => event.type === "TOOL.PREPARED");
    const tool = defineTool({
      name: "t",
      description: "gated",
      parameters: z.object({}),
      needsApproval: true,
      async execute(_args, { signal }) {
        runs.push("t");
        executing.resolve();
        // Before an abort in the tools state, the tool hangs so the abort finds it running.
        if (inTools) return hang(signal);
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const { log, session } = await memorySession();
    const writer = createSessionWriter({ session });
    const model = fakeModel(modelSteps);
    const runLogic = provideRunLogic({
      record: (recorded) => writer.push(...recorded),
      getModel: () => model,
      buildRequest: async (messages) => ({ messages: convertToLlm(messages), tools: [] }),
      runtime: { getTool: (name) => (name === "t" ? tool : undefined), hooks: {}, toolContext: () => undefined },
      hooks: {},
      flush: () => writer.flush(),
    });
    const answered = abortIndex >= 0 ? steps.slice(0, abortIndex).filter(({ event }) => event.type === "QUEUE.DRAINED").length : Infinity;
    let drains = 0;
    const parent = setup({
      types: { context: {} as { output?: RunOutput } },
      actors: { run: runLogic },
      actions: {
        answer: enqueueActions(({ event, enqueue }) => {
          if (drains >= answered) return;
          drains += 1;
          enqueue.sendTo("run", { type: "QUEUE.DRAINED", queue: (event as unknown as { queue: "steering" | "followUp" }).queue, messages: [] });
        }),
      },
    }).createMachine({
      context: {},
      invoke: { id: "run", src: "run", input, onDone: { target: ".finished", actions: assign({ output: ({ event }) => event.output }) } },
      on: { "QUEUE.DRAIN": { actions: "answer" } },
      initial: "running",
      states: { running: {}, finished: { type: "final" } },
    });
    const actor = createActor(parent).start();
    if (abortIndex >= 0 && !(input.resume?.abort)) {
      const run = actor.getSnapshot().children.run as AnyActorRef;
      const before = steps[abortIndex].before;
      // In the tools state: before PREPARED the abort finds the call preparing (sent at once); after it, running.
      if (inTools && preparedBeforeAbort) await executing.promise;
      else await waitFor(run, (snapshot) => snapshot.matches(before.value), { timeout: 5000 });
      run.send({ type: "ABORT" });
    }
    const done = await waitFor(actor, (snapshot) => snapshot.status === "done", { timeout: 10_000 });
    expect(done.context.output?.status).toBe(String(path.state.value));
    await writer.flush();
    const stored = await sessionEvents(log, session.id);
    const decision = input.resume!.decisions.c1.status;
    // An approved call ran once (never twice, never again asked); a denied or cancelled one never ran.
    expect(runs).toEqual(decision === "approved" && (!inTools || preparedBeforeAbort) ? ["t"] : []);
    expect(stored.filter((event) => event.type === "approval.requested")).toHaveLength(0);
    expect(stored.filter((event) => event.type === "tool.started")).toHaveLength(0);
    expect(stored.filter((event) => event.type === "tool.ended")).toHaveLength(1);
    expect(stored.at(-1)?.data).toMatchObject({ status: String(path.state.value) });
  });
});
