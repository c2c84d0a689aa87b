/**
 * Anthropic and Google (Gemini) model clients over the AI SDK's own provider packages
 * (`@ai-sdk/anthropic` 4, `@ai-sdk/google` 4: the majors built on `@ai-sdk/provider` 4, as
 * `ai` 7 and `@ai-sdk/openai` 4 are), and `createModel(provider, options)` over all three.
 *
 * Contract (ours; key variables the AI SDK's, api names pi's):
 * - `createAnthropicModel`: Messages API (`POST {baseURL}/messages`, SSE); key `apiKey`, else
 *   `ANTHROPIC_API_KEY`; base URL `baseURL`, else `ANTHROPIC_BASE_URL`, else
 *   `https://api.anthropic.com/v1`; Arbor provider `anthropic`, api `anthropic-messages`;
 * - `createGoogleModel`: Gemini API (`POST {baseURL}/models/<id>:streamGenerateContent?alt=sse`);
 *   key `apiKey`, else `GOOGLE_GENERATIVE_AI_API_KEY`, else `GEMINI_API_KEY` (pi's name); base URL
 *   `baseURL`, else `GOOGLE_GENERATIVE_AI_BASE_URL`, else
 *   `https://generativelanguage.googleapis.com/v1beta`; provider `google`, api `google-generative-ai`;
 * - a missing key is reported per call (non-retryable `error` naming the variable, no HTTP
 *   request); keys, header values and URL passwords never appear in an error message;
 * - request hooks (`onPayload`, `onResponse`) run as for `createOpenAIModel`;
 * - thinking levels become `thinking.budgetTokens` (Anthropic) or `thinkingConfig.thinkingBudget`
 *   (Google), see `thinking.ts`; usage is read from each provider's raw shape (see `usage.ts`:
 *   Anthropic counts cache reads and writes OUTSIDE `input_tokens`, Gemini INSIDE `promptTokenCount`);
 * - construction throws `ModelConfigError` only for a missing `modelId` (or, for `createModel`,
 *   an unknown provider).
 *
 * @example
 * ```ts
 * const claude = createAnthropicModel({ modelId: "claude-sonnet-4-5", contextWindow: 200_000, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
 * const gemini = createModel("google", { modelId: "gemini-2.5-flash" });
 * ```
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { ModelConfigError } from "../../core/errors.ts";
import type { ModelClient, ModelRequest } from "../../core/model-stream.ts";
import type { AiSdkModelInfo } from "./ai-sdk-client.ts";
import { createAiSdkModelClient } from "./ai-sdk-client.ts";
import { keyedModelClient, modelInfo } from "./keyed-client.ts";
import type { OpenAIModelOptions } from "./openai.ts";
import { createOpenAIModel, hookedFetch, urlSecrets } from "./openai.ts";

/**
 * Options of {@link createAnthropicModel} and {@link createGoogleModel}: those of
 * `createOpenAIModel` without `api`. Tokens in tokens, prices in $ per million tokens, times in ms.
 *
 * @example
 * ```ts
 * const options: ProviderModelOptions = { modelId: "claude-haiku-4-5", baseURL: "http://127.0.0.1:8080/v1", apiKey: "test" };
 * ```
 */
export type ProviderModelOptions = Omit<OpenAIModelOptions, "api">;

/** The providers {@link createModel} knows. */
export type ModelProvider = "openai" | "anthropic" | "google";

/**
 * The key variables of each provider, in the order they are read.
 *
 * @example
 * ```ts
 * const key = PROVIDER_KEY_VARIABLES.anthropic.map((name) => process.env[name]).find(Boolean);
 * ```
 */
export const PROVIDER_KEY_VARIABLES: Readonly<Record<ModelProvider, readonly string[]>> = {
  openai: ["OPENAI_API_KEY"],
  anthropic: ["ANTHROPIC_API_KEY"],
  google: ["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"],
};

/**
 * The base-URL variable of each provider.
 *
 * @example
 * ```ts
 * const baseURL = process.env[PROVIDER_BASE_URL_VARIABLES.openai]; // OPENAI_BASE_URL
 * ```
 */
export const PROVIDER_BASE_URL_VARIABLES: Readonly<Record<ModelProvider, string>> = {
  openai: "OPENAI_BASE_URL",
  anthropic: "ANTHROPIC_BASE_URL",
  google: "GOOGLE_GENERATIVE_AI_BASE_URL",
};

