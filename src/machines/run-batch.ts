/**
 * The tool batch of one turn, as pure data the run actor folds. Sequential when configured or any called tool says so, else parallel (spawned in
 * source order, then executed together); at most `maxToolCallsPerResponse` calls run, the rest get an error result. Every step is O(1) plus one
 * shallow copy (snapshots share the batch). Results enter the context in call order; gated calls wait for approval and abort closes them.
 */
import type { AssistantMessage, ToolCall, ToolResultMessage } from "../core/messages.ts";
import type { ToolExecutionMode } from "../core/tools.ts";
import { BATCH_MODES } from "./batch-modes.ts";
import type { NewEvent } from "../store/event-log.ts";
import {
  approvalCancelledText,
  deniedText,
  errorToolResult,
  interruptedText,
  lengthStopText,
  overCapText,
  skippedText,
  toolCallsOf,
} from "./loop-messages.ts";
import type { ApprovalEndStatus, ToolOutcome } from "../core/vocabulary.ts";
import { createEntryId, createMessageId, messageEntryEvent, runEvent, type RecordScope } from "./run-records.ts";
import type { ToolSettled } from "./tool-execution-types.ts";

/** Where one call of a batch is. */
export type CallState = "spawned" | "prepared" | "running" | "settled" | "gated";

/** One tool batch: calls spawn in call order, so the spawned ones are `calls[0 .. spawnedCount)`; the rest are counters and by-id records. */
export interface ToolBatch {
  assistant: AssistantMessage;
  calls: ToolCall[];
  mode: ToolExecutionMode;
  /** Calls that may run: the first `limit` (the rest were refused by the per-response cap). */
  limit: number;
  spawnedCount: number;
  /** Spawned calls that are prepared or settled (parallel preflight progress). */
  readyCount: number;
  settledCount: number;
  /** Calls waiting for approval (no result). */
  gatedCount: number;
  /** True once the prepared calls of a parallel batch were told to execute. */
  executing: boolean;
  /** Call index by id (built once, shared by every later version of the batch). */
  index: Record<string, number>;
  /** State per call index (`null`: not spawned). */
  states: (CallState | null)[];
  /** Result per call index (`null`: none yet). */
  results: (BatchResult | null)[];
}

/** The result of one settled call. */
export interface BatchResult {
  message: ToolResultMessage;
  terminate: boolean;
  entryId: string;
  outcome: ToolOutcome;
}

/** `array` with `value` at `at` (a copy: batches are immutable). */
function setAt<T>(array: readonly T[], at: number, value: T): T[] {
  const next = array.slice();
  next[at] = value;
  return next;
}

/** The state of call `id`, or undefined for an id not in the batch. */
function stateOf(batch: ToolBatch, id: string): CallState | null | undefined {
  const at = batch.index[id];
  return at === undefined ? undefined : batch.states[at];
}

/** The result of call `id`, if it has one. */
export function resultOf(batch: ToolBatch, id: string): BatchResult | undefined {
  const at = batch.index[id];
  return at === undefined ? undefined : (batch.results[at] ?? undefined);
}

/** The default cap on tool calls run from one assistant message (ours): calls after the first 128 get an error result and do not run. */
export const DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE = 128;

/** A fresh batch for the tool calls of `assistant`; at most `maxToolCalls` of them (default {@link DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE}) may run. */
export function initialBatch(
  assistant: AssistantMessage,
  options: { toolExecution: ToolExecutionMode; sequentialTools: string[]; maxToolCallsPerResponse?: number },
  only?: readonly string[],
): ToolBatch {
  const wanted = only ? new Set(only) : undefined;
  const calls = wanted ? toolCallsOf(assistant).filter((call) => wanted.has(call.id)) : toolCallsOf(assistant);
  const limit = Math.min(calls.length, options.maxToolCallsPerResponse ?? DEFAULT_MAX_TOOL_CALLS_PER_RESPONSE);
  const sequentialTools = new Set(options.sequentialTools);
  const index: Record<string, number> = {};
  calls.forEach((call, at) => {
    if (index[call.id] === undefined) index[call.id] = at;
  });
  const mode: ToolExecutionMode = calls.slice(0, limit).some((call) => sequentialTools.has(call.name)) ? "sequential" : options.toolExecution;
  return {
    assistant,
    calls,
    mode,
    limit,
    spawnedCount: 0,
    readyCount: 0,
    settledCount: 0,
    gatedCount: 0,
    executing: false,
    index,
    states: new Array<CallState | null>(calls.length).fill(null),
    results: new Array<BatchResult | null>(calls.length).fill(null),
  };
}

