/**
 * The tool batch of one turn, as pure data the run actor folds: which calls were
 * spawned, prepared, started and settled, and their results.
 *
 * Contract (pi's batch rules, `../shared/reference/pi-behaviour.md` §1.4; ours where marked):
 * - mode is sequential when configured or when any called tool declares
 *   `executionMode: "sequential"`, else parallel;
 * - parallel: calls are spawned (prepared) one after another in source order, then
 *   every prepared call executes concurrently; sequential: a call is spawned only
 *   after the previous one settled;
 * - each settle is recorded at once (`tool.ended` + `entry.appended`, ours: pi #7053);
 * - results enter the context in the assistant's call order; the batch terminates
 *   the loop only when it has results and every one says `terminate`.
 *
 * @example
 * ```ts
 * let batch = initialBatch(assistant, input);
 * const { batch: next, events } = settleInBatch(batch, settled, scope);
 * ```
 */
import type { AssistantMessage, ToolCall, ToolResultMessage } from "../core/messages.ts";
import type { NewEvent } from "../store/event-log.ts";
import { errorToolResult, lengthStopText, skippedText, toolCallsOf, type ToolOutcome } from "./loop-messages.ts";
import { createEntryId, createMessageId, messageEntryEvent, runEvent, type RecordScope } from "./run-records.ts";
import type { ToolSettled } from "./tool-execution.machine.ts";

/**
 * The state of one tool batch.
 *
 * @example
 * ```ts
 * const batch: ToolBatch = initialBatch(assistant, { toolExecution: "parallel", sequentialTools: [] });
 * ```
 */
export interface ToolBatch {
  assistant: AssistantMessage;
  calls: ToolCall[];
  mode: "parallel" | "sequential";
  spawned: string[];
  prepared: string[];
  running: string[];
  settled: string[];
  results: Record<string, { message: ToolResultMessage; terminate: boolean; entryId: string; outcome: ToolOutcome }>;
}

/**
 * A fresh batch for the tool calls of `assistant`.
 *
 * @example
 * ```ts
 * initialBatch(assistant, { toolExecution: "parallel", sequentialTools: ["bash"] }).mode;
 * ```
 */
export function initialBatch(
  assistant: AssistantMessage,
  options: { toolExecution: "parallel" | "sequential"; sequentialTools: string[] },
): ToolBatch {
  const calls = toolCallsOf(assistant);
  const sequential = options.toolExecution === "sequential" || calls.some((call) => options.sequentialTools.includes(call.name));
  return {
    assistant,
    calls,
    mode: sequential ? "sequential" : "parallel",
    spawned: [],
    prepared: [],
    running: [],
    settled: [],
    results: {},
  };
}

/**
 * True when the next call may be spawned (see the module contract).
 *
 * @example
 * ```ts
 * if (canSpawnNext(batch)) spawn(batch.calls[batch.spawned.length]);
 * ```
 */
export function canSpawnNext(batch: ToolBatch): boolean {
  if (batch.spawned.length >= batch.calls.length) return false;
  const ready = batch.mode === "parallel" ? [...batch.prepared, ...batch.settled] : batch.settled;
  return batch.spawned.every((id) => ready.includes(id));
}

/**
 * Prepared calls of a fully preflighted parallel batch that have not been told to execute.
 *
 * @example
 * ```ts
 * for (const id of readyToExecute(batch)) send(id, { type: "EXECUTE" });
 * ```
 */
export function readyToExecute(batch: ToolBatch): string[] {
  if (batch.mode !== "parallel" || batch.spawned.length < batch.calls.length) return [];
  if (!batch.spawned.every((id) => batch.prepared.includes(id) || batch.settled.includes(id))) return [];
  return batch.prepared.filter((id) => !batch.running.includes(id) && !batch.settled.includes(id));
}

function messageEvents(scope: RecordScope, message: ToolResultMessage, entryId: string): NewEvent[] {
  const messageId = createMessageId();
  return [
    runEvent(scope, "message.started", { messageId, role: "toolResult" }),
    runEvent(scope, "message.ended", { messageId, role: "toolResult", entryId }),
  ];
}

/**
 * Folds one settled call: records `hook.*`, `tool.ended` and the result entry
 * (plus its message events in a sequential batch). Ignores a second settle of a call.
 *
 * @example
 * ```ts
 * const { batch: next, events } = settleInBatch(batch, settled, { runId, turnId });
 * ```
 */
