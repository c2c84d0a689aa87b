/**
 * The workflow errors (ours): thrown at the API edge for bad definitions, bad input and
 * unknown runs; carried as data in a failed {@link WorkflowOutcome} for a step that failed.
 */
import { ArborError } from "../core/errors.ts";

/**
 * A `defineWorkflow` definition is invalid (code `WORKFLOW_DEFINITION_INVALID`); `field` names the failing option (`steps[2].id`, say).
 * @example
 * try { defineWorkflow({ name: "w", input, output, steps: [] }); } catch (error) { if (WorkflowDefinitionError.isInstance(error)) console.error(error.details.field); }
 */
export class WorkflowDefinitionError extends ArborError {
  static readonly code = "WORKFLOW_DEFINITION_INVALID";
  constructor(message: string, field: string) {
    super(WorkflowDefinitionError.code, message, { details: { field } });
  }
  static override isInstance(error: unknown): error is WorkflowDefinitionError {
    return ArborError.isInstance(error) && error.code === WorkflowDefinitionError.code;
  }
}

/**
 * A workflow run or resume was refused before anything ran (code `WORKFLOW_RUN_REFUSED`): input that fails the input schema (`details.path`), an
 * unknown workflow id, a run of another workflow, a harness without a repository. Nothing is logged.
 * @example
 * await workflow.resume("no-such-id", { harness }).catch((error) => WorkflowRunError.isInstance(error) && console.error(error.message));
 */
export class WorkflowRunError extends ArborError {
  static readonly code = "WORKFLOW_RUN_REFUSED";
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(WorkflowRunError.code, message, { details });
  }
  static override isInstance(error: unknown): error is WorkflowRunError {
    return ArborError.isInstance(error) && error.code === WorkflowRunError.code;
  }
}

/**
 * A resume was given a definition whose steps differ from the ones the run started with (code `WORKFLOW_DEFINITION_CHANGED`): steps removed, added,
 * of another kind, moved or reordered. `details.changes` names each difference; `details.storedDigest` / `details.currentDigest` are the digests
 * (`storedDigest` absent for a run logged before digests, compared by step ids). Nothing is run or logged.
 * @example
 * await workflow.resume(id, { harness }).catch((error) => WorkflowDefinitionChangedError.isInstance(error) && console.error(error.details.changes));
 */
export class WorkflowDefinitionChangedError extends ArborError {
  static readonly code = "WORKFLOW_DEFINITION_CHANGED";
  declare readonly details: { workflowId: string; workflow: string; changes: string[]; storedDigest?: string; currentDigest: string };
  constructor(details: { workflowId: string; workflow: string; changes: string[]; storedDigest?: string; currentDigest: string }) {
    super(
      WorkflowDefinitionChangedError.code,
      `Workflow run "${details.workflowId}" was started with another definition of "${details.workflow}": ${details.changes.join("; ")}. Resume it with the definition it started with, or start a new run.`,
      { details },
    );
  }
  static override isInstance(error: unknown): error is WorkflowDefinitionChangedError {
    return ArborError.isInstance(error) && error.code === WorkflowDefinitionChangedError.code;
  }
}

/**
 * Why a workflow ended `failed` (code `WORKFLOW_FAILED`); `reason` is the step's own code: `WORKFLOW_STEP_FAILED` (a step threw or its agent failed;
 * `details.cause` is the agent's code), `WORKFLOW_STEP_INTERRUPTED` (a crash cut the step off and it is not safe to retry),
 * `WORKFLOW_APPROVAL_DENIED`, `WORKFLOW_OUTPUT_INVALID`, `WORKFLOW_BRANCH_UNMATCHED`.
 * @example
 * if (outcome.status === "failed" && outcome.error.reason === "WORKFLOW_STEP_INTERRUPTED") console.error(`retry ${outcome.error.stepId} by hand`);
 */
export class WorkflowError extends ArborError {
  static readonly code = "WORKFLOW_FAILED";
  constructor(
    readonly reason: string,
    message: string,
    readonly stepId?: string,
  ) {
    super(WorkflowError.code, message, { details: { reason, ...(stepId !== undefined ? { stepId } : {}) } });
  }
  static override isInstance(error: unknown): error is WorkflowError {
    return ArborError.isInstance(error) && error.code === WorkflowError.code;
  }
}
