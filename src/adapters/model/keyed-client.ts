/**
 * The part every provider factory shares: an API key read at call time, a clear per-call error
 * when it is missing, and secrets redacted from error messages.
 *
 * Contract (ours; the same as `createOpenAIModel`'s):
 * - the key is `apiKey`, else the first of `keyVariables` that is set and non-empty, read on
 *   every call (so construction never fails for a missing key);
 * - a missing key ends the call with `start` then a non-retryable `error` naming the first
 *   variable and the factory; no HTTP request is made;
 * - every `errorMessage` has the key, header values and other `secrets` replaced by
 *   `[redacted]` (providers and proxies echo them);
 * - otherwise the events of `build(request, key)` pass through unchanged.
 *
 * @example
 * ```ts
 * const client = keyedModelClient({ provider: "anthropic", api: "anthropic-messages", modelId: "claude-x", label: "Anthropic", keyVariables: ["ANTHROPIC_API_KEY"], factory: "createAnthropicModel", build });
 * ```
 */
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../../core/model-stream.ts";
import { StreamAssembler } from "./stream-assembler.ts";
import type { AiSdkModelInfo } from "./ai-sdk-client.ts";
import type { ThinkingLevelMap } from "./thinking.ts";
import type { ModelCost } from "./usage.ts";

/**
 * The {@link AiSdkModelInfo} of a factory's options (only the fields that are set).
 *
 * @example
 * ```ts
 * modelInfo({ modelId: "claude-x", cost: { input: 3, output: 15 } }, "anthropic", "anthropic-messages");
 * ```
 */
export function modelInfo(
  options: { modelId: string; contextWindow?: number; maxTokens?: number; cost?: ModelCost; reasoning?: boolean; thinkingLevelMap?: ThinkingLevelMap; idleTimeoutMs?: number },
  provider: string,
  api: string,
): AiSdkModelInfo {
  return {
    provider,
    api,
    modelId: options.modelId,
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.cost !== undefined ? { cost: options.cost } : {}),
    ...(options.reasoning !== undefined ? { reasoning: options.reasoning } : {}),
    ...(options.thinkingLevelMap !== undefined ? { thinkingLevelMap: options.thinkingLevelMap } : {}),
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
  };
}

/**
 * Replaces every occurrence of each secret (at least 6 characters long) in `text` with
 * `[redacted]`. Shorter values are left alone: they would redact ordinary words.
 *
 * @example
 * ```ts
 * redactSecrets("bad key sk-abc123xyz", ["sk-abc123xyz"]); // "bad key [redacted]"
 * ```
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (secret.length >= 6) result = result.split(secret).join("[redacted]");
  return result;
}

/**
 * What {@link keyedModelClient} needs. Token counts in tokens, prices in $ per million tokens.
 *
 * @example
 * ```ts
 * const spec: KeyedClientSpec = { provider: "google", api: "google-generative-ai", modelId: "gemini-2.5-flash", label: "Google", keyVariables: ["GOOGLE_GENERATIVE_AI_API_KEY"], factory: "createGoogleModel", build };
 * ```
 */
export interface KeyedClientSpec {
  provider: string;
  api: string;
  modelId: string;
  /** The key passed to the factory; wins over the variables. */
  apiKey?: string;
  /** Environment variables tried in order, e.g. `["ANTHROPIC_API_KEY"]`. */
  keyVariables: readonly string[];
  /** The provider as people write it (`OpenAI`, `Anthropic`), for the missing-key message. */
  label: string;
  /** The factory's name, for the missing-key message. */
  factory: string;
  /** Values (besides the key) never to show in an error message: header values, URL passwords. */
  secrets?: (request: ModelRequest) => string[];
  /** Builds the per-call client for a key. */
  build: (request: ModelRequest, apiKey: string) => ModelClient;
  contextWindow?: number;
  maxTokens?: number;
  cost?: ModelCost;
  reasoning?: boolean;
  /** The built clients send `request.responseFormat` natively (see `ModelClient.structuredOutput`). */
  structuredOutput?: boolean;
}

/**
 * A {@link ModelClient} over `spec.build` with the key handling of the module contract.
 * Never throws.
 *
 * @example
 * ```ts
 * const model = keyedModelClient({ ...spec, build: (request, apiKey) => createAiSdkModelClient(createAnthropic({ apiKey })("claude-x")) });
 * ```
 */
export function keyedModelClient(spec: KeyedClientSpec): ModelClient {
  const { provider, api, modelId } = spec;
  async function* stream(request: ModelRequest, streamOptions: { signal?: AbortSignal } = {}): AsyncGenerator<ModelStreamEvent> {
    const fromEnv = spec.keyVariables.map((name) => process.env[name]).find((value) => value !== undefined && value !== "");
    const apiKey = spec.apiKey ?? fromEnv;
    if (!apiKey) {
      const assembler = new StreamAssembler({ api, provider, model: modelId }, spec.cost);
      yield assembler.start();
      yield assembler.error(`No ${spec.label} API key: set the ${spec.keyVariables[0]} environment variable or pass \`apiKey\` to ${spec.factory}().`, { retryable: false }, "error");
      return;
    }
    const secrets = [apiKey, ...Object.values(request.headers ?? {}), ...(spec.secrets?.(request) ?? [])];
    for await (const event of spec.build(request, apiKey).stream(request, streamOptions)) {
      if (event.type === "error" && event.message.errorMessage) {
        yield { ...event, message: { ...event.message, errorMessage: redactSecrets(event.message.errorMessage, secrets) } };
      } else {
        yield event;
      }
    }
  }
  return {
    provider,
    modelId,
    api,
    ...(spec.contextWindow !== undefined ? { contextWindow: spec.contextWindow } : {}),
    ...(spec.maxTokens !== undefined ? { maxTokens: spec.maxTokens } : {}),
    ...(spec.cost !== undefined ? { cost: spec.cost } : {}),
    ...(spec.reasoning !== undefined ? { reasoning: spec.reasoning } : {}),
    ...(spec.structuredOutput ? { structuredOutput: true } : {}),
    stream,
  };
}
