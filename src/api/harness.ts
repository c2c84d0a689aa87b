/**
 * `arbor-agent/harness`: The harness in full: options and their validation, sessions, hooks and the hook runner, the model registry, system prompt and prompt building.
 * @example
 * import { createHookRunner } from "arbor-agent/harness";
 */
export {
  createHarness,
  type AgentHarness,
  type CreateSessionOptions,
} from "../harness/create-harness.ts";
export {
  type CustomMessageOptions,
  type HarnessSession,
  type HarnessState,
  type LoadedResources,
  type MoveToOptions as HarnessMoveToOptions,
  type PromptOptions,
} from "../harness/harness-session-types.ts";
export {
  type StartedTask,
  type StartOptions,
} from "../harness/background-start.ts";
export {
  createWorker,
  type Worker,
  type WorkerOptions,
} from "../harness/worker.ts";
export { type TelemetryFlavor, type TelemetryOptions, type TraceContextInput } from "../telemetry/options.ts";
export { checkHarnessBudget, type HarnessBudget } from "../harness/budget-options.ts";
export {
  BUDGET_LIMITS,
  budgetExceededMessage,
  checkBudget,
  parseBudget,
  type Budget,
  type BudgetExceeded,
  type BudgetLimit,
  type BudgetPolicy,
  type BudgetScope,
} from "../core/budget.ts";
export {
  agentHarnessOptionsSchema,
  validateHarnessOptions,
  type AgentHarnessOptions,
  type AiSdkLanguageModel,
  type HarnessResources,
  type HarnessStreamOptions,
  type ModelEntry,
  type ModelInfo,
  type PromptImages,
  type SystemPromptContext,
  type ToolContextOption,
} from "../harness/options.ts";
export {
  HOOK_NAMES,
  type AfterProviderResponseEvent,
  type Awaitable,
  type BeforeAgentStartEvent,
  type BeforeAgentStartResult,
  type BeforeProviderPayloadEvent,
  type BeforeProviderPayloadResult,
  type BeforeProviderRequestEvent,
  type BeforeProviderRequestResult,
  type ContextEvent,
  type ContextResult,
  type HandlerOf,
  type HarnessHooks,
  type HookHandler,
  type HookName,
  type HookSignatures,
  type ModelUpdateEvent,
  type ProviderRequestOptions,
  type ResourcesUpdateEvent,
  type RetryAttemptStartEvent,
  type RetryFinishedEvent,
  type RetryScheduledEvent,
  type SessionBeforeCompactEvent,
  type SessionBeforeCompactResult,
  type SessionBeforeTreeEvent,
  type SessionBeforeTreeResult,
  type SessionCompactEvent,
  type SessionTreeEvent,
  type ThinkingLevelUpdateEvent,
  type ToolCallEvent,
  type ToolCallResult,
  type ToolResultEvent,
  type ToolResultPatch,
  type ToolsUpdateEvent,
} from "../harness/hook-types.ts";
export {
  createHookRunner,
  type HookRecord,
  type HookRunner,
  type HookRunnerOptions,
  type ObserveHookName,
  type ToolCallDecision,
  type TreeDecision,
} from "../harness/hooks.ts";
export {
  createModelRegistry,
  type ModelRegistry,
  type RegisteredModel,
} from "../harness/model-registry.ts";
export {
  createRedactingModel,
} from "../harness/redacting-model.ts";
export {
  buildSystemPrompt,
  type BuildSystemPromptInput,
} from "../harness/system-prompt.ts";
export {
  defaultAgentDir,
  formatContextFiles,
  loadContextFiles,
  type ContextFile,
} from "../harness/context-files.ts";
export {
  buildPromptMessages,
  type PromptMessages,
  type PromptResources,
} from "../harness/prompt-input.ts";
export { requestControl } from "../harness/control-requests.ts";
export type { SessionWorkspace } from "../harness/workspace/session-workspace.ts";
export type { WorkspaceOptions, WorkspaceRestoreResult } from "../harness/workspace/recorder.ts";
export type { MemoryOptions, MemoryScope, SessionMemory } from "../harness/memory/session-memory.ts";
export type { MemoryRow } from "../store/memory/memory-index.ts";
export type { WorkspaceChange, WorkspaceManifest, WorkspaceNode } from "../core/workspace-manifest.ts";
export { WorkspaceBlobError, WorkspaceCheckpointError } from "../core/errors.ts";
