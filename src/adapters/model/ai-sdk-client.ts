/**
 * `createAiSdkModelClient`: any AI SDK language model as an Arbor {@link ModelClient}. It calls `model.doStream` once per request (not `streamText`:
 * Arbor's actors own the loop, tools and retries), with the prompt built by `incremental-prompt.ts`. `stream()` never rejects: it yields `start`,
 * block events, then one terminal `done` or `error` (aborts: stopReason `aborted`; timeouts and idle timeouts: retryable `error`). No retries and no
 * request hooks here; request headers never appear in what it returns.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4FunctionTool, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { ThinkingLevel } from "../../core/messages.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../../core/model-stream.ts";
import { classifyModelError } from "./model-errors.ts";
import { StreamAssembler } from "./stream-assembler.ts";
import type { ThinkingLevelMap } from "./thinking.ts";
import { reasoningProviderOptions } from "./thinking.ts";
import type { ProviderOptionsRecord } from "./provider-options.ts";
import { createPromptBuilder } from "./incremental-prompt.ts";
import { wellFormed } from "./to-model-messages.ts";
import type { ModelCost } from "./usage.ts";
import { ignoreError } from "../../core/ignored.ts";

/**
 * Facts about the model the AI SDK does not know; all optional.
 * @example
 * const info: AiSdkModelInfo = { contextWindow: 128_000, cost: { input: 0.15, output: 0.6 }, thinkingLevelMap: { xhigh: "xhigh" } };
 */
export interface AiSdkModelInfo {
  /** Arbor provider name; default: the AI SDK provider up to the first dot (`openai.chat` → `openai`). */
  provider?: string;
  /** Default: the AI SDK model id. */
  modelId?: string;
  /** Arbor api name; default: the AI SDK provider with dots as dashes (`openai-chat`). */
  api?: string;
  /** Context window in tokens. */
  contextWindow?: number;
  /** Max output tokens. */
  maxTokens?: number;
  /** Prices in $ per million tokens; enables `usage.cost`. */
  cost?: ModelCost;
  /** Whether the model reasons; `false` never sends reasoning options. */
  reasoning?: boolean;
  /** Per-level override of the provider's reasoning effort/budget (see thinking.ts). */
  thinkingLevelMap?: ThinkingLevelMap;
  /** Replace the built-in thinking-level mapping entirely. */
  reasoningOptions?: (level: ThinkingLevel) => ProviderOptionsRecord | undefined;
  /**
   * Read `reasoning_content` / `reasoning` / `reasoning_text` from raw Chat Completions chunks (DeepSeek, xAI, vLLM… behind `@ai-sdk/openai`'s chat
   * model, which ignores them). Default: true for provider `openai.chat`, false otherwise (other providers parse their own).
   */
  chatReasoningFields?: boolean;
  /**
   * Cancel a call when the model sends nothing (no headers, no stream part) for this many ms: a stalled connection then ends with a retryable error
   * instead of hanging. Default {@link DEFAULT_IDLE_TIMEOUT_MS} (120 s); `0` turns it off (a reasoning model on Chat Completions that thinks silently
   * for longer needs a larger value). Independent of `request.timeoutMs`, which caps the whole request.
   */
  idleTimeoutMs?: number;
  /** Provider options sent on every call, below the thinking options and `request.providerOptions`. */
  providerOptions?: ProviderOptionsRecord;
  /**
   * Whether `request.responseFormat` is sent as the call's `responseFormat` (the provider's native structured output). Default: true for
   * `openai.chat` and `openai.responses` (Chat Completions `response_format` json_schema, Responses `text.format`), false otherwise (other adapters
   * may emulate it with a forced tool, which would end a tool loop).
   */
  structuredOutput?: boolean;
}

/**
 * The default idle timeout between stream parts, in ms (120 s).
 * @example
 * createOpenAIModel({ modelId: "gpt-4o-mini", idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS / 4 });
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/** Stream parts that carry nothing the model said (a stream made only of these yielded nothing). */
const EMPTY_PARTS = new Set(["stream-start", "finish", "raw"]);

