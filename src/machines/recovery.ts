/**
 * Crash recovery of a session whose last run has no terminal event.
 *
 * Contract (ours; pi has no equivalent, `../shared/reference/pi-behaviour.md` §11.8):
 * - a run is unfinished when its `run.started` has no later `run.ended` for the same
 *   runId; only the LAST run is considered;
 * - recovery appends, in ONE atomic append through the session (version-checked, so
 *   it writes nothing when another writer got there first): a synthetic error result
 *   for every tool call of the run without a result (text says the tool was interrupted,
 *   may not have finished, was not re-run and may need to be run again; `details.arbor = "interrupted"`;
 *   when the tool recorded a process group in `tool.updated`, the text says whether it was still
 *   running, had ended, or could not be checked), the partial
 *   assistant message rebuilt from its logged deltas and closed with stopReason
 *   `aborted`, `turn.ended` for an open turn, then `run.ended` with `status: "interrupted"`;
 * - a call that this run gated for approval (`approval.requested` in the run, no `tool.ended`)
 *   is NOT interrupted (nothing of it ran): it keeps waiting, and the run ends `suspended`
 *   (`pendingToolCallIds`) instead of `interrupted`, so the session reopens awaiting
 *   approval (ours, issue 13); a call approved earlier and being run by this (`resume`)
 *   run is interrupted like any other;
 * - after that append commits, each recorded process group that is still alive, on this host, with
 *   the recorded leader start time is ended with SIGKILL (`process-group.ts`; issue 19 finding 5);
 *   the report lists them in `endedProcessGroups`;
 * - nothing is re-run and nothing is duplicated: a second call finds the terminal
 *   event and does nothing (idempotent);
 * - a run whose `run.started` names another live process on this host as its owner
 *   (`metadata.owner`, see `run-lease.ts`) is left alone: the report carries `liveRun`;
 * - errors (e.g. `ExpectedVersionConflictError`) are thrown to the caller.
 *
 * @example
 * ```ts
 * const report = await recoverSession(session);
 * if (report.recovered) console.log(report.interruptedToolCallIds);
 * ```
 */
import { firstValueFrom, takeWhile, toArray } from "rxjs";
import { isKnownEntry } from "../core/entries.ts";
import type { AgentMessage, AssistantMessage, ThinkingContent, TextContent, ToolCall } from "../core/messages.ts";
import { unknownUsage } from "../core/messages.ts";
import type { NewEvent, StoredEvent } from "../store/event-log.ts";
import { isEventOfType, type ArborEvent, type ArborEventData } from "../store/events/catalogue.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { endOrphanedGroup, orphanStatus, type ToolProcess } from "../core/process-group.ts";
import { errorToolResult, interruptedText, processNote, toolCallsOf } from "./loop-messages.ts";
import { createEntryId, createMessageId, messageEntryEvent, runEvent } from "./run-records.ts";
import { findLiveStreamRun, type RunOwner } from "./run-lease.ts";
import { createSessionWriter } from "./session-writer.ts";
import { closeInterruptedSummaries } from "./summary-recovery.ts";

/**
 * What recovery did.
 *
 * @example
 * ```ts
 * const { recovered, interruptedToolCallIds } = await recoverSession(session);
 * ```
 */
export interface RecoveryReport {
  recovered: boolean;
  runId?: string;
  /** Set when the unfinished run belongs to another live process: it was left alone. */
  liveRun?: { runId: string; owner: RunOwner };
  interruptedToolCallIds: string[];
  /** Calls gated for approval by the recovered run: left waiting (the run ended `suspended`). */
  pendingToolCallIds?: string[];
  closedMessageEntryId?: string;
  /** Summary intents (compaction, branch summary) closed as interrupted (`summary-recovery.ts`). */
  interruptedSummaryIds?: string[];
}

/**
 * The text of the errorMessage of a partial assistant message closed by recovery.
 *
 * @example
 * ```ts
 * if (message.errorMessage === INTERRUPTED_MESSAGE_TEXT) console.log("closed by recovery");
 * ```
 */
export const INTERRUPTED_MESSAGE_TEXT = "Interrupted: the process stopped while this message was streaming; it is incomplete.";

/**
 * Reads the session stream up to the view's version.
 *
 * @example
 * ```ts
 * const events = await readSessionEvents(session);
 * ```
 */
export async function readSessionEvents(session: SessionHandle): Promise<ArborEvent[]> {
  const target = session.view.version;
  if (target <= 0) return [];
  return firstValueFrom(session.events$().pipe(takeWhile((event) => event.version < target, true), toArray()));
}

type Delta = ArborEventData<"message.delta">;

