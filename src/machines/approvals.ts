/**
 * Durable tool approval, read from the log: a call is gated once `approval.requested` is logged and open until its `tool.ended`, so any process sees
 * the same approvals. {@link recordApprovalDecision} refreshes first, then throws `ApprovalNotFoundError` / `ApprovalConflictError`, does nothing
 * for a repeated decision, or appends one version-checked `approval.ended`. {@link inputDigest}: SHA-256 of the canonical JSON arguments.
 */
import { ApprovalConflictError, ApprovalNotFoundError } from "../core/errors.ts";
import { messageOfEntry } from "../core/entries.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { approvalsOf, openApprovals, type ApprovalDecisionResult, type PendingApproval } from "./approval-fold.ts";
import { toolCallsOf } from "./loop-messages.ts";
import { runEvent } from "./run-records.ts";
import { sessionActorOf } from "./session-actor.ts";
import type { ApprovalDecision } from "../core/vocabulary.ts";

/**
 * The open approvals of `session` with their arguments (from the assistant entries).
 * @example
 * const pending = await listPendingApprovals(session);
 */
export async function listPendingApprovals(session: SessionHandle): Promise<PendingApproval[]> {
  const open = openApprovals(approvalsOf(session.view.activity));
  if (open.length === 0) return [];
  const inputs = new Map<string, Record<string, unknown>>();
  for (const entry of session.view.getEntries()) {
    const message = messageOfEntry(entry);
    if (message?.role !== "assistant") continue;
    for (const call of toolCallsOf(message)) inputs.set(call.id, call.arguments);
  }
  return open.map((record) => ({ ...record, input: inputs.get(record.toolCallId) ?? {} }));
}

/**
 * Records a decision (see the module contract). `append` writes the event through the session's one writer; the default is the session actor's
 * (`sessionActorOf(session).writes`: its agent's writer when an agent drives the handle, else the standalone slot's).
 * @throws ApprovalNotFoundError, ApprovalConflictError, ExpectedVersionConflictError (see the contract).
 * @example
 * await recordApprovalDecision(session, { toolCallId: "call_1", status: "denied", reason: "not on main" });
 */
export async function recordApprovalDecision(
  session: SessionHandle,
  decision: { toolCallId: string; status: ApprovalDecision; reason?: string },
  append: (events: NewEvent[]) => Promise<unknown> = (events) => sessionActorOf(session).writes.appendEvents(events),
): Promise<ApprovalDecisionResult> {
  await session.refresh?.();
  const approvals = approvalsOf(session.view.activity);
  const record = approvals.get(decision.toolCallId);
  const undecided = () => openApprovals(approvals).filter((item) => item.status === "pending").map((item) => item.toolCallId);
  if (!record) {
    const open = openApprovals(approvals).map((item) => item.toolCallId);
    throw new ApprovalNotFoundError(
      `No tool call "${decision.toolCallId}" asked for approval in session ${session.id}${open.length ? `; waiting: ${open.join(", ")}` : "; nothing waits for approval"}.`,
      { details: { sessionId: session.id, toolCallId: decision.toolCallId } },
    );
  }
  if (record.settled) {
    throw new ApprovalConflictError(
      `Tool call "${decision.toolCallId}" is settled: its approval ended ${record.status} and its result is recorded; a decision cannot change it.`,
      { details: { sessionId: session.id, toolCallId: decision.toolCallId, status: record.status, settled: true } },
    );
  }
  if (record.status === decision.status) return { toolCallId: record.toolCallId, status: decision.status, changed: false, undecided: undecided() };
  if (record.status !== "pending") {
    throw new ApprovalConflictError(
      `Tool call "${decision.toolCallId}" was already ${record.status}; a call is decided once (to change your mind, abort the run).`,
      { details: { sessionId: session.id, toolCallId: decision.toolCallId, status: record.status, settled: false } },
    );
  }
  const event = runEvent({ runId: record.runId }, "approval.ended", {
    toolCallId: record.toolCallId,
    toolName: record.toolName,
    status: decision.status,
    ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
  });
  await append([event]);
  record.status = decision.status;
  return { toolCallId: record.toolCallId, status: decision.status, changed: true, undecided: undecided() };
}