function mergeProviderOptions(...layers: (ProviderOptionsRecord | undefined)[]): ProviderOptionsRecord | undefined {
  const merged: ProviderOptionsRecord = {};
  for (const layer of layers) {
    if (!layer) continue;
    for (const [provider, options] of Object.entries(layer)) merged[provider] = { ...merged[provider], ...options };
  }
  return Object.keys(merged).length > 0 ? merged : undefined;
}

/** Resolves when `signal` aborts (never rejects); `undefined` signal never resolves. */
function whenAborted(signal: AbortSignal | undefined): Promise<"aborted"> {
  return new Promise((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve("aborted");
    else signal.addEventListener("abort", () => resolve("aborted"), { once: true });
  });
}

/**
 * Wrap an AI SDK 7 language model (`LanguageModelV4`) as an Arbor {@link ModelClient}.
 * See the module contract for the event and error semantics. Construction never throws.
 * @param model - e.g. `openai.chat("gpt-4o")`, `anthropic("claude-sonnet-4-5")`, or a `MockLanguageModelV4`.
 * @param info - provider/api naming, context window and max tokens (tokens), prices ($ per million tokens), reasoning mapping.
 * @example
 * const client = createAiSdkModelClient(new MockLanguageModelV4({ doStream: async () => ({ stream }) }));
 */
