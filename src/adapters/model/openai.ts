/**
 * `createOpenAIModel`: `@ai-sdk/openai` (Chat Completions or Responses) behind {@link createAiSdkModelClient}, plus the wire hooks. The key is read at
 * call time (a missing one fails the call, not construction); Responses calls are stateless (`store: false`); `onPayload` may replace the request
 * body and `onResponse` sees every response, a throwing hook fails the call; SSE passes through the id and index normalisers. Headers never
 * appear in events, messages or errors. `@ai-sdk/openai` loads on a model's first call (as the Anthropic and Google providers do), not with the root entry.
 */
import { ModelConfigError } from "../../core/errors.ts";
import type { ModelClient, ModelRequest, ProviderHooks } from "../../core/model-stream.ts";
import type { AiSdkModelInfo } from "./ai-sdk-client.ts";
import { createAiSdkModelClient } from "./ai-sdk-client.ts";
import { distinctChatToolCallIndexes } from "./chat-tool-call-indexes.ts";
import { keyedModelClient, modelInfo } from "./keyed-client.ts";
import { stableResponsesItemIds } from "./responses-item-ids.ts";
import type { ThinkingLevelMap } from "./thinking.ts";
import type { ProviderOptionsRecord } from "./provider-options.ts";
import type { ModelCost } from "./usage.ts";
import { ignoreError } from "../../core/ignored.ts";

/**
 * Options of {@link createOpenAIModel}. Token counts in tokens, prices in $ per million tokens.
 * @example
 * const options: OpenAIModelOptions = { modelId: "gpt-4o-mini", api: "chat", baseURL: "http://127.0.0.1:8080/v1" };
 */
export interface OpenAIModelOptions {
  /** e.g. `gpt-4o-mini`. Required. */
  modelId: string;
  /** Base URL ending in `/v1`; default `OPENAI_BASE_URL`, else OpenAI's. */
  baseURL?: string;
  /** Default `OPENAI_API_KEY` (read at call time). */
  apiKey?: string;
  /** Wire format; default {@link defaultOpenAIWire}: `"chat"` when a base URL is given (option or `OPENAI_BASE_URL`), else `"responses"`. */
  api?: "chat" | "responses";
  /** Extra headers on every HTTP call (never logged). */
  headers?: Record<string, string>;
  contextWindow?: number;
  maxTokens?: number;
  cost?: ModelCost;
  /** Whether the model reasons; `false` never sends reasoning options. */
  reasoning?: boolean;
  /** Per-level reasoning effort override, e.g. `{ xhigh: "xhigh" }`. */
  thinkingLevelMap?: ThinkingLevelMap;
  /** Provider name in Arbor messages; default `openai`. */
  name?: string;
  /** Cancel a call after this many ms without any data (see `AiSdkModelInfo.idleTimeoutMs`). Default 120 000 (120 s); `0` turns it off. */
  idleTimeoutMs?: number;
  /** AI SDK provider options on every call, over Arbor's defaults and under `request.providerOptions`; e.g. `{ openai: { serviceTier: "flex" } }`. */
  providerOptions?: ProviderOptionsRecord;
}

function headersRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, key) => {
    record[key] = value;
  });
  return record;
}

