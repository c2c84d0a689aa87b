/**
 * Crash recovery of a session whose LAST run has no terminal event, read from `view.activity`. One atomic version-checked append closes it: an
 * `interrupted` result for each call without one, the partial assistant closed `aborted`, `turn.ended`, then `run.ended` (`interrupted`, or
 * `suspended` when calls wait for approval) and, for a standalone typed-agent invocation, its `agent.ended`; then live recorded process groups
 * are killed. Idempotent; a run owned by a live process, or left for `durability: "continue"`, is left open. Errors are thrown.
 */
import { hostname } from "node:os";
import type { AssistantMessage, ThinkingContent, TextContent, ToolCall } from "../core/messages.ts";
import { unknownUsage } from "../core/messages.ts";
import { emptyAnswerTotals } from "../core/agent-answer.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { ArborEventData } from "../store/events/catalogue.ts";
import { unansweredCalls, type OpenInvocation, type OpenRun, type SessionActivity, type StreamedBlock } from "../store/session/session-activity.ts";
import type { Durability } from "./agent-types.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { endOrphanedGroup, orphanStatus, type ToolProcess } from "../core/process-group.ts";
import { errorToolResult, interruptedText, processNote } from "./loop-messages.ts";
import { createEntryId, createMessageId, messageEntryEvent, runEvent } from "./run-records.ts";
import { findLiveStreamRun, isRunOwnerAlive, type RunOwner } from "./run-lease.ts";
import { sessionActorOf } from "./session-actor.ts";
import type { SessionWrites } from "./session-slot.ts";
import { closeInterruptedSummaries } from "./summary-recovery.ts";
import { ignored } from "../core/ignored.ts";

/**
 * What recovery did.
 * @example
 * const { recovered, interruptedToolCallIds } = await recoverSession(session);
 */
export interface RecoveryReport {
  recovered: boolean;
  runId?: string;
  /** Set when the unfinished run belongs to another live process: it was left alone. */
  liveRun?: { runId: string; owner: RunOwner };
  /** Set with `durability: "continue"`: the unfinished run whose owner is gone, left open to be continued. */
  resumable?: { runId: string; owner: unknown };
  interruptedToolCallIds: string[];
  /** Calls gated for approval by the recovered run: left waiting (the run ended `suspended`). */
  pendingToolCallIds?: string[];
  closedMessageEntryId?: string;
  /** Summary intents (compaction, branch summary) closed as interrupted (`summary-recovery.ts`). */
  interruptedSummaryIds?: string[];
  /** The typed-agent invocation whose `agent.ended` recovery wrote (see the module contract). */
  endedInvocationId?: string;
}

/** The text of the errorMessage of a partial assistant message closed by recovery. */
export const INTERRUPTED_MESSAGE_TEXT = "Interrupted: the process stopped while this message was streaming; it is incomplete.";

