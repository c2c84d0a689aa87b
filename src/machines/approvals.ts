/**
 * Durable tool approval, read from the log: which gated calls of a session wait, and how a
 * decision is recorded.
 *
 * Contract (ours; the shape is purista's `approval.requested` / `approval.responded`
 * and OpenAI Agents JS's `needsApproval`, the durability is the log's):
 * - a call is **gated** once `approval.requested` is logged for it; it stays **open** until its
 *   `tool.ended` is logged (its result exists); an open call is `pending` (no decision yet) or
 *   `approved` / `denied` (decided, waiting for the `resume` run that runs or refuses it);
 * - everything here is read from the view's activity projection, folded from the logged
 *   events (never kept apart in memory), so any process that opens the session sees the same approvals (the process that asked may have exited);
 * - {@link recordApprovalDecision} catches the view up with the log first (`refresh`), then:
 *   an unknown call → `ApprovalNotFoundError`; a call whose result is recorded, or a decision
 *   that contradicts the recorded one → `ApprovalConflictError`; the same decision again → a
 *   no-op (`changed: false`, nothing written); otherwise one `approval.ended`, appended through
 *   the session's one writer, version-checked (a concurrent writer makes it fail with `ExpectedVersionConflictError`
 *   and write nothing);
 * - {@link inputDigest} is the SHA-256 (hex) of the arguments as canonical JSON (object keys
 *   sorted): an approval covers exactly the arguments the approver saw.
 *
 * @example
 * ```ts
 * const open = openApprovals(approvalsOf(session.view.activity));
 * await recordApprovalDecision(session, { toolCallId: open[0].toolCallId, status: "approved" });
 * ```
 */
import { ApprovalConflictError, ApprovalNotFoundError } from "../core/errors.ts";
import { messageOfEntry } from "../core/entries.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { approvalsOf, openApprovals, type ApprovalDecisionResult, type PendingApproval } from "./approval-fold.ts";
import { toolCallsOf } from "./loop-messages.ts";
import { runEvent } from "./run-records.ts";
import { sessionActorOf } from "./session-actor.ts";

/**
 * The open approvals of `session` with their arguments (from the assistant entries).
 *
 * @example
 * ```ts
 * const pending = await listPendingApprovals(session);
 * ```
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
 * Records a decision (see the module contract). `append` writes the event through the
 * session's one writer; the default is the session actor's (`sessionActorOf(session).writes`:
 * its agent's writer when an agent drives the handle, else the standalone slot's).
 *
 * @throws ApprovalNotFoundError, ApprovalConflictError, ExpectedVersionConflictError (see the contract).
 * @example
 * ```ts
 * await recordApprovalDecision(session, { toolCallId: "call_1", status: "denied", reason: "not on main" });
 * ```
 */
export async function recordApprovalDecision(
  session: SessionHandle,
  decision: { toolCallId: string; status: "approved" | "denied"; reason?: string },
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
