/**
 * Test helpers for the machines: a real session over the in-memory or SQLite log,
 * pi's oracle tools (sleep with an update), and a scripted ModelClient (a fake of
 * the MODEL only) that streams pi-ai-shaped events and can hang until aborted.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { AssistantMessage, StopReason, ToolCall } from "../../src/core/messages.ts";
import type { ModelClient, ModelErrorInfo, ModelRequest, ModelStreamEvent } from "../../src/core/model-stream.ts";
import { defineTool } from "../../src/core/tools.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";
import type { SessionHandle } from "../../src/store/session-types.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";

export async function memorySession() {
  const log = createMemoryEventLog();
  const repo = createSessionRepository({ log });
  const session = await repo.create({ cwd: "/tmp" });
  return { log, repo, session };
}

export function tempDbPath(): string {
  return join(mkdtempSync(join(tmpdir(), "arbor-machines-")), "arbor.db");
}

export async function sqliteSession(path = tempDbPath()) {
  const log = createSqliteEventLog({ path });
  const repo = createSessionRepository({ log });
  const session = await repo.create({ cwd: "/tmp" });
  return { log, repo, session, path };
}

/** pi's oracle tool: reports "working", sleeps `ms` (abortable), returns "<name> slept <ms>". */
export function sleepTool(name: string, mode?: "sequential" | "parallel") {
  return defineTool({
    name,
    description: "sleeps",
    parameters: z.object({ ms: z.number() }),
    ...(mode ? { executionMode: mode } : {}),
    async execute(args, { signal, onUpdate }) {
      onUpdate({ content: [{ type: "text", text: "working" }] });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, args.ms);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(new Error("Operation aborted"));
        });
      });
      return { content: [{ type: "text", text: `${name} slept ${args.ms}` }] };
    },
  });
}

/** One scripted reply of {@link fakeModel}. */
export interface ReplyStep {
  text?: string;
  toolCalls?: { id: string; name: string; arguments: Record<string, unknown> }[];
  stopReason?: StopReason;
  chunks?: number;
}

export type FakeStep =
  | ReplyStep
  | { error: string; info?: Partial<ModelErrorInfo>; partialText?: string }
  | { hang: true; partialText?: string }
  | { gate: Promise<void>; step: FakeStep };

export interface FakeModel extends ModelClient {
  requests: ModelRequest[];
  calls: number;
}

function base(): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: "fake-api",
    provider: "fake",
    model: "fake-model",
    usage: { input: 10, output: 5, cacheRead: null, cacheWrite: null, totalTokens: 15 },
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

const clone = (message: AssistantMessage): AssistantMessage => ({ ...message, content: message.content.map((block) => ({ ...block })) });

/** A scripted ModelClient (fake of the model only): one step per call. */
export function fakeModel(steps: FakeStep[]): FakeModel {
  const queue = [...steps];
  const model: FakeModel = {
    provider: "fake",
    modelId: "fake-model",
    api: "fake-api",
    requests: [],
    calls: 0,
    async *stream(request, { signal }): AsyncGenerator<ModelStreamEvent> {
      model.requests.push(request);
      model.calls += 1;
      let step = queue.shift();
      if (!step) throw new Error(`fakeModel: no step left for call #${model.calls}`);
      if ("gate" in step) {
        await step.gate;
        step = step.step;
      }
      const partial = base();
      yield { type: "start", partial: clone(partial) };
      const streamText = function* (text: string, pieces = 3): Generator<ModelStreamEvent> {
        const index = partial.content.length;
        partial.content.push({ type: "text", text: "" });
        yield { type: "text-start", contentIndex: index, partial: clone(partial) };
        const size = Math.max(1, Math.ceil(text.length / pieces));
        for (let offset = 0; offset < text.length; offset += size) {
          const delta = text.slice(offset, offset + size);
          (partial.content[index] as { text: string }).text += delta;
          yield { type: "text-delta", contentIndex: index, delta, partial: clone(partial) };
        }
        yield { type: "text-end", contentIndex: index, partial: clone(partial) };
      };
      if ("hang" in step) {
        if (step.partialText) yield* streamText(step.partialText);
        await new Promise<void>((resolve) => {
          if (signal?.aborted) resolve();
          signal?.addEventListener("abort", () => resolve());
        });
        yield { type: "error", message: { ...clone(partial), stopReason: "aborted", errorMessage: "Request was aborted" }, error: { retryable: false } };
        return;
      }
      if ("error" in step) {
        if (step.partialText) yield* streamText(step.partialText);
        yield {
          type: "error",
          message: { ...clone(partial), stopReason: "error", errorMessage: step.error, usage: { input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null } },
          error: { retryable: false, ...step.info },
        };
        return;
      }
      const reply = step as ReplyStep;
      if (reply.text) yield* streamText(reply.text, reply.chunks);
      for (const call of reply.toolCalls ?? []) {
        const index = partial.content.length;
        const toolCall: ToolCall = { type: "toolCall", id: call.id, name: call.name, arguments: {} };
        partial.content.push(toolCall);
        yield { type: "toolcall-start", contentIndex: index, id: call.id, name: call.name, partial: clone(partial) };
        yield { type: "toolcall-delta", contentIndex: index, id: call.id, delta: JSON.stringify(call.arguments), partial: clone(partial) };
        toolCall.arguments = call.arguments;
        yield { type: "toolcall-end", contentIndex: index, toolCall: { ...toolCall }, partial: clone(partial) };
      }
      partial.stopReason = reply.stopReason ?? (reply.toolCalls?.length ? "toolUse" : "stop");
      yield { type: "done", message: clone(partial) };
    },
  };
  return model;
}

/** Resolves when `predicate` holds for an event of the agent's committed stream. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The event types of a session, in log order. */
export async function sessionEvents(log: { readStream(id: string): Promise<StoredEvent[]> }, sessionId: string): Promise<StoredEvent[]> {
  return log.readStream(`session-${sessionId}`);
}

/**
 * Appends a run that a crash cut off mid-batch: `run.started`, `turn.started`, the user prompt,
 * an assistant message calling c1 and c2 (both `read`), and a result for c1 only.
 */
export async function appendUnfinishedRun(
  session: Pick<SessionHandle, "appendEvents" | "appendEntries">,
  runId: string,
  model: { provider: string; modelId: string; api: string },
): Promise<void> {
  const meta = { runId };
  await session.appendEvents([
    { type: "run.started", data: { runId, kind: "prompt", model }, metadata: meta },
    { type: "turn.started", data: { runId, turnId: "t0", index: 0 }, metadata: meta },
  ]);
  await session.appendEntries([
    { type: "message", message: { role: "user", content: "go", timestamp: 1 } },
    {
      type: "message",
      message: {
        role: "assistant",
        content: [
          { type: "toolCall", id: "c1", name: "read", arguments: {} },
          { type: "toolCall", id: "c2", name: "read", arguments: {} },
        ],
        api: model.api,
        provider: model.provider,
        model: model.modelId,
        usage: { input: 1, output: 1, cacheRead: null, cacheWrite: null, totalTokens: 2 },
        stopReason: "toolUse",
        timestamp: 2,
      },
    },
    { type: "message", message: { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "r1" }], isError: false, timestamp: 3 } },
  ]);
}
