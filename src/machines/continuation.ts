/**
 * The continuation of an unfinished run by a process that may never have seen it (`docs/durability.md`), read from the session view only.
 * `planContinuation` returns the takeover append (`run.resumed`, the in-flight partial closed `aborted`) and the run's input, or throws
 * `NothingToResumeError`. Calls without a result re-run when their tool's `replay` is `safe` (same idempotency key), else get the `interrupted`
 * result; `RunContinuation.at` says where the loop re-enters. Calls waiting for approval stay with recovery.
 */
import type { AgentMessage, AssistantMessage, ToolCall } from "../core/messages.ts";
import { NothingToResumeError } from "../core/errors.ts";
import { endOrphanedGroup, orphanStatus, type ToolProcess } from "../core/process-group.ts";
import type { AgentTool } from "../core/tools.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { unansweredCalls } from "../store/session/session-activity.ts";
import { approvalsOf } from "./approval-fold.ts";
import { processNote, toolCallsOf } from "./loop-messages.ts";
import { closeOpenMessages } from "./recovery.ts";
import type { ResumeDecision } from "./run-batch-settle.ts";
import { currentRunOwner } from "./run-lease.ts";
import { runEvent } from "./run-records.ts";
import type { RunContinuation } from "./run-types.ts";

/** The default `reason` of `run.resumed`. */
export const OWNER_STOPPED_REASON = "The process running this run stopped before it ended; continued from the log.";

/** What {@link planContinuation} needs besides the session. */
export interface ContinuationInput {
  /** The run to continue (the open run's id when the continuation was asked for). */
  runId: string;
  /** Logged in `run.resumed`. */
  reason: string;
  /** The tool of a call, by name (its `replay` policy decides an in-flight call). */
  getTool: (name: string) => AgentTool<any, any, any> | undefined;
}

/** The takeover append and where the run machine goes on. */
export interface ContinuationPlan {
  /** `run.resumed` and the closed partial message: committed before anything else of the run. */
  events: NewEvent[];
  continuation: RunContinuation;
  /** The context the run goes on from (the synthetic results of its in-flight calls left out). */
  messages: AgentMessage[];
  /** At `tools`: the batch of in-flight calls and their decisions (the run machine's `resume`). */
  resume?: { assistant: AssistantMessage; callIds: string[]; decisions: Record<string, ResumeDecision> };
  /** Ends the process groups in-flight calls had started and that are still alive (after the append committed). */
  endOrphans: () => void;
}

/** A result the context's pairing repair made up for a call without one (`store/session/pairing.ts`). */
function isSynthetic(message: AgentMessage): boolean {
  return message.role === "toolResult" && (message.details as { arborSynthetic?: unknown } | undefined)?.arborSynthetic === true;
}

/** True when the model is to be called next after `message`: a prompt (not a tool result), or a reply that failed. */
const wantsReply = (message: AgentMessage | undefined): boolean =>
  message !== undefined && message.role !== "toolResult" && (message.role !== "assistant" || message.stopReason === "error" || message.stopReason === "aborted");

/**
 * Plans the continuation of the session's open run (see the module contract). Reads the view as it is: the caller catches it up with the log first.
 */