export function settleInBatch(batch: ToolBatch, settled: ToolSettled, scope: RecordScope): { batch: ToolBatch; events: NewEvent[] } {
  if (batch.settled.includes(settled.toolCallId)) return { batch, events: [] };
  const entryId = createEntryId();
  const events: NewEvent[] = [];
  for (const hook of settled.hooks) {
    if (hook.error) events.push(runEvent(scope, "hook.failed", { hook: hook.hook, error: hook.error }));
    else if (hook.changes.length) events.push(runEvent(scope, "hook.applied", { hook: hook.hook, changes: hook.changes }));
  }
  events.push(
    runEvent(scope, "tool.ended", {
      toolCallId: settled.toolCallId,
      toolName: settled.toolName,
      isError: settled.message.isError,
      outcome: settled.outcome,
      durationMs: Math.max(0, settled.durationMs),
      entryId,
    }),
    messageEntryEvent(scope, settled.message, entryId),
  );
  if (batch.mode === "sequential") events.push(...messageEvents(scope, settled.message, entryId));
  return {
    batch: {
      ...batch,
      settled: [...batch.settled, settled.toolCallId],
      results: {
        ...batch.results,
        [settled.toolCallId]: { message: settled.message, terminate: settled.terminate, entryId, outcome: settled.outcome },
      },
    },
    events,
  };
}

/**
 * Gives every call that was never spawned a "skipped" result (the run was aborted
 * before it started; no tool.* events: it never started).
 *
 * @example
 * ```ts
 * const { batch: next, events } = skipUnspawned(batch, { runId }, "user pressed stop");
 * ```
 */
export function skipUnspawned(batch: ToolBatch, scope: RecordScope, reason?: string): { batch: ToolBatch; events: NewEvent[] } {
  let next = batch;
  const events: NewEvent[] = [];
  for (const call of batch.calls) {
    if (next.spawned.includes(call.id) || next.settled.includes(call.id)) continue;
    const message = errorToolResult(call, skippedText(call, reason), "skipped");
    const entryId = createEntryId();
    events.push(messageEntryEvent(scope, message, entryId));
    if (batch.mode === "sequential") events.push(...messageEvents(scope, message, entryId));
    next = {
      ...next,
      settled: [...next.settled, call.id],
      results: { ...next.results, [call.id]: { message, terminate: false, entryId, outcome: "skipped" } },
    };
  }
  return { batch: next, events };
}

/**
 * A batch for an assistant message that stopped for `length`: no call runs, each
 * gets an error result saying its arguments may be truncated (ours; later pi).
 *
 * @example
 * ```ts
 * const { batch: next, events } = refuseLengthBatch(initialBatch(assistant, input), { runId });
 * ```
 */
export function refuseLengthBatch(batch: ToolBatch, scope: RecordScope): { batch: ToolBatch; events: NewEvent[] } {
  let next: ToolBatch = { ...batch, mode: "sequential" };
  const events: NewEvent[] = [];
  for (const call of batch.calls) {
    events.push(runEvent(scope, "tool.started", { toolCallId: call.id, toolName: call.name }));
    const settled: ToolSettled = {
      toolCallId: call.id,
      toolName: call.name,
      outcome: "skipped",
      message: errorToolResult(call, lengthStopText(call), "skipped", { arbor: "length" }),
      terminate: false,
      durationMs: 0,
      hooks: [],
    };
    const folded = settleInBatch({ ...next, spawned: [...next.spawned, call.id] }, settled, scope);
    next = folded.batch;
    events.push(...folded.events);
  }
  return { batch: next, events };
}

/**
 * The end of a batch: the results in call order, the tool-result message events
 * of a parallel batch (pi's order), and whether every result said terminate.
 *
 * @example
 * ```ts
 * const { results, events, terminate } = batchRecords(batch, { runId, turnId });
 * ```
 */
export function batchRecords(batch: ToolBatch, scope: RecordScope): { results: ToolResultMessage[]; events: NewEvent[]; terminate: boolean } {
  const results: ToolResultMessage[] = [];
  const events: NewEvent[] = [];
  for (const call of batch.calls) {
    const result = batch.results[call.id];
    if (!result) continue;
    results.push(result.message);
    if (batch.mode === "parallel") events.push(...messageEvents(scope, result.message, result.entryId));
  }
  const terminate = results.length > 0 && batch.calls.every((call) => batch.results[call.id]?.terminate === true);
  return { results, events, terminate };
}