class HookError extends Error {
  readonly isRetryable = false;
  constructor(hook: string, cause: unknown) {
    super(`The ${hook} hook failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "HookError";
  }
}

/** A 2xx answer to a streaming request that is not an event stream (a proxy's login page, a JSON body). */
class NotAStreamError extends Error {
  readonly isRetryable = false;
  constructor(status: number, contentType: string, firstBytes: string) {
    super(
      `The server answered HTTP ${status} with content type ${JSON.stringify(contentType)} instead of an event stream (text/event-stream); first bytes: ${JSON.stringify(firstBytes)}`,
    );
    this.name = "NotAStreamError";
  }
}

const FIRST_BYTES = 200;

/** Up to {@link FIRST_BYTES} bytes of `response`'s body as text; the body is cancelled afterwards. */
async function firstBytes(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < FIRST_BYTES) {
      const next = await reader.read();
      if (next.done) break;
      chunks.push(next.value);
      size += next.value.byteLength;
    }
  } finally {
    await reader.cancel().catch(ignoreError("cancelling an error body after its first bytes were read"));
  }
  return Buffer.concat(chunks).subarray(0, FIRST_BYTES).toString("utf8");
}

function isStreamingRequest(body: unknown): boolean {
  if (typeof body !== "string") return false;
  try {
    return (JSON.parse(body) as { stream?: unknown }).stream === true;
  } catch {
    return false;
  }
}

/** `baseURL` without `user:password@`, and the `Authorization: Basic` value they become (fetch refuses URLs with credentials). */
function splitUrlCredentials(baseURL: string): { url: string; authorization?: string } {
  let parsed: URL;
  try {
    parsed = new URL(baseURL);
  } catch {
    return { url: baseURL };
  }
  if (!parsed.username && !parsed.password) return { url: baseURL };
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  parsed.username = "";
  parsed.password = "";
  return { url: parsed.href.replace(/\/$/, baseURL.endsWith("/") ? "/" : ""), authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` };
}

/**
 * A `fetch` that runs the request's provider hooks (`onPayload`, `onResponse`) around the real one, pins Responses item ids and keeps Chat tool calls
 * apart; a throwing hook rejects with a non-retryable error naming it. Used by every provider factory (OpenAI, Anthropic, Google).
 */
export function hookedFetch(hooks: ProviderHooks | undefined): typeof fetch {
  return async (input, init) => {
    let body = init?.body;
    if (hooks?.onPayload && typeof body === "string") {
      let replaced: unknown;
      try {
        replaced = await hooks.onPayload(JSON.parse(body));
      } catch (error) {
        throw new HookError("onPayload", error);
      }
      if (replaced !== undefined) body = JSON.stringify(replaced);
    }
    const response = await fetch(input, { ...init, body });
    if (hooks?.onResponse) {
      try {
        await hooks.onResponse({ status: response.status, headers: headersRecord(response.headers) });
      } catch (error) {
        await response.body?.cancel().catch(ignoreError("cancelling a response body after onResponse threw; the HookError is thrown"));
        throw new HookError("onResponse", error);
      }
    }
    const contentType = response.headers.get("content-type");
    if (response.ok && contentType && !contentType.includes("text/event-stream") && isStreamingRequest(body)) {
      throw new NotAStreamError(response.status, contentType, await firstBytes(response));
    }
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (response.body && /\/responses(?:\?|$)/.test(url) && response.headers.get("content-type")?.includes("text/event-stream")) {
      return new Response(response.body.pipeThrough(stableResponsesItemIds()), { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    if (response.body && /\/chat\/completions(?:\?|$)/.test(url) && response.headers.get("content-type")?.includes("text/event-stream")) {
      return new Response(response.body.pipeThrough(distinctChatToolCallIndexes()), { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    return response;
  };
}

/** The password of a URL's credentials, decoded and as written, if any (secrets to redact). */
export function urlSecrets(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const parsed = new URL(url);
    return [decodeURIComponent(parsed.password), parsed.password].filter((value) => value.length > 0);
  } catch {
    return [];
  }
}


/**
 * The wire API used when none is chosen, the one rule for `createOpenAIModel` and the CLI: Chat Completions when a base URL is given (most
 * OpenAI-compatible servers — Ollama, vLLM, llama.cpp, gateways — speak only Chat Completions), else Responses (OpenAI itself). Ours.
 * @example
 * defaultOpenAIWire(undefined); // "responses"
 * defaultOpenAIWire("http://127.0.0.1:11434/v1"); // "chat"
 */
export function defaultOpenAIWire(baseURL: string | undefined): "chat" | "responses" {
  return baseURL !== undefined && baseURL !== "" ? "chat" : "responses";
}

/** Refuses a `baseURL` every request would fail on (empty, relative, not http(s)). */
function checkBaseURL(baseURL: unknown): void {
  let parsed: URL | undefined;
  try {
    parsed = typeof baseURL === "string" && baseURL.trim() !== "" ? new URL(baseURL) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol !== "http:" && parsed?.protocol !== "https:") {
    throw new ModelConfigError(`createOpenAIModel: \`baseURL\` must be an absolute http(s) URL such as "http://127.0.0.1:8080/v1", or left out for OPENAI_BASE_URL / the OpenAI API; got ${JSON.stringify(baseURL)}.`);
  }
}

/**
 * Create an OpenAI (or OpenAI-compatible) model client over `@ai-sdk/openai`. Throws {@link ModelConfigError} (code `MODEL_CONFIG_INVALID`) only for
 * a missing `modelId`, an unknown `api`, or a `baseURL` that is not an absolute `http:`/`https:` URL (an empty string included); a missing API key is
 * reported per call instead. Without `api`, the wire is {@link defaultOpenAIWire}'s (Chat Completions when a base URL is given).
 * @example
 * const model = createOpenAIModel({ modelId: "gpt-5-mini", baseURL: server.url, apiKey: "test" });
 */
export function createOpenAIModel(options: OpenAIModelOptions): ModelClient {
  if (typeof options?.modelId !== "string" || options.modelId.trim() === "") {
    throw new ModelConfigError("createOpenAIModel: `modelId` must be a non-empty string, e.g. \"gpt-4o-mini\".");
  }
  if (options.baseURL !== undefined) checkBaseURL(options.baseURL);
  const wire = options.api ?? defaultOpenAIWire(options.baseURL ?? process.env.OPENAI_BASE_URL);
  if (wire !== "chat" && wire !== "responses") {
    throw new ModelConfigError(`createOpenAIModel: \`api\` must be "chat" or "responses", got ${JSON.stringify(options.api)}.`);
  }
  const provider = options.name ?? "openai";
  const api = wire === "chat" ? "openai-chat" : "openai-responses";
  const info: AiSdkModelInfo = modelInfo(options, provider, api);

  const clientFor = async (request: ModelRequest, apiKey: string): Promise<ModelClient> => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    // fetch refuses a URL with credentials: they travel as `Authorization: Basic` instead
    // (replacing the key's Bearer header, which such a proxy does not expect).
    const { url: baseURL, authorization } = splitUrlCredentials(options.baseURL ?? process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1");
    const headers = { ...(authorization ? { Authorization: authorization } : {}), ...options.headers };
    const openai = createOpenAI({
      apiKey,
      baseURL,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      fetch: hookedFetch(request.hooks),
    });
    const model = wire === "chat" ? openai.chat(options.modelId) : openai.responses(options.modelId);
    const reasoningOn = request.thinkingLevel !== undefined && request.thinkingLevel !== "off" && options.reasoning !== false;
    const defaults: ProviderOptionsRecord = wire === "responses" ? { openai: { store: false, ...(reasoningOn ? { include: ["reasoning.encrypted_content"] } : {}) } } : {};
    const providerOptions: ProviderOptionsRecord = { ...defaults };
    for (const [key, value] of Object.entries(options.providerOptions ?? {})) providerOptions[key] = { ...providerOptions[key], ...value };
    return createAiSdkModelClient(model, { ...info, ...(Object.keys(providerOptions).length > 0 ? { providerOptions } : {}) });
  };

  return keyedModelClient({
    provider,
    api,
    modelId: options.modelId,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    label: "OpenAI",
    keyVariables: ["OPENAI_API_KEY"],
    factory: "createOpenAIModel",
    // Providers and proxies sometimes echo the key, a header or URL credentials in error text; none of them may reach the message (and so the log).
    secrets: () => {
      const baseURL = options.baseURL ?? process.env.OPENAI_BASE_URL;
      return [
        ...Object.values(options.headers ?? {}),
        ...urlSecrets(baseURL),
        ...(baseURL ? [splitUrlCredentials(baseURL).authorization?.slice("Basic ".length) ?? ""] : []),
      ];
    },
    build: clientFor,
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.cost !== undefined ? { cost: options.cost } : {}),
    ...(options.reasoning !== undefined ? { reasoning: options.reasoning } : {}),
    // Both wires have a native structured-output mode (Chat `response_format`, Responses `text.format`).
    structuredOutput: true,
  });
}
