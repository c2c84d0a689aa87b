/**
 * Arbor's public API. See README.md and docs/architecture.md.
 */
export * from "./core/errors.ts";
export * from "./core/messages.ts";
export * from "./core/entries.ts";
export * from "./core/tools.ts";
export type * from "./core/model-stream.ts";
export type * from "./store/event-log.ts";
export type * from "./store/session-types.ts";
export * from "./store/events/index.ts";
export {
  createAiSdkModelClient,
  createOpenAIModel,
  classifyModelError,
  isContextOverflowMessage,
  parseRetryAfterMs,
  reasoningProviderOptions,
  toModelMessages,
  stableResponsesItemIds,
} from "./adapters/model/index.ts";
export type { AiSdkModelInfo, OpenAIModelOptions, ClassifiedModelError, ModelCost, ThinkingLevelMap, ModelTarget } from "./adapters/model/index.ts";
