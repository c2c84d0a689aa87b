/**
 * Settling the calls of a tool batch (`run-batch.ts`), as pure folds that give the next batch and the events to record: a result (`tool.ended`,
 * the result entry, message events when the mode records them on settle), a gate (`approval.requested`, no result), or a result without a run
 * (denied, cancelled, interrupted, skipped after an abort, over the cap, after a `length` stop). A call settles once; a second settle is ignored.
 * Results enter the context in call order (`batchRecords`).
 */
import type { ToolCall, ToolResultMessage } from "../core/messages.ts";
import { BATCH_MODES } from "./batch-modes.ts";
import type { NewEvent } from "../store/event-log.ts";
import { approvalCancelledText, deniedText, errorToolResult, interruptedText, lengthStopText, overCapText, skippedText } from "./loop-messages.ts";
import type { ApprovalEndStatus, ToolOutcome } from "../core/vocabulary.ts";
import { gatedCalls, markSpawned, pastSettled, resultOf, setAt, stateOf, type ToolBatch } from "./run-batch.ts";
import { createEntryId, createMessageId, messageEntryEvent, runEvent, type RecordScope } from "./run-records.ts";
import type { ToolSettled } from "./tool-execution-types.ts";

/** `hook.failed` or `hook.applied` for each of the call's hooks that failed or changed something, in hook order. */
function hookEvents(settled: ToolSettled, scope: RecordScope): NewEvent[] {
  return settled.hooks.flatMap((hook): NewEvent[] => {
    if (hook.error) return [runEvent(scope, "hook.failed", { hook: hook.hook, error: hook.error })];
    return hook.changes.length ? [runEvent(scope, "hook.applied", { hook: hook.hook, changes: hook.changes })] : [];
  });
}

/** Folds a call that needs approval: gated, no result, `approval.requested` recorded. Ignored unless the call is unsettled. */
export function markGated(batch: ToolBatch, settled: ToolSettled, scope: RecordScope): { batch: ToolBatch; events: NewEvent[] } {
  const state = stateOf(batch, settled.toolCallId);
  if (!settled.gate || state === undefined || state === null || state === "settled" || state === "gated") return { batch, events: [] };
  const events: NewEvent[] = [];
  events.push(...hookEvents(settled, scope));
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
  events.push(...hookEvents(settled, scope));
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