function rebuildPartial(deltas: Delta[], model: { provider?: string; modelId?: string; api?: string }): AssistantMessage {
  const blocks = new Map<number, { kind: Delta["kind"]; text: string; id?: string; name?: string }>();
  for (const delta of deltas) {
    const block = blocks.get(delta.contentIndex) ?? { kind: delta.kind, text: "" };
    block.text += delta.delta;
    block.id ??= delta.toolCallId;
    block.name ??= delta.toolName;
    blocks.set(delta.contentIndex, block);
  }
  const content: AssistantMessage["content"] = [];
  for (const index of [...blocks.keys()].sort((a, b) => a - b)) {
    const block = blocks.get(index)!;
    if (block.kind === "text") content.push({ type: "text", text: block.text } satisfies TextContent);
    else if (block.kind === "thinking") content.push({ type: "thinking", thinking: block.text } satisfies ThinkingContent);
    else {
      let args: Record<string, unknown> = {};
      try {
        const parsed: unknown = JSON.parse(block.text);
        if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
      } catch {
        // Truncated arguments: kept empty; the call never ran and an aborted message is never sent to a model.
      }
      content.push({ type: "toolCall", id: block.id ?? `interrupted-${index}`, name: block.name ?? "unknown", arguments: args } satisfies ToolCall);
    }
  }
  return {
    role: "assistant",
    content,
    api: model.api ?? "unknown",
    provider: model.provider ?? "unknown",
    model: model.modelId ?? "unknown",
    usage: unknownUsage(),
    stopReason: "aborted",
    errorMessage: INTERRUPTED_MESSAGE_TEXT,
    timestamp: Date.now(),
  };
}

/**
 * The steering and follow-up queues as the log last recorded them.
 *
 * @example
 * ```ts
 * const { steering, followUp }: RestoredQueues = restoreQueues(events);
 * ```
 */
export interface RestoredQueues {
  steering: AgentMessage[];
  followUp: AgentMessage[];
  passive: AgentMessage[];
}

/**
 * Folds `queue.changed` events into the queues' contents: `enqueued` appends its
 * message, `dequeued` keeps the last `size` messages (polls take from the head),
 * `cleared` empties the queue. Pure.
 *
 * @example
 * ```ts
 * const { steering, followUp } = restoreQueues(await readSessionEvents(session));
 * ```
 */
export function restoreQueues(events: readonly StoredEvent[]): RestoredQueues {
  const queues: RestoredQueues = { steering: [], followUp: [], passive: [] };
  for (const event of events) {
    if (!isEventOfType(event, "queue.changed")) continue;
    const { data } = event;
    const queue = queues[data.queue];
    if (!queue) continue;
    if (data.action === "enqueued" && data.message) queue.push(data.message);
    else if (data.action === "dequeued") queue.splice(0, Math.max(0, queue.length - data.size));
    else if (data.action === "cleared") queue.length = 0;
  }
  return queues;
}

/**
 * Recovers the session's last unfinished run (see the module contract).
 * Throws the append's error (e.g. `ExpectedVersionConflictError`) and writes nothing then.
 *
 * @example
 * ```ts
 * const report = await recoverSession(session);
 * ```
 */
export async function recoverSession(session: SessionHandle): Promise<RecoveryReport> {
  const events = await readSessionEvents(session);
  const summaries = await closeInterruptedSummaries(session, events);
  const report = await recoverRun(session, events);
  return summaries.length > 0 ? { ...report, interruptedSummaryIds: summaries } : report;
}

