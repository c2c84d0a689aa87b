/**
 * What every provider factory shares: the API key read at call time (`apiKey`, else the first set `keyVariables`), a non-retryable per-call error
 * naming the variable when it is missing (no HTTP request), and keys, header values and `secrets` redacted from every `errorMessage`.
 */
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../../core/model-stream.ts";
import { StreamAssembler } from "./stream-assembler.ts";
import type { AiSdkModelInfo } from "./ai-sdk-client.ts";
import type { ThinkingLevelMap } from "./thinking.ts";
import type { ModelCost } from "./usage.ts";

/** The {@link AiSdkModelInfo} of a factory's options (only the fields that are set). */
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

/** Replaces each secret of 6+ characters in `text` with `[redacted]` (shorter ones would redact ordinary words). */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (secret.length >= 6) result = result.split(secret).join("[redacted]");
  return result;
}

/** What {@link keyedModelClient} needs. Token counts in tokens, prices in $ per million tokens. */
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
  /** Builds the per-call client for a key (may load the provider package first). */
  build: (request: ModelRequest, apiKey: string) => ModelClient | Promise<ModelClient>;
  contextWindow?: number;
  maxTokens?: number;
  cost?: ModelCost;
  reasoning?: boolean;
  /** The built clients send `request.responseFormat` natively (see `ModelClient.structuredOutput`). */
  structuredOutput?: boolean;
}

/** A {@link ModelClient} over `spec.build` with the key handling of the module contract. Never throws. */
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
    const client = await spec.build(request, apiKey);
    for await (const event of client.stream(request, streamOptions)) {
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
