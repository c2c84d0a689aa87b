/**
 * The tool batch of one turn, as pure data the run actor folds: its calls' progress. Sequential when configured or any called tool says so, else
 * parallel (spawned in source order, then executed together); at most `maxToolCallsPerResponse` calls run, the rest get an error result. Every step
 * is O(1) plus one shallow copy (snapshots share the batch). Settling calls (results, gates, calls that never run) is `run-batch-settle.ts`.
 */
import type { AssistantMessage, ToolCall, ToolResultMessage } from "../core/messages.ts";
import type { ToolExecutionMode } from "../core/tools.ts";
import { BATCH_MODES } from "./batch-modes.ts";
import { toolCallsOf } from "./loop-messages.ts";
import type { ToolOutcome } from "../core/vocabulary.ts";

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
export function setAt<T>(array: readonly T[], at: number, value: T): T[] {
  const next = array.slice();
  next[at] = value;
  return next;
}

/** The state of call `id`, or undefined for an id not in the batch. */
export function stateOf(batch: ToolBatch, id: string): CallState | null | undefined {
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
export function pastSettled(batch: ToolBatch): ToolBatch {
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