async function recoverRun(session: SessionHandle, events: readonly ArborEvent[]): Promise<RecoveryReport> {
  let startIndex = -1;
  for (let index = events.length - 1; index >= 0; index -= 1) {
    if (events[index].type === "run.started") {
      startIndex = index;
      break;
    }
  }
  if (startIndex < 0) return { recovered: false, interruptedToolCallIds: [] };
  const liveRun = await findLiveStreamRun(session.ownership, events);
  if (liveRun) return { recovered: false, runId: liveRun.runId, liveRun, interruptedToolCallIds: [] };
  const startedEvent = events[startIndex];
  if (startedEvent.type !== "run.started") return { recovered: false, interruptedToolCallIds: [] };
  const started = startedEvent.data;
  const runId = started.runId;
  const tail = events.slice(startIndex + 1);
  if (tail.some((event) => event.type === "run.ended" && event.data.runId === runId)) {
    return { recovered: false, runId, interruptedToolCallIds: [] };
  }

  const openMessages = new Map<string, string>();
  const deltas = new Map<string, Delta[]>();
  const assistants: AssistantMessage[] = [];
  const results = new Set<string>();
  const gated = new Set<string>();
  const processes = new Map<string, ToolProcess>();
  let openTurn: { turnId: string; index: number } | undefined;
  for (const event of tail) {
    switch (event.type) {
      case "message.started":
        openMessages.set(event.data.messageId, event.data.role);
        break;
      case "message.ended":
        openMessages.delete(event.data.messageId);
        deltas.delete(event.data.messageId);
        break;
      case "message.delta": {
        const list = deltas.get(event.data.messageId) ?? [];
        list.push(event.data);
        deltas.set(event.data.messageId, list);
        break;
      }
      case "approval.requested":
        if (event.data.runId === runId) gated.add(event.data.toolCallId);
        break;
      case "tool.ended":
        gated.delete(event.data.toolCallId);
        break;
      case "tool.updated":
        if (event.data.process) processes.set(event.data.toolCallId, event.data.process);
        break;
      case "turn.started":
        openTurn = { turnId: event.data.turnId, index: event.data.index };
        break;
      case "turn.ended":
        openTurn = undefined;
        break;
      case "entry.appended": {
        const { entry } = event.data;
        if (!isKnownEntry(entry) || entry.type !== "message") break;
        const { message } = entry;
        if (message.role === "assistant" && message.stopReason !== "error" && message.stopReason !== "aborted") assistants.push(message);
        if (message.role === "toolResult") results.add(message.toolCallId);
        break;
      }
    }
  }

  const scope = { runId, turnId: openTurn?.turnId };
  const writes: NewEvent[] = [];
  const interruptedToolCallIds: string[] = [];
  const pendingToolCallIds: string[] = [];
  const orphans: ToolProcess[] = [];
  for (const assistant of assistants) {
    for (const call of toolCallsOf(assistant)) {
      if (results.has(call.id)) continue;
      if (gated.has(call.id)) {
        pendingToolCallIds.push(call.id);
        continue;
      }
      const entryId = createEntryId();
      const messageId = createMessageId();
      interruptedToolCallIds.push(call.id);
      // A process group the tool started may have outlived its owner: say what is done with it,
      // and end it once this result is committed (the log explains the kill first).
      const group = processes.get(call.id);
      const status = group ? orphanStatus(group) : undefined;
      if (group && status === "alive") orphans.push(group);
      writes.push(
        runEvent(scope, "tool.ended", { toolCallId: call.id, toolName: call.name, isError: true, outcome: "interrupted", durationMs: 0, entryId }),
        runEvent(scope, "message.started", { messageId, role: "toolResult" }),
        messageEntryEvent(scope, errorToolResult(call, interruptedText(call, group && status ? processNote(group.pgid, status) : undefined), "interrupted"), entryId),
        runEvent(scope, "message.ended", { messageId, role: "toolResult", entryId }),
      );
    }
  }
  let closedMessageEntryId: string | undefined;
  for (const [messageId, role] of openMessages) {
    if (role !== "assistant") continue;
    const message = rebuildPartial(deltas.get(messageId) ?? [], started.model ?? {});
    closedMessageEntryId = createEntryId();
    writes.push(
      messageEntryEvent(scope, message, closedMessageEntryId),
      runEvent(scope, "message.ended", { messageId, role: "assistant", entryId: closedMessageEntryId, stopReason: "aborted", errorMessage: INTERRUPTED_MESSAGE_TEXT, usage: message.usage }),
    );
  }
  if (openTurn) {
    writes.push(runEvent(scope, "turn.ended", { runId, turnId: openTurn.turnId, index: openTurn.index, toolCallIds: interruptedToolCallIds, stopReason: "aborted" }));
  }
  writes.push(
    pendingToolCallIds.length > 0
      ? runEvent({ runId }, "run.ended", { runId, status: "suspended", pendingToolCallIds, interruptedToolCallIds })
      : runEvent({ runId }, "run.ended", {
          runId,
          status: "interrupted",
          reason: "The process stopped before the run ended; recovered when the session was opened again.",
          interruptedToolCallIds,
          ...(closedMessageEntryId ? { closedMessageEntryId } : {}),
        }),
  );
  const writer = createSessionWriter({ session });
  writer.push(...writes);
  await writer.flush();
  if (writer.failure !== undefined) throw writer.failure;
  const endedProcessGroups = orphans.filter((orphan) => endOrphanedGroup(orphan) === "killed").map((orphan) => orphan.pgid);
  return {
    recovered: true,
    runId,
    interruptedToolCallIds,
    ...(endedProcessGroups.length > 0 ? { endedProcessGroups } : {}),
    ...(pendingToolCallIds.length > 0 ? { pendingToolCallIds } : {}),
    ...(closedMessageEntryId ? { closedMessageEntryId } : {}),
  };
}
