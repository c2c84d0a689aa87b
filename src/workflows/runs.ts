/**
 * Workflow runs in the log, folded from their streams so any process sees the same: listing, reading, {@link decideWorkflowApproval}
 * (`ApprovalNotFoundError`, `ApprovalConflictError`, no-op for a repeat, else one version-checked `approval.ended`) and {@link abortWorkflowRun}
 * for a run no process drives (closes waiting approvals and ends it `aborted` in one append).
 */
import { ApprovalConflictError, ApprovalNotFoundError } from "../core/errors.ts";
import type { EventLog, NewEvent } from "../store/event-log.ts";
import { foldWorkflow, workflowIdOfStream, workflowStreamId, type WorkflowRunState } from "./fold.ts";
import type { ApprovalDecision } from "../core/vocabulary.ts";

/** Something that holds a log: the log itself, or a harness. */
export type LogSource = EventLog | { repository: { log: EventLog } | undefined };

function logOf(source: LogSource): EventLog {
  if ("append" in source) return source;
  if (!source.repository) throw new ApprovalNotFoundError("The harness was given a bare session: it has no log of workflow runs.");
  return source.repository.log;
}

/**
 * One workflow run, folded (`fold.ts`); undefined when there is none.
 * @example
 * const run = await readWorkflowRun(harness, id);
 */
export async function readWorkflowRun(source: LogSource, workflowId: string): Promise<WorkflowRunState | undefined> {
  return foldWorkflow(await logOf(source).readStream(workflowStreamId(workflowId)));
}

/**
 * Every workflow run of the log, newest first (by last event).
 * @example
 * const waiting = (await listWorkflowRuns(log)).filter((run) => run.status === "awaiting-approval");
 */
export async function listWorkflowRuns(source: LogSource): Promise<WorkflowRunState[]> {
  const log = logOf(source);
  const runs: WorkflowRunState[] = [];
  for (const stream of await log.listStreams()) {
    if (workflowIdOfStream(stream.streamId) === undefined) continue;
    const run = foldWorkflow(await log.readStream(stream.streamId));
    if (run) runs.push(run);
  }
  return runs.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
}

/**
 * Records a decision on approval step `stepId` of run `workflowId` (see the module contract).
 * @throws ApprovalNotFoundError, ApprovalConflictError, ExpectedVersionConflictError.
 * @example
 * const { changed } = await decideWorkflowApproval(log, id, "publish", { status: "denied", reason: "not today" });
 */
export async function decideWorkflowApproval(
  source: LogSource,
  workflowId: string,
  stepId: string,
  decision: { status: ApprovalDecision; reason?: string },
): Promise<{ stepId: string; status: ApprovalDecision; changed: boolean }> {
  const log = logOf(source);
  const run = foldWorkflow(await log.readStream(workflowStreamId(workflowId)));
  const gate = run?.gates.get(stepId);
  if (!run || !gate) {
    const waiting = run?.pendingApprovals ?? [];
    throw new ApprovalNotFoundError(
      run ? `Step "${stepId}" of workflow run ${workflowId} did not ask for approval${waiting.length ? `; waiting: ${waiting.join(", ")}` : "; nothing waits for approval"}.` : `No workflow run "${workflowId}" in this log.`,
      { details: { workflowId, stepId } },
    );
  }
  if (run.ended || run.steps.get(stepId)?.ended) {
    throw new ApprovalConflictError(`Step "${stepId}" of workflow run ${workflowId} is settled (${run.ended ? `the run ended ${run.ended.status}` : "its result is logged"}); a decision cannot change it.`, {
      details: { workflowId, stepId, status: gate.status, settled: true },
    });
  }
  if (gate.status === decision.status) return { stepId, status: decision.status, changed: false };
  if (gate.status !== "pending") {
    throw new ApprovalConflictError(`Step "${stepId}" of workflow run ${workflowId} was already ${gate.status}; a step is decided once.`, { details: { workflowId, stepId, status: gate.status, settled: false } });
  }
  const event: NewEvent = { type: "approval.ended", data: { toolCallId: stepId, toolName: run.workflow, status: decision.status, ...(decision.reason !== undefined ? { reason: decision.reason } : {}) } };
  await log.append(workflowStreamId(workflowId), [event], { expectedVersion: run.version });
  return { stepId, status: decision.status, changed: true };
}

/**
 * Aborts a run no process drives (see the module contract); returns its state after.
 * @throws ApprovalNotFoundError for an unknown run; ExpectedVersionConflictError when another writer appended first.
 * @example
 * await abortWorkflowRun(log, id, "superseded by release-43");
 */
export async function abortWorkflowRun(source: LogSource, workflowId: string, reason = "aborted"): Promise<WorkflowRunState> {
  const log = logOf(source);
  const run = foldWorkflow(await log.readStream(workflowStreamId(workflowId)));
  if (!run) throw new ApprovalNotFoundError(`No workflow run "${workflowId}" in this log.`, { details: { workflowId } });
  if (run.ended) return run;
  const closes: NewEvent[] = run.pendingApprovals.map((stepId) => ({ type: "approval.ended", data: { toolCallId: stepId, toolName: run.workflow, status: "cancelled", reason: `the workflow was aborted: ${reason}` } }));
  await log.append(workflowStreamId(workflowId), [...closes, { type: "workflow.ended", data: { workflowId, workflow: run.workflow, status: "aborted", reason } }], { expectedVersion: run.version });
  return (await readWorkflowRun(log, workflowId))!;
}