function rebuildPartial(blocks: readonly StreamedBlock[], model: { provider?: string; modelId?: string; api?: string }): AssistantMessage {
  const content: AssistantMessage["content"] = [];
  for (const block of [...blocks].sort((a, b) => a.contentIndex - b.contentIndex)) {
    if (block.kind === "text") content.push({ type: "text", text: block.text } satisfies TextContent);
    else if (block.kind === "thinking") content.push({ type: "thinking", thinking: block.text } satisfies ThinkingContent);
    else {
      let args: Record<string, unknown> = {};
      try {
        const parsed: unknown = JSON.parse(block.text);
        if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
      } catch (error) {
        ignored("truncated tool-call arguments are kept empty; the call never ran and an aborted message is never sent to a model", error);
      }
      content.push({ type: "toolCall", id: block.toolCallId ?? `interrupted-${block.contentIndex}`, name: block.toolName ?? "unknown", arguments: args } satisfies ToolCall);
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
 * The events that close the open run's partial assistant messages (rebuilt from their logged deltas, stopReason `aborted`), and the entry id of the
 * last one closed. Recovery and the continuation of a run (`continuation.ts`) both use it.
 */
export function closeOpenMessages(open: OpenRun, scope: { runId: string; turnId?: string }): { events: NewEvent[]; closedMessageEntryId?: string } {
  const events: NewEvent[] = [];
  let closedMessageEntryId: string | undefined;
  for (const { messageId, role, blocks } of open.openMessages) {
    if (role !== "assistant") continue;
    const message = rebuildPartial(blocks, open.model);
    closedMessageEntryId = createEntryId();
    events.push(
      messageEntryEvent(scope, message, closedMessageEntryId),
      runEvent(scope, "message.ended", { messageId, role: "assistant", entryId: closedMessageEntryId, stopReason: "aborted", errorMessage: INTERRUPTED_MESSAGE_TEXT, usage: message.usage }),
    );
  }
  return closedMessageEntryId ? { events, closedMessageEntryId } : { events };
}

/**
 * How recovery treats an unfinished run whose owner is gone: `"interrupt"` (the default) closes it; `"continue"` leaves a run that waits for no
 * approval open for its continuation (`continuation.ts`) and reports it as `resumable`.
 */
export interface RecoveryOptions {
  durability?: Durability;
}

/**
 * Recovers the session's last unfinished run (see the module contract). `writes` is the session's one writer; the default is the session actor's
 * (`sessionActorOf(session).writes`: its agent's writer when an agent drives the handle). Throws the append's error (e.g.
 * `ExpectedVersionConflictError`) and writes nothing then.
 * @example
 * const report = await recoverSession(session);
 */
export async function recoverSession(
  session: SessionHandle,
  writes: Pick<SessionWrites, "record"> = sessionActorOf(session).writes,
  options: RecoveryOptions = {},
): Promise<RecoveryReport> {
  const summaries = await closeInterruptedSummaries(session, writes);
  const report = await recoverRun(session, writes, options.durability ?? "interrupt");
  return summaries.length > 0 ? { ...report, interruptedSummaryIds: summaries } : report;
}

async function recoverRun(session: SessionHandle, through: Pick<SessionWrites, "record">, durability: Durability): Promise<RecoveryReport> {
  // The view's activity projection (`session-activity.ts`) holds the last run as the log tells it.
  const activity = session.view.activity;
  const last = activity.runs.at(-1);
  if (!last) return { recovered: false, interruptedToolCallIds: [] };
  const liveRun = await findLiveStreamRun(session.ownership, activity);
  if (liveRun) return { recovered: false, runId: liveRun.runId, liveRun, interruptedToolCallIds: [] };
  const open = activity.openRun;
  if (!open) return closeEndedInvocation(session, activity, through, last.runId);
  const { runId, openTurn } = open;
  // Durable execution: a run that waits for no approval is continued, not closed (`continuation.ts`).
  if (durability === "continue" && open.gated.length === 0) return { recovered: false, runId, resumable: { runId, owner: open.owner }, interruptedToolCallIds: [] };
  const gated = new Set(open.gated);

  const scope = { runId, turnId: openTurn?.turnId };
  const writes: NewEvent[] = [];
  const interruptedToolCallIds: string[] = [];
  const pendingToolCallIds: string[] = [];
  const orphans: ToolProcess[] = [];
  // The run's own calls and the approved calls a `resume` run carried over: each one without a result gets one.
  for (const call of unansweredCalls(open)) {
    if (gated.has(call.id)) {
      pendingToolCallIds.push(call.id);
      continue;
    }
    const entryId = createEntryId();
    const messageId = createMessageId();
    interruptedToolCallIds.push(call.id);
    // A process group the tool started may have outlived its owner: say what is done with it,
    // and end it once this result is committed (the log explains the kill first).
    const group = open.processes[call.id] as ToolProcess | undefined;
    const status = group ? orphanStatus(group) : undefined;
    if (group && status === "alive") orphans.push(group);
    writes.push(
      runEvent(scope, "tool.ended", { toolCallId: call.id, toolName: call.name, isError: true, outcome: "interrupted", durationMs: 0, entryId }),
      runEvent(scope, "message.started", { messageId, role: "toolResult" }),
      messageEntryEvent(scope, errorToolResult(call, interruptedText(call, group && status ? processNote(group.pgid, status) : undefined), "interrupted"), entryId),
      runEvent(scope, "message.ended", { messageId, role: "toolResult", entryId }),
    );
  }
  const closed = closeOpenMessages(open, scope);
  writes.push(...closed.events);
  const { closedMessageEntryId } = closed;
  if (openTurn) {
    writes.push(runEvent(scope, "turn.ended", { runId, turnId: openTurn.turnId, index: openTurn.index, toolCallIds: interruptedToolCallIds, stopReason: "aborted" }));
  }
  // A standalone typed agent's invocation ends with its run (one terminal event, as every
  // lifecycle); a workflow's agent step is the workflow's to resume in its session.
  const invocation = pendingToolCallIds.length === 0 && !activity.workflowId ? activity.invocation : undefined;
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
  if (invocation) writes.push(invocationEnded(invocation, runId, { status: "interrupted", reason: "The process running the agent stopped before the invocation ended; recovered when its session was opened again." }));
  await through.record(writes);
  const endedProcessGroups = orphans.filter((orphan) => endOrphanedGroup(orphan) === "killed").map((orphan) => orphan.pgid);
  return {
    recovered: true,
    runId,
    interruptedToolCallIds,
    ...(endedProcessGroups.length > 0 ? { endedProcessGroups } : {}),
    ...(pendingToolCallIds.length > 0 ? { pendingToolCallIds } : {}),
    ...(closedMessageEntryId ? { closedMessageEntryId } : {}),
    ...(invocation ? { endedInvocationId: invocation.invocationId } : {}),
  };
}

type InvocationEnding =
  | { status: "failed"; code: string; error: string }
  | { status: "aborted"; reason: string }
  | { status: "interrupted"; reason: string };

/** The invocation's `agent.ended`, with the totals its logged messages add up to. */
function invocationEnded(invocation: OpenInvocation, runId: string, ending: InvocationEnding): NewEvent<"agent.ended", ArborEventData<"agent.ended">> {
  const { repairs, usage } = invocation.totals ?? emptyAnswerTotals();
  return { type: "agent.ended", data: { agent: invocation.agent, invocationId: invocation.invocationId, runId, repairs, usage, ...ending }, metadata: { runId } };
}

const isOfThisHost = (owner: unknown): boolean => typeof owner === "object" && owner !== null && (owner as { host?: unknown }).host === hostname();

/** An invocation whose last run ended before its `agent.ended` was written (see the module contract). */
async function closeEndedInvocation(session: SessionHandle, activity: SessionActivity, through: Pick<SessionWrites, "record">, lastRunId: string): Promise<RecoveryReport> {
  const none: RecoveryReport = { recovered: false, runId: lastRunId, interruptedToolCallIds: [] };
  const { invocation } = activity;
  const run = invocation?.lastRun;
  if (!invocation || !run?.ended || activity.workflowId || run.ended.status === "suspended" || run.runId !== lastRunId) return none;
  // Its owner, alive, writes the agent.ended itself (it is judging the answer now). The run's
  // lease ended with the run, so a live owner of this host is also recognised by its process.
  const ownerAlive = session.ownership
    ? (await session.ownership.isOwnedElsewhere()) || (isOfThisHost(run.owner) && isRunOwnerAlive(run.owner))
    : isRunOwnerAlive(run.owner);
  if (ownerAlive) return none;
  const ended = run.ended;
  const prefix = `Agent "${invocation.agent}" run ${ended.status}: `;
  const ending: InvocationEnding =
    ended.status === "failed" || ended.status === "budget_exceeded"
      ? { status: "failed", code: "AGENT_RUN_FAILED" /* AgentRunError.code (src/agents, a layer above) */, error: `${prefix}${ended.status === "failed" ? ended.error : ended.reason}` }
      : ended.status === "aborted"
        ? { status: "aborted", reason: `${prefix}${ended.reason ?? "aborted"}` }
        : ended.status === "interrupted"
          ? { status: "interrupted", reason: ended.reason }
          : { status: "interrupted", reason: "The process running the agent stopped after its run ended and before its answer was judged (the answer stays in the session); recovered when its session was opened again." };
  await through.record([invocationEnded(invocation, run.runId, ending)]);
  return { ...none, endedInvocationId: invocation.invocationId };
}