export function createAiSdkModelClient(model: LanguageModelV4, info: AiSdkModelInfo = {}): ModelClient {
  const provider = info.provider ?? model.provider.split(".")[0];
  const api = info.api ?? model.provider.replace(/\./g, "-");
  const modelId = info.modelId ?? model.modelId;
  const chatReasoningFields = info.chatReasoningFields ?? model.provider === "openai.chat";
  const structuredOutput = info.structuredOutput ?? (model.provider === "openai.chat" || model.provider === "openai.responses");

  const reasoningOptions = (level: ThinkingLevel | undefined): ProviderOptionsRecord | undefined => {
    if (!level || level === "off" || info.reasoning === false) return undefined;
    return info.reasoningOptions ? info.reasoningOptions(level) : reasoningProviderOptions(model.provider, level, info.thinkingLevelMap);
  };

  // Each message is converted, validated and turned into the provider prompt once; a call
  // converts only the conversation's new suffix (incremental-prompt.ts).
  const prompts = createPromptBuilder({ provider, api, modelId });

  async function callOptions(request: ModelRequest, abortSignal: AbortSignal): Promise<LanguageModelV4CallOptions> {
    const system = request.systemPrompt === undefined ? undefined : wellFormed(request.systemPrompt);
    const prompt = await prompts.build(system, request.messages, { supportedUrls: await model.supportedUrls, abortSignal });
    const tools: LanguageModelV4FunctionTool[] = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      inputSchema: tool.parameters as LanguageModelV4FunctionTool["inputSchema"],
    }));
    const providerOptions = mergeProviderOptions(info.providerOptions, reasoningOptions(request.thinkingLevel), request.providerOptions);
    return {
      prompt,
      ...(tools.length > 0 ? { tools, toolChoice: { type: "auto" as const } } : {}),
      ...(request.maxTokens !== undefined ? { maxOutputTokens: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.headers ? { headers: request.headers } : {}),
      ...(providerOptions ? { providerOptions: providerOptions as LanguageModelV4CallOptions["providerOptions"] } : {}),
      ...(structuredOutput && request.responseFormat
        ? {
            responseFormat: {
              type: "json" as const,
              schema: request.responseFormat.schema as NonNullable<Extract<LanguageModelV4CallOptions["responseFormat"], { type: "json" }>["schema"]>,
              ...(request.responseFormat.name !== undefined ? { name: request.responseFormat.name } : {}),
              ...(request.responseFormat.description !== undefined ? { description: request.responseFormat.description } : {}),
            },
          }
        : {}),
      abortSignal,
      includeRawChunks: chatReasoningFields,
    };
  }

  async function* stream(request: ModelRequest, options: { signal?: AbortSignal } = {}): AsyncGenerator<ModelStreamEvent> {
    const assembler = new StreamAssembler({ api, provider, model: modelId }, info.cost, { chatReasoningFields });
    yield assembler.start();

    const userSignal = options.signal;
    const timeoutSignal = request.timeoutMs !== undefined ? AbortSignal.timeout(request.timeoutMs) : undefined;
    const idleTimeoutMs = info.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    const idle = idleTimeoutMs > 0 ? new AbortController() : undefined;
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    // The idle clock runs only while we wait on the model, never while the consumer handles events.
    const startIdleClock = () => {
      if (idle) idleTimer = setTimeout(() => idle.abort(), idleTimeoutMs);
    };
    const stopIdleClock = () => clearTimeout(idleTimer);
    const signals = [userSignal, timeoutSignal, idle?.signal].filter((signal): signal is AbortSignal => signal !== undefined);
    const abortSignal = signals.length > 0 ? AbortSignal.any(signals) : new AbortController().signal;
    const stopped = whenAborted(abortSignal);

    const fail = (error: unknown): ModelStreamEvent => {
      if (userSignal?.aborted) return assembler.error("Request was aborted", { retryable: false }, "aborted");
      if (timeoutSignal?.aborted) {
        return assembler.error(`Model request timed out after ${request.timeoutMs} ms`, { retryable: true }, "error");
      }
      if (idle?.signal.aborted) {
        return assembler.error(
          `Idle timeout: the model sent nothing for ${idleTimeoutMs} ms, so the request was cancelled (raise idleTimeoutMs, or --idle-timeout in the CLI, for models that stay silent longer)`,
          { retryable: true },
          "error",
        );
      }
      const { message, aborted: _aborted, ...facts } = classifyModelError(error);
      return assembler.error(message, facts, "error");
    };

    if (abortSignal.aborted) {
      yield fail(undefined);
      return;
    }

    let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | undefined;
    startIdleClock();
    try {
      const started = await Promise.race([
        (async () => model.doStream(await callOptions(request, abortSignal)))(),
        stopped,
      ]);
      stopIdleClock();
      if (started === "aborted") {
        yield fail(undefined);
        return;
      }
      reader = started.stream.getReader();
    } catch (error) {
      stopIdleClock();
      yield fail(error);
      return;
    }

    let streamError: { error: unknown } | undefined;
    let finished = false;
    let ended = false;
    let contentParts = 0;
    // Abort cancels the reader, which settles a pending read even when the model ignores its abortSignal. (Racing every read against the signal would
    // pile reactions onto one pending promise: memory and GC cost growing with the stream.)
    const activeReader = reader;
    const cancelOnAbort = () => void activeReader.cancel().catch(ignoreError("cancelling a model stream on abort; the abort ends the call"));
    abortSignal.addEventListener("abort", cancelOnAbort, { once: true });
    try {
      for (;;) {
        startIdleClock();
        const next = await reader.read();
        stopIdleClock();
        if (next.done) {
          ended = true;
          break;
        }
        if (abortSignal.aborted) break;
        const part = next.value;
        if (part.type === "error") {
          streamError ??= { error: part.error };
          continue;
        }
        if (part.type === "finish") finished = true;
        if (!EMPTY_PARTS.has(part.type)) contentParts++;
        for (const event of assembler.handle(part)) yield event;
      }
    } catch (error) {
      streamError ??= { error };
    } finally {
      stopIdleClock();
      abortSignal.removeEventListener("abort", cancelOnAbort);
      if (!ended) reader.cancel().catch(ignoreError("cancelling an unfinished model stream; the stream's outcome is already known"));
    }

    for (const event of assembler.closeAll()) yield event;
    if (abortSignal.aborted) yield fail(undefined);
    else if (streamError) yield fail(streamError.error);
    else if (!finished) yield fail(new Error("The model stream ended without a finish event"));
    else if (contentParts === 0) yield fail(Object.assign(new Error("The model's response yielded no stream parts (an empty stream: no metadata, text, reasoning or tool calls)"), { isRetryable: true }));
    else yield assembler.done();
  }

  return {
    provider,
    modelId,
    api,
    ...(info.contextWindow !== undefined ? { contextWindow: info.contextWindow } : {}),
    ...(info.maxTokens !== undefined ? { maxTokens: info.maxTokens } : {}),
    ...(info.cost !== undefined ? { cost: info.cost } : {}),
    ...(info.reasoning !== undefined ? { reasoning: info.reasoning } : {}),
    ...(structuredOutput ? { structuredOutput } : {}),
    stream,
  };
}
