/**
 * `arbor-agent/model`: The model adapter: the `ModelClient` contract, the AI SDK client, the OpenAI model, usage and error classification.
 * @example
 * import { createAiSdkModelClient } from "arbor-agent/model";
 */
export {
  type ModelToolSpec,
  type ProviderHooks,
  type ModelRequest,
  type ModelErrorInfo,
  type ModelStreamEvent,
  type ModelClient,
  type ResponseFormat,
} from "../core/model-stream.ts";
export {
  createOpenAIModel,
  type OpenAIModelOptions,
} from "../adapters/model/openai.ts";
export {
  createAiSdkModelClient,
  type AiSdkModelInfo,
} from "../adapters/model/ai-sdk-client.ts";
export { isContextOverflowMessage } from "../core/context-overflow.ts";
export {
  parseRetryAfterMs,
  isAbortError,
  classifyModelError,
  type ClassifiedModelError,
} from "../adapters/model/model-errors.ts";
export {
  toUsage,
  type ModelCost,
} from "../adapters/model/usage.ts";
export {
  reasoningProviderOptions,
  THINKING_BUDGETS,
  type ThinkingLevelMap,
} from "../adapters/model/thinking.ts";
export {
  toModelMessages,
} from "../adapters/model/to-model-messages.ts";
export { PROVIDER_BASE_URL_VARIABLES, PROVIDER_KEY_VARIABLES } from "../adapters/model/providers.ts";
export { DEFAULT_IDLE_TIMEOUT_MS } from "../adapters/model/ai-sdk-client.ts";
export { defaultOpenAIWire } from "../adapters/model/openai.ts";
