/**
 * The harness: `createHarness`, the Session API, hooks, options, the model registry,
 * system prompts and JSON-Schema tools. See docs/api.md and docs/hooks.md.
 *
 * Contract: explicit re-exports only (names that the compaction module also exports —
 * `MoveToResult`, `TreePreparation`, `CompactionReason` — come from there).
 *
 * @example
 * ```ts
 * import { createHarness } from "./harness/index.ts";
 * const harness = await createHarness({ models: { main: model } });
 * ```
 */
export { createHarness, type AgentHarness } from "./create-harness.ts";
export {
  createHarnessSession,
  type CustomMessageOptions,
  type HarnessSession,
  type HarnessSessionConfig,
  type HarnessState,
  type LoadedResources,
  type MoveToOptions as HarnessMoveToOptions,
} from "./harness-session.ts";
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
} from "./hook-types.ts";
export { createHookRunner, type HookRecord, type HookRunner, type HookRunnerOptions, type ObserveHookName, type ToolCallDecision, type TreeDecision } from "./hooks.ts";
export { createLoopHooks, streamProviderOptions, type LoopHookBindings } from "./loop-hooks.ts";
export { createModelRegistry, type ModelRegistry, type RegisteredModel } from "./model-registry.ts";
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
} from "./options.ts";
export { buildPromptMessages, type PromptMessages, type PromptResources } from "./prompt-input.ts";
export { buildSystemPrompt, localDate, type BuildSystemPromptInput } from "./system-prompt.ts";
export { defineJsonSchemaTool, formatAjvErrors, type JsonSchemaTool } from "./tool-schema.ts";