/** True when the next call may be spawned (see the module contract). O(1). */
export function canSpawnNext(batch: ToolBatch): boolean {
  if (batch.spawnedCount >= batch.limit) return false;
  const policy = BATCH_MODES[batch.mode];
  if (policy.gateHoldsRest && batch.gatedCount > 0) return false;
  return batch[policy.spawnAfter] === batch.spawnedCount;
}

/** The batch after spawning its next call (`calls[spawnedCount]`). */
export function markSpawned(batch: ToolBatch): ToolBatch {
  return pastSettled({ ...batch, spawnedCount: batch.spawnedCount + 1, states: setAt(batch.states, batch.spawnedCount, "spawned") });
}

/** Moves the spawn position past calls settled before they were spawned (a resume batch's denied calls). */
function pastSettled(batch: ToolBatch): ToolBatch {
  let { spawnedCount, readyCount } = batch;
  while (spawnedCount < batch.limit && batch.states[spawnedCount] === "settled") {
    spawnedCount += 1;
    readyCount += 1;
  }
  return spawnedCount === batch.spawnedCount ? batch : { ...batch, spawnedCount, readyCount };
}

/** The batch after call `id` reported it is prepared (ignored unless it was just spawned); in a sequential batch the call runs at once. */
export function markPrepared(batch: ToolBatch, id: string): ToolBatch {
  if (stateOf(batch, id) !== "spawned") return batch;
  return { ...batch, readyCount: batch.readyCount + 1, states: setAt(batch.states, batch.index[id], BATCH_MODES[batch.mode].executeOnPrepared ? "running" : "prepared") };
}

/** Prepared calls of a fully preflighted parallel batch not yet told to execute, in call order; non-empty at most once per batch. */
export function readyToExecute(batch: ToolBatch): string[] {
  if (BATCH_MODES[batch.mode].executeOnPrepared || batch.executing || batch.spawnedCount < batch.limit || batch.readyCount < batch.spawnedCount) return [];
  const ids: string[] = [];
  for (let index = 0; index < batch.limit; index++) {
    if (batch.states[index] === "prepared") ids.push(batch.calls[index].id);
  }
  return ids;
}

/** The batch after its prepared calls `ids` were told to execute. */
export function markExecuting(batch: ToolBatch, ids: readonly string[]): ToolBatch {
  const states = batch.states.slice();
  for (const id of ids) if (states[batch.index[id]] === "prepared") states[batch.index[id]] = "running";
  return { ...batch, executing: true, states };
}

/** True when call `id` was spawned and has not settled. */
export function isUnsettled(batch: ToolBatch, id: string): boolean {
  const state = stateOf(batch, id);
  return state !== undefined && state !== null && state !== "settled" && state !== "gated";
}

/** Spawned calls that have not settled, in call order (for aborting them). */
export function unsettledCalls(batch: ToolBatch): string[] {
  return batch.calls.slice(0, batch.spawnedCount).flatMap((call) => (isUnsettled(batch, call.id) ? [call.id] : []));
}

/** Calls that were told to execute and have not settled, in call order (`pendingToolCalls`). */
export function runningCalls(batch: ToolBatch): string[] {
  return batch.calls.slice(0, batch.spawnedCount).flatMap((call, at) => (batch.states[at] === "running" ? [call.id] : []));
}

/** True when every call has a result or waits for approval (sequential: also once a gated call is reached). */
export function isBatchSettled(batch: ToolBatch): boolean {
  if (batch.settledCount + batch.gatedCount === batch.calls.length) return true;
  return BATCH_MODES[batch.mode].gateHoldsRest && batch.gatedCount > 0 && batch.settledCount + batch.gatedCount === batch.spawnedCount;
}

/** The calls waiting for approval, in call order. */
export function gatedCalls(batch: ToolBatch): string[] {
  return batch.calls.flatMap((call, at) => (batch.states[at] === "gated" ? [call.id] : []));
}

/** Folds a call that needs approval: gated, no result, `approval.requested` recorded. Ignored unless the call is unsettled. */
export function markGated(batch: ToolBatch, settled: ToolSettled, scope: RecordScope): { batch: ToolBatch; events: NewEvent[] } {
  const state = stateOf(batch, settled.toolCallId);
  if (!settled.gate || state === undefined || state === null || state === "settled" || state === "gated") return { batch, events: [] };
  const events: NewEvent[] = [];
  for (const hook of settled.hooks) {
    if (hook.error) events.push(runEvent(scope, "hook.failed", { hook: hook.hook, error: hook.error }));
    else if (hook.changes.length) events.push(runEvent(scope, "hook.applied", { hook: hook.hook, changes: hook.changes }));
  }
  events.push(
    runEvent(scope, "approval.requested", {
      runId: scope.runId,
      toolCallId: settled.toolCallId,
      toolName: settled.toolName,
      inputDigest: settled.gate.inputDigest,
      source: settled.gate.source,
    }),
  );
  return {
    batch: {
      ...batch,
      gatedCount: batch.gatedCount + 1,
      readyCount: state === "spawned" ? batch.readyCount + 1 : batch.readyCount,
      states: setAt(batch.states, batch.index[settled.toolCallId], "gated"),
    },
    events,
  };
}

