/**
 * `arbor-agent/workflow`: workflows as machines (`defineWorkflow` and its step builders), their
 * runs in the log, and decisions on their approval steps (`docs/workflows.md`).
 *
 * Contract (ours): an explicit list; an addition or removal is a deliberate change that the
 * export-list snapshot (`test/package/exports.test.ts`) shows.
 *
 * @example
 * ```ts
 * import { agentStep, approvalStep, defineWorkflow } from "arbor-agent/workflow";
 * ```
 */
export { defineWorkflow, isWorkflow, type DefineWorkflowOptions, type Workflow, type WorkflowMachine } from "../workflows/define-workflow.ts";
export {
  agentStep,
  approvalStep,
  artifactStep,
  branch,
  codeStep,
  fanOut,
  type AgentStep,
  type ApprovalStep,
  type ArtifactStep,
  type BranchStep,
  type CodeStep,
  type FanOutMember,
  type FanOutStep,
  type StepBase,
  type WorkflowContext,
  type WorkflowStep,
} from "../workflows/steps.ts";
export { WorkflowDefinitionChangedError, WorkflowDefinitionError, WorkflowError, WorkflowRunError } from "../workflows/errors.ts";
export { foldWorkflow, workflowStreamId, type GateRecord, type StepRecord, type WorkflowRunState } from "../workflows/fold.ts";
export type { WorkflowOutcome, WorkflowRunOptions } from "../workflows/runner.ts";
export { abortWorkflowRun, decideWorkflowApproval, listWorkflowRuns, readWorkflowRun, type LogSource } from "../workflows/runs.ts";
