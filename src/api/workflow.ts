/**
 * `arbor-agent/workflow`: workflows as machines (`defineWorkflow` and its step builders), their
 * runs in the log, and decisions on their approval steps (`docs/workflows.md`).
 * @example
 * import { agentStep, approvalStep, defineWorkflow } from "arbor-agent/workflow";
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
  type ApprovalResult,
  type ApprovalStep,
  type ArtifactResult,
  type ArtifactStep,
  type BranchStep,
  type CodeStep,
  type FanOutMember,
  type FanOutStep,
  type StepBase,
  type WorkflowContext,
  type WorkflowResults,
  type WorkflowStep,
} from "../workflows/steps.ts";
export type { WorkflowBuilder } from "../workflows/workflow-builder.ts";
export { WorkflowDefinitionChangedError, WorkflowDefinitionError, WorkflowError, WorkflowRunError } from "../workflows/errors.ts";
export { foldWorkflow, workflowStreamId, type GateRecord, type StepRecord, type WorkflowRunState } from "../workflows/fold.ts";
export type { WorkflowOutcome, WorkflowRunOptions } from "../workflows/runner.ts";
export { abortWorkflowRun, decideWorkflowApproval, listWorkflowRuns, readWorkflowRun, type LogSource } from "../workflows/runs.ts";