/** Settles one call that will not run with `message` (`approval.ended` first when given). */
function settleWithout(
  batch: ToolBatch,
  scope: RecordScope,
  call: ToolCall,
  outcome: ToolOutcome,
  message: ToolResultMessage,
  approvalEnded?: { status: "cancelled" | "denied"; reason?: string },
): { batch: ToolBatch; events: NewEvent[] } {
  const at = batch.index[call.id];
  const state = batch.states[at];
  const entryId = createEntryId();
  const events: NewEvent[] = [];
  if (approvalEnded) {
    events.push(runEvent(scope, "approval.ended", { toolCallId: call.id, toolName: call.name, status: approvalEnded.status, ...(approvalEnded.reason ? { reason: approvalEnded.reason } : {}) }));
  }
  events.push(
    runEvent(scope, "tool.ended", { toolCallId: call.id, toolName: call.name, isError: true, outcome, durationMs: 0, entryId }),
    messageEntryEvent(scope, message, entryId),
  );
  if (BATCH_MODES[batch.mode].messagesOnSettle) events.push(...messageEvents(scope, message, entryId));
  return {
    batch: {
      ...batch,
      settledCount: batch.settledCount + 1,
      gatedCount: state === "gated" ? batch.gatedCount - 1 : batch.gatedCount,
      states: setAt(batch.states, at, "settled"),
      results: setAt(batch.results, at, { message, terminate: false, entryId, outcome }),
    },
    events,
  };
}

/** Closes every gated call of an aborted batch with a result saying it did not run (and `approval.ended { status: "cancelled" }`). */
export function closeGated(batch: ToolBatch, scope: RecordScope, reason?: string): { batch: ToolBatch; events: NewEvent[] } {
  let next = batch;
  const events: NewEvent[] = [];
  for (const id of gatedCalls(batch)) {
    const call = batch.calls[batch.index[id]];
    const folded = settleWithout(next, scope, call, "skipped", errorToolResult(call, approvalCancelledText(call, reason), "skipped", { arbor: "approval_cancelled" }), {
      status: "cancelled",
      ...(reason ? { reason } : {}),
    });
    next = folded.batch;
    events.push(...folded.events);
  }
  return { batch: next, events };
}

/**
 * A decision a `resume` run applies to one call: `approved` runs it (if its arguments still match `inputDigest`), `denied` gives the model an error
 * result saying the user declined (with the reason), `cancelled` closes it unrun (the run was aborted). `record` says the decision is not logged yet
 * (`approval.ended` is recorded with the result). A continued run (`continuation.ts`) decides its in-flight calls: `replay` runs a `replay: "safe"`
 * tool's call again (its `tool.started` is logged; `inputDigest` when it was approved), `interrupted` gives a replay-unsafe call the interrupted
 * result (`note`: what became of the process group it had started).
 */
export type ResumeDecision =
  | { status: ApprovalEndStatus; reason?: string; inputDigest: string; record?: boolean }
  | { status: "replay"; inputDigest?: string }
  | { status: "interrupted"; note?: string };

/** Settles the denied and cancelled calls of a resume batch at once, unspawned; approved calls are left to run. */
export function settleDecided(batch: ToolBatch, decisions: Readonly<Record<string, ResumeDecision>>, scope: RecordScope): { batch: ToolBatch; events: NewEvent[] } {
  let next = batch;
  const events: NewEvent[] = [];
  for (const call of batch.calls.slice(0, batch.limit)) {
    const decision = decisions[call.id];
    if (!decision || decision.status === "approved" || decision.status === "replay") continue;
    if (decision.status === "interrupted") {
      const folded = settleWithout(next, scope, call, "interrupted", errorToolResult(call, interruptedText(call, decision.note), "interrupted"));
      next = folded.batch;
      events.push(...folded.events);
      continue;
    }
    const denied = decision.status === "denied";
    const message = denied
      ? errorToolResult(call, deniedText(call, decision.reason), "denied")
      : errorToolResult(call, approvalCancelledText(call, decision.reason), "skipped", { arbor: "approval_cancelled" });
    const ended = decision.record ? { status: decision.status as "cancelled" | "denied", ...(decision.reason ? { reason: decision.reason } : {}) } : undefined;
    const folded = settleWithout(next, scope, call, denied ? "denied" : "skipped", message, ended);
    next = folded.batch;
    events.push(...folded.events);
  }
  return { batch: pastSettled(next), events };
}

