/**
 * The contract between the run actor and a model adapter (pi-ai's stream protocol): `stream()` never throws or rejects; exactly one terminal event
 * (`done` or `error`) ends every stream; blocks stream one at a time in content order, every non-terminal event carrying `partial`; tool-call deltas
 * are never glued across calls; `error` carries retry facts (`retryable`, `status`, `retryAfterMs`, `contextOverflow`).
 */
import type { AgentMessage, AssistantMessage, ThinkingLevel, ToolCall } from "./messages.ts";

/** A tool as declared to the model (no execute: Arbor's actors run tools). */
export interface ModelToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** Hooks that see the provider wire (ours; applied by adapters that own the HTTP client). */
export interface ProviderHooks {
  /** Replace the provider payload (the JSON request body). Return undefined to keep it. */
  onPayload?: (payload: unknown) => unknown | Promise<unknown>;
  /** See the HTTP status and headers of the response. */
  onResponse?: (response: { status: number; headers: Record<string, string> }) => void | Promise<void>;
}

/** One model call. `messages` are already converted for the model (user, assistant, toolResult). */
export interface ModelRequest {
  systemPrompt?: string;
  messages: AgentMessage[];
  tools: ModelToolSpec[];
  thinkingLevel?: ThinkingLevel;
  /** Output token cap. */
  maxTokens?: number;
  temperature?: number;
  /** Extra HTTP headers (never logged). */
  headers?: Record<string, string>;
  /** Per-request timeout in ms. */
  timeoutMs?: number;
  /** Provider-specific options passed through (AI SDK `providerOptions`). */
  providerOptions?: Record<string, Record<string, unknown>>;
  hooks?: ProviderHooks;
  /**
   * Ask for the final answer in the provider's structured-output mode (ours; typed agents set it). Sent only by clients whose `structuredOutput` is
   * true (the AI SDK adapter passes it as the call's `responseFormat`: Chat Completions `response_format: {type: "json_schema"}`, Responses
   * `text.format`); other clients ignore it. Tools stay available in the same request.
   */
  responseFormat?: ResponseFormat;
}

/**
 * A JSON final answer with a JSON Schema (an object schema; OpenAI requires an object root).
 * @example
 * const format: ResponseFormat = { type: "json", name: "triage", schema: { type: "object", properties: { label: { type: "string" } }, required: ["label"], additionalProperties: false } };
 */
export interface ResponseFormat {
  type: "json";
  schema: Record<string, unknown>;
  /** Schema name the provider sees (OpenAI: `json_schema.name`, `[A-Za-z0-9_-]`, at most 64 characters). */
  name?: string;
  description?: string;
}

/** Facts about an error that drive retry and overflow recovery. */
export interface ModelErrorInfo {
  retryable: boolean;
  status?: number;
  /** Server-requested delay in ms (Retry-After / retry-after-ms). */
  retryAfterMs?: number;
  contextOverflow?: boolean;
}

/** Events of one model stream. */
export type ModelStreamEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text-start"; contentIndex: number; partial: AssistantMessage }
  | { type: "text-delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "text-end"; contentIndex: number; partial: AssistantMessage }
  | { type: "thinking-start"; contentIndex: number; partial: AssistantMessage }
  | { type: "thinking-delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "thinking-end"; contentIndex: number; partial: AssistantMessage }
  | { type: "toolcall-start"; contentIndex: number; id: string; name: string; partial: AssistantMessage }
  | { type: "toolcall-delta"; contentIndex: number; id: string; delta: string; partial: AssistantMessage }
  | { type: "toolcall-end"; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: "done"; message: AssistantMessage }
  | { type: "error"; message: AssistantMessage; error: ModelErrorInfo };

/** A model Arbor can stream from. */
export interface ModelClient {
  /** e.g. `openai`. */
  readonly provider: string;
  /** e.g. `gpt-4o-mini`. */
  readonly modelId: string;
  /** e.g. `openai-chat` or `openai-responses`. */
  readonly api: string;
  /** Context window in tokens, when known. */
  readonly contextWindow?: number;
  /** Max output tokens, when known. */
  readonly maxTokens?: number;
  /** Prices in $ per million tokens, when known. */
  readonly cost?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  readonly reasoning?: boolean;
  /** True when the client sends `request.responseFormat` as the provider's native structured output; typed agents use a final-answer tool otherwise. */
  readonly structuredOutput?: boolean;
  stream(request: ModelRequest, options: { signal?: AbortSignal }): AsyncIterable<ModelStreamEvent>;
}

/**
 * `client`'s description (provider, model id, API, context window and output cap in tokens, prices, reasoning and structured-output support) with
 * another `stream`: how a wrapper (secret redaction, typed-agent answer checks) keeps every field of the model it wraps. Absent optional fields stay
 * absent. Ours.
 */
export function withModelStream(client: ModelClient, stream: ModelClient["stream"]): ModelClient {
  return {
    provider: client.provider,
    modelId: client.modelId,
    api: client.api,
    ...(client.contextWindow !== undefined ? { contextWindow: client.contextWindow } : {}),
    ...(client.maxTokens !== undefined ? { maxTokens: client.maxTokens } : {}),
    ...(client.cost !== undefined ? { cost: client.cost } : {}),
    ...(client.reasoning !== undefined ? { reasoning: client.reasoning } : {}),
    ...(client.structuredOutput ? { structuredOutput: true } : {}),
    stream,
  };
}
