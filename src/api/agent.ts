/**
 * `arbor-agent/agent`: typed agents (`defineAgent`: zod input and output, structured output with bounded repairs, a typed outcome), and the agent
 * actor below the harness: `createAgent`, its options and snapshot types, inspection, crash recovery and run ownership.
 * @example
 * import { createAgent, defineAgent } from "arbor-agent/agent";
 */
export {
  defineAgent,
  type AgentOutcome,
  type AgentOutcomeBase,
  type AgentOutputOf,
  type AgentRunOptions,
  type AgentSuspendedOutcome,
  type AgentUsage,
  type DefineAgentOptions,
  type TypedAgent,
} from "../agents/define-agent.ts";
export {
  AgentDefinitionError,
  AgentInputError,
  AgentOutputError,
  AgentRunError,
  type AgentIssue,
} from "../agents/errors.ts";
export {
  FINAL_ANSWER_TOOL,
  REPAIR_MESSAGE_TYPE,
  type OutputMode,
} from "../agents/structured-output.ts";
export {
  createAgent,
} from "../machines/agent.ts";
export {
  type QueueMode,
  type RetrySettings,
  type BeforeToolCallResult,
  type AfterToolCallResult,
  type LoopHooks,
  type AgentOptions,
  type RunOutcome,
  type AgentStateSnapshot,
  type Agent,
  type Durability,
  type ResumeRunOptions,
} from "../machines/agent-types.ts";
export {
  listPendingApprovals,
  recordApprovalDecision,
} from "../machines/approvals.ts";
export {
  foldApprovals,
  openApprovals,
  inputDigest,
  canonicalJson,
  type ApprovalRecord,
  type ApprovalStatus,
  type PendingApproval,
  type ApprovalDecisionResult,
} from "../machines/approval-fold.ts";
export {
  ApprovalConflictError,
  ApprovalNotFoundError,
  ApprovalPendingError,
  NothingToResumeError,
  RunOwnedError,
  LeaseLostError,
} from "../core/errors.ts";
export {
  createArborInspector,
  redactContent,
  type ArborInspector,
  type ArborInspectorOptions,
} from "../machines/inspect.ts";
export {
  recoverSession,
  type RecoveryReport,
} from "../machines/recovery.ts";
export {
  assertNoLiveRun,
  currentRunOwner,
  findLiveRun,
  isRunOwnerAlive,
  type RunOwner,
} from "../machines/run-lease.ts";
