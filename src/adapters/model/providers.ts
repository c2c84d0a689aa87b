/**
 * Anthropic and Google (Gemini) model clients over `@ai-sdk/anthropic` and `@ai-sdk/google`, and `createModel(provider, options)` over all three.
 * Keys: `ANTHROPIC_API_KEY`; `GOOGLE_GENERATIVE_AI_API_KEY`, else `GEMINI_API_KEY`. A missing key fails each call, not construction; keys never
 * appear in errors; hooks run as for `createOpenAIModel`. Construction throws `ModelConfigError` only for a missing `modelId` or unknown provider.
 * Each provider package is imported on a model's first call, not when this module loads.
 */
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
 * @example
 * const options: ProviderModelOptions = { modelId: "claude-haiku-4-5", baseURL: "http://127.0.0.1:8080/v1", apiKey: "test" };
 */
export type ProviderModelOptions = Omit<OpenAIModelOptions, "api">;

/** The providers {@link createModel} knows. */
export type ModelProvider = "openai" | "anthropic" | "google";

/**
 * The key variables of each provider, in the order they are read.
 * @example
 * const key = PROVIDER_KEY_VARIABLES.anthropic.map((name) => process.env[name]).find(Boolean);
 */
export const PROVIDER_KEY_VARIABLES: Readonly<Record<ModelProvider, readonly string[]>> = {
  openai: ["OPENAI_API_KEY"],
  anthropic: ["ANTHROPIC_API_KEY"],
  google: ["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"],
};

/**
 * The base-URL variable of each provider.
 * @example
 * const baseURL = process.env[PROVIDER_BASE_URL_VARIABLES.openai]; // OPENAI_BASE_URL
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
  model: (settings: { apiKey: string; baseURL: string; headers?: Record<string, string>; fetch: typeof fetch }, modelId: string) => Promise<LanguageModelV4>;
}

function providerModel(family: Family, options: ProviderModelOptions): ModelClient {
  if (typeof options?.modelId !== "string" || options.modelId.trim() === "") {
    throw new ModelConfigError(`${family.factory}: \`modelId\` must be a non-empty string.`);
  }
  const provider = options.name ?? family.provider;
  const baseURL = () => options.baseURL ?? process.env[PROVIDER_BASE_URL_VARIABLES[family.provider]] ?? family.defaultBaseURL;
  const info: AiSdkModelInfo = { ...modelInfo(options, provider, family.api), ...(options.providerOptions !== undefined ? { providerOptions: options.providerOptions } : {}) };
  const build = async (request: ModelRequest, apiKey: string) =>
    createAiSdkModelClient(
      await family.model({ apiKey, baseURL: baseURL(), ...(options.headers ? { headers: options.headers } : {}), fetch: hookedFetch(request.hooks) }, options.modelId),
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
  model: async (settings, modelId) => (await import("@ai-sdk/anthropic")).createAnthropic(settings).messages(modelId),
};

const GOOGLE: Family = {
  provider: "google",
  label: "Google",
  api: "google-generative-ai",
  factory: "createGoogleModel",
  defaultBaseURL: "https://generativelanguage.googleapis.com/v1beta",
  model: async (settings, modelId) => (await import("@ai-sdk/google")).createGoogleGenerativeAI(settings).languageModel(modelId),
};

/**
 * An Anthropic (Claude) model client over `@ai-sdk/anthropic`'s Messages API; see the module
 * contract. Throws `ModelConfigError` for a missing `modelId`.
 * @example
 * const model = createAnthropicModel({ modelId: "claude-sonnet-4-5", cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
 * for await (const event of model.stream({ messages, tools: [] }, { signal })) if (event.type === "done") console.log(event.message.usage);
 */
export function createAnthropicModel(options: ProviderModelOptions): ModelClient {
  return providerModel(ANTHROPIC, options);
}

/**
 * A Google Gemini model client over `@ai-sdk/google` (the Gemini API, not Vertex); see the
 * module contract. Throws `ModelConfigError` for a missing `modelId`.
 * @example
 * const model = createGoogleModel({ modelId: "gemini-2.5-flash", contextWindow: 1_048_576, cost: { input: 0.3, output: 2.5, cacheRead: 0.075 } });
 */
export function createGoogleModel(options: ProviderModelOptions): ModelClient {
  return providerModel(GOOGLE, options);
}

/**
 * One entry point for the three providers: `openai` (→ `createOpenAIModel`, where `api` applies),
 * `anthropic`, `google`. Throws `ModelConfigError` (code `MODEL_CONFIG_INVALID`) for another provider.
 * @example
 * const model = createModel("anthropic", { modelId: "claude-haiku-4-5", baseURL: server.url, apiKey: "test" });
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