function messageEvents(scope: RecordScope, message: ToolResultMessage, entryId: string): NewEvent[] {
  const messageId = createMessageId();
  return [
    runEvent(scope, "message.started", { messageId, role: "toolResult" }),
    runEvent(scope, "message.ended", { messageId, role: "toolResult", entryId }),
  ];
}

/** Folds one settled call: `hook.*`, `tool.ended` and the result entry (plus message events when sequential). A second settle is ignored. */
export function settleInBatch(batch: ToolBatch, settled: ToolSettled, scope: RecordScope): { batch: ToolBatch; events: NewEvent[] } {
  const state = stateOf(batch, settled.toolCallId);
  if (state === undefined || state === null || state === "settled") return { batch, events: [] };
  const at = batch.index[settled.toolCallId];
  const entryId = createEntryId();
  const events: NewEvent[] = [];
  // The files the call changed commit with its result, and before it (`docs/workspace.md`).
  if (settled.workspace) {
    const { checkpointId, changes, storedBytes } = settled.workspace;
    events.push(runEvent(scope, "workspace.checkpointed", { checkpointId, entryId, reason: "tool", toolCallId: settled.toolCallId, changes, storedBytes }));
  }
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
  if (BATCH_MODES[batch.mode].messagesOnSettle) events.push(...messageEvents(scope, settled.message, entryId));
  return {
    batch: {
      ...batch,
      settledCount: batch.settledCount + 1,
      readyCount: state === "spawned" ? batch.readyCount + 1 : batch.readyCount,
      states: setAt(batch.states, at, "settled"),
      results: setAt(batch.results, at, { message: settled.message, terminate: settled.terminate, entryId, outcome: settled.outcome }),
    },
    events,
  };
}

/** Gives every call that was never spawned a "skipped" result (the run was aborted before it started; no tool.* events: it never started). */
export function skipUnspawned(batch: ToolBatch, scope: RecordScope, reason?: string): { batch: ToolBatch; events: NewEvent[] } {
  return settleUnspawned(batch, scope, batch.spawnedCount, batch.limit, (call) => errorToolResult(call, skippedText(call, reason), "skipped"));
}

/** Gives every call over the per-response cap an error result saying it was not run (no tool.* events). Call once, at batch start. */
export function refuseOverCap(batch: ToolBatch, scope: RecordScope): { batch: ToolBatch; events: NewEvent[] } {
  return settleUnspawned(batch, scope, batch.limit, batch.calls.length, (call) =>
    errorToolResult(call, overCapText(call, batch.calls.length, batch.limit), "skipped", { arbor: "over_cap" }),
  );
}

/** Settles calls `from .. to` that never spawned with the given result (one copy of each record). */
function settleUnspawned(
  batch: ToolBatch,
  scope: RecordScope,
  from: number,
  to: number,
  resultOf: (call: ToolCall) => ToolResultMessage,
): { batch: ToolBatch; events: NewEvent[] } {
  const events: NewEvent[] = [];
  const states = batch.states.slice();
  const results = batch.results.slice();
  let settledCount = batch.settledCount;
  for (let index = from; index < to; index++) {
    const call = batch.calls[index];
    if (states[index] !== null) continue;
    const message = resultOf(call);
    const entryId = createEntryId();
    events.push(messageEntryEvent(scope, message, entryId));
    if (BATCH_MODES[batch.mode].messagesOnSettle) events.push(...messageEvents(scope, message, entryId));
    states[index] = "settled";
    results[index] = { message, terminate: false, entryId, outcome: "skipped" };
    settledCount += 1;
  }
  if (events.length === 0) return { batch, events };
  return { batch: { ...batch, states, results, settledCount }, events };
}

/** A batch of an assistant stopped for `length`: no call runs; each gets an error result saying its arguments may be truncated. */
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
    const folded = settleInBatch(markSpawned(next), settled, scope);
    next = folded.batch;
    events.push(...folded.events);
  }
  return { batch: next, events };
}

/** The end of a batch: results in call order, a parallel batch's tool-result message events (pi's order), and whether all said terminate. */
export function batchRecords(batch: ToolBatch, scope: RecordScope): { results: ToolResultMessage[]; events: NewEvent[]; terminate: boolean } {
  const results: ToolResultMessage[] = [];
  const events: NewEvent[] = [];
  for (const call of batch.calls) {
    const result = resultOf(batch, call.id);
    if (!result) continue;
    results.push(result.message);
    if (!BATCH_MODES[batch.mode].messagesOnSettle) events.push(...messageEvents(scope, result.message, result.entryId));
  }
  const terminate = results.length > 0 && batch.calls.every((call) => resultOf(batch, call.id)?.terminate === true);
  return { results, events, terminate };
}