export function planContinuation(session: SessionHandle, input: ContinuationInput): ContinuationPlan {
  const open = session.view.activity.openRun;
  if (!open || open.runId !== input.runId) {
    throw new NothingToResumeError(`Session ${session.id} has no unfinished run${open ? ` ${input.runId}` : ""} to resume: its last run has ended.`, {
      details: { sessionId: session.id, runId: input.runId },
    });
  }
  const { runId, openTurn } = open;
  const closed = closeOpenMessages(open, { runId, ...(openTurn ? { turnId: openTurn.turnId } : {}) });
  const context = session.view.buildContext().messages;
  // The run's calls without a result, the approved calls a `resume` run carried over among them.
  const pending = unansweredCalls(open).filter((call) => !open.gated.includes(call.id));
  const approvals = approvalsOf(session.view.activity);

  const replay: string[] = [];
  const interrupted: string[] = [];
  const decisions: Record<string, ResumeDecision> = {};
  const orphans: ToolProcess[] = [];
  for (const call of pending) {
    const group = open.processes[call.id] as ToolProcess | undefined;
    const status = group ? orphanStatus(group) : undefined;
    if (group && status === "alive") orphans.push(group);
    if (input.getTool(call.name)?.replay === "safe") {
      replay.push(call.id);
      const approval = approvals.get(call.id);
      decisions[call.id] = { status: "replay", ...(approval?.status === "approved" ? { inputDigest: approval.inputDigest } : {}) };
    } else {
      interrupted.push(call.id);
      decisions[call.id] = { status: "interrupted", ...(group && status ? { note: processNote(group.pgid, status) } : {}) };
    }
  }

  const resumed = runEvent({ runId }, "run.resumed", {
    runId,
    previousOwner: open.owner ?? null,
    reason: input.reason,
    ...(replay.length ? { replayToolCallIds: replay } : {}),
    ...(interrupted.length ? { interruptedToolCallIds: interrupted } : {}),
    ...(closed.closedMessageEntryId ? { closedMessageEntryId: closed.closedMessageEntryId } : {}),
  });
  const events: NewEvent[] = [{ ...resumed, metadata: { ...resumed.metadata, owner: currentRunOwner() } }, ...closed.events];
  const lastIndex = openTurn?.index ?? open.lastTurnIndex ?? 0;
  const turn = openTurn ? { turnIndex: openTurn.index, turnId: openTurn.turnId } : { turnIndex: lastIndex, turnId: `${runId}:${lastIndex}` };
  const endOrphans = () => {
    for (const orphan of orphans) endOrphanedGroup(orphan);
  };

  if (pending.length > 0) {
    const ids = new Set(pending.map((call) => call.id));
    const messages = context.filter((message) => !(message.role === "toolResult" && ids.has(message.toolCallId) && isSynthetic(message)));
    const assistant = lastAssistantHolding(messages, pending[0]);
    if (!assistant) {
      throw new NothingToResumeError(
        `Session ${session.id}: the calls of run ${runId} still without a result (${[...ids].join(", ")}) are not on the current branch's last assistant message; move back to it to resume them.`,
        { details: { sessionId: session.id, runId } },
      );
    }
    const callIds = toolCallsOf(assistant).filter((call) => ids.has(call.id)).map((call) => call.id);
    return {
      events,
      messages,
      continuation: { at: "tools", ...turn, assistant, hasMoreToolCalls: true },
      resume: { assistant, callIds, decisions },
      endOrphans,
    };
  }
  const last = context.at(-1);
  const lastAssistant = [...context].reverse().find((message): message is AssistantMessage => message.role === "assistant");
  const base = { events, messages: context, endOrphans };
  const hasMoreToolCalls = last?.role === "toolResult";
  if (openTurn) {
    // The turn's model call was in flight (its partial is closed now), not made yet, or failed: call again.
    if (closed.closedMessageEntryId || !openTurn.replied || wantsReply(last)) return { ...base, continuation: { at: "streaming", ...turn, hasMoreToolCalls: false } };
    return { ...base, continuation: { at: "turnEnding", ...turn, ...(lastAssistant ? { assistant: lastAssistant } : {}), hasMoreToolCalls } };
  }
  if (wantsReply(last)) return { ...base, continuation: { at: "turnStarting", ...turn, hasMoreToolCalls: false } };
  return { ...base, continuation: { at: "steering", ...turn, ...(lastAssistant ? { assistant: lastAssistant } : {}), hasMoreToolCalls } };
}

/** The context's last assistant message, when it holds `call`. */
function lastAssistantHolding(messages: readonly AgentMessage[], call: ToolCall): AssistantMessage | undefined {
  const last = [...messages].reverse().find((message): message is AssistantMessage => message.role === "assistant");
  return last && toolCallsOf(last).some((candidate) => candidate.id === call.id) ? last : undefined;
}