interface Family {
  provider: Exclude<ModelProvider, "openai">;
  label: string;
  api: string;
  factory: string;
  defaultBaseURL: string;
  model: (settings: { apiKey: string; baseURL: string; headers?: Record<string, string>; fetch: typeof fetch }, modelId: string) => LanguageModelV4;
}

function providerModel(family: Family, options: ProviderModelOptions): ModelClient {
  if (typeof options?.modelId !== "string" || options.modelId.trim() === "") {
    throw new ModelConfigError(`${family.factory}: \`modelId\` must be a non-empty string.`);
  }
  const provider = options.name ?? family.provider;
  const baseURL = () => options.baseURL ?? process.env[PROVIDER_BASE_URL_VARIABLES[family.provider]] ?? family.defaultBaseURL;
  const info: AiSdkModelInfo = { ...modelInfo(options, provider, family.api), ...(options.providerOptions !== undefined ? { providerOptions: options.providerOptions } : {}) };
  const build = (request: ModelRequest, apiKey: string) =>
    createAiSdkModelClient(
      family.model({ apiKey, baseURL: baseURL(), ...(options.headers ? { headers: options.headers } : {}), fetch: hookedFetch(request.hooks) }, options.modelId),
      info,
    );
  return keyedModelClient({
    provider,
    api: family.api,
    modelId: options.modelId,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    keyVariables: PROVIDER_KEY_VARIABLES[family.provider],
    label: family.label,
    factory: family.factory,
    secrets: () => [...Object.values(options.headers ?? {}), ...urlSecrets(baseURL())],
    build,
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.cost !== undefined ? { cost: options.cost } : {}),
    ...(options.reasoning !== undefined ? { reasoning: options.reasoning } : {}),
  });
}

const ANTHROPIC: Family = {
  provider: "anthropic",
  label: "Anthropic",
  api: "anthropic-messages",
  factory: "createAnthropicModel",
  defaultBaseURL: "https://api.anthropic.com/v1",
  model: (settings, modelId) => createAnthropic(settings).messages(modelId),
};

const GOOGLE: Family = {
  provider: "google",
  label: "Google",
  api: "google-generative-ai",
  factory: "createGoogleModel",
  defaultBaseURL: "https://generativelanguage.googleapis.com/v1beta",
  model: (settings, modelId) => createGoogleGenerativeAI(settings).languageModel(modelId),
};

/**
 * An Anthropic (Claude) model client over `@ai-sdk/anthropic`'s Messages API; see the module
 * contract. Throws `ModelConfigError` for a missing `modelId`.
 *
 * @example
 * ```ts
 * const model = createAnthropicModel({ modelId: "claude-sonnet-4-5", cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
 * for await (const event of model.stream({ messages, tools: [] }, { signal })) if (event.type === "done") console.log(event.message.usage);
 * ```
 */
export function createAnthropicModel(options: ProviderModelOptions): ModelClient {
  return providerModel(ANTHROPIC, options);
}

/**
 * A Google Gemini model client over `@ai-sdk/google` (the Gemini API, not Vertex); see the
 * module contract. Throws `ModelConfigError` for a missing `modelId`.
 *
 * @example
 * ```ts
 * const model = createGoogleModel({ modelId: "gemini-2.5-flash", contextWindow: 1_048_576, cost: { input: 0.3, output: 2.5, cacheRead: 0.075 } });
 * ```
 */
export function createGoogleModel(options: ProviderModelOptions): ModelClient {
  return providerModel(GOOGLE, options);
}

/**
 * One entry point for the three providers: `openai` (→ `createOpenAIModel`, where `api` applies),
 * `anthropic`, `google`. Throws `ModelConfigError` (code `MODEL_CONFIG_INVALID`) for another provider.
 *
 * @example
 * ```ts
 * const model = createModel("anthropic", { modelId: "claude-haiku-4-5", baseURL: server.url, apiKey: "test" });
 * ```
 */
export function createModel(provider: ModelProvider, options: OpenAIModelOptions): ModelClient {
  switch (provider) {
    case "openai":
      return createOpenAIModel(options);
    case "anthropic":
      return createAnthropicModel(options);
    case "google":
      return createGoogleModel(options);
    default:
      throw new ModelConfigError(`createModel: unknown provider ${JSON.stringify(provider)}; use "openai", "anthropic" or "google".`);
  }
}
