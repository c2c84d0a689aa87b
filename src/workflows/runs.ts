/**
 * Workflow runs in the log: listing, reading, human decisions on approval steps, and aborting a
 * run nobody drives (ours; the decision rules are those of `docs/approval.md`).
 *
 * Contract:
 * - everything is folded from the workflow streams (`workflow-<id>`), so any process sees the
 *   same runs and the same waiting approvals;
 * - {@link decideWorkflowApproval}: an unknown run or step → `ApprovalNotFoundError`; a run that
 *   ended, or a step whose result is logged, or a decision that contradicts the recorded one →
 *   `ApprovalConflictError`; the same decision again → `changed: false`, nothing written;
 *   otherwise one `approval.ended`, appended version-checked (a concurrent writer makes it fail
 *   with `ExpectedVersionConflictError`); the run goes on with `workflow.resume(id)`;
 * - {@link abortWorkflowRun} closes every waiting approval (`approval.ended { cancelled }`) and
 *   ends the run `aborted`, in one version-checked append; a run that ended is left as it is.
 *   It is for runs no process drives (suspended, or interrupted by a crash); a running one is
 *   aborted through its `signal`.
 *
 * @example
 * ```ts
 * for (const run of await listWorkflowRuns(log)) console.log(run.workflowId, run.workflow, run.status);
 * await decideWorkflowApproval(log, id, "publish", { status: "approved", reason: "looks good" });
 * ```
 */
import { ApprovalConflictError, ApprovalNotFoundError } from "../core/errors.ts";
import type { EventLog, NewEvent } from "../store/event-log.ts";
import { foldWorkflow, workflowIdOfStream, workflowStreamId, type WorkflowRunState } from "./fold.ts";

/** Something that holds a log: the log itself, or a harness. */
export type LogSource = EventLog | { repository: { log: EventLog } | undefined };

function logOf(source: LogSource): EventLog {
  if ("append" in source) return source;
  if (!source.repository) throw new ApprovalNotFoundError("The harness was given a bare session: it has no log of workflow runs.");
  return source.repository.log;
}

/**
 * One workflow run, folded (`fold.ts`); undefined when there is none.
 *
 * @example
 * ```ts
 * const run = await readWorkflowRun(harness, id);
 * ```
 */
export async function readWorkflowRun(source: LogSource, workflowId: string): Promise<WorkflowRunState | undefined> {
  return foldWorkflow(await logOf(source).readStream(workflowStreamId(workflowId)));
}

/**
 * Every workflow run of the log, newest first (by last event).
 *
 * @example
 * ```ts
 * const waiting = (await listWorkflowRuns(log)).filter((run) => run.status === "awaiting-approval");
 * ```
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
 *
 * @throws ApprovalNotFoundError, ApprovalConflictError, ExpectedVersionConflictError.
 * @example
 * ```ts
 * const { changed } = await decideWorkflowApproval(log, id, "publish", { status: "denied", reason: "not today" });
 * ```
 */
export async function decideWorkflowApproval(
  source: LogSource,
  workflowId: string,
  stepId: string,
  decision: { status: "approved" | "denied"; reason?: string },
): Promise<{ stepId: string; status: "approved" | "denied"; changed: boolean }> {
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
 *
 * @throws ApprovalNotFoundError for an unknown run; ExpectedVersionConflictError when another writer appended first.
 * @example
 * ```ts
 * await abortWorkflowRun(log, id, "superseded by release-43");
 * ```
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
