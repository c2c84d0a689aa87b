/**
 * AI SDK usage → Arbor {@link Usage}, with cost. `input` counts NON-cached input tokens, `cacheRead`/`cacheWrite` apart, `output` includes
 * reasoning; an unreported count is `null`, never 0. The raw provider usage is read where known because providers count cache differently
 * (OpenAI and Gemini include cached tokens in the prompt count, Anthropic excludes them). `cost` ($) needs prices ($ per million tokens).
 */
import type { LanguageModelV4Usage } from "@ai-sdk/provider";
import type { Usage } from "../../core/messages.ts";

/**
 * Prices in $ per million tokens.
 * @example
 * const cost: ModelCost = { input: 2.5, output: 10, cacheRead: 1.25 }; // $ per million tokens
 */
export interface ModelCost {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

function count(value: number | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * Convert an AI SDK v3 usage report. `undefined` usage gives all-null usage.
 * @example
 * toUsage(undefined); // { input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null }
 */
export function toUsage(usage: LanguageModelV4Usage | undefined, cost?: ModelCost): Usage {
  const counts = countsFromRaw(usage?.raw) ?? {
    inputTotal: count(usage?.inputTokens?.total),
    noCache: count(usage?.inputTokens?.noCache),
    cacheRead: count(usage?.inputTokens?.cacheRead),
    cacheWrite: count(usage?.inputTokens?.cacheWrite),
    output: count(usage?.outputTokens?.total),
  };
  const { inputTotal, cacheRead, cacheWrite, output } = counts;
  let input = counts.noCache;
  if (input === null && inputTotal !== null) input = Math.max(0, inputTotal - (cacheRead ?? 0) - (cacheWrite ?? 0));
  const totalTokens = input !== null && output !== null ? input + output + (cacheRead ?? 0) + (cacheWrite ?? 0) : null;
  const result: Usage = { input, output, cacheRead, cacheWrite, totalTokens };
  return cost ? priceUsage(result, cost) : result;
}

/**
 * `usage` with its `cost` computed from its counts and `cost`'s prices (replacing any cost it had); `usage` itself when input or output is unknown.
 */
export function priceUsage(usage: Usage, cost: ModelCost): Usage {
  const { input, output, cacheRead, cacheWrite } = usage;
  if (input === null || output === null || input === undefined || output === undefined) return usage;
  const perToken = (price: number | undefined, tokens: number | null | undefined) => ((price ?? 0) / 1_000_000) * (tokens ?? 0);
  const parts = {
    input: perToken(cost.input, input),
    output: perToken(cost.output, output),
    cacheRead: perToken(cost.cacheRead, cacheRead),
    cacheWrite: perToken(cost.cacheWrite, cacheWrite),
  };
  return { ...usage, cost: { ...parts, total: parts.input + parts.output + parts.cacheRead + parts.cacheWrite } };
}

interface Counts {
  inputTotal: number | null;
  noCache: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
  output: number | null;
}

function field(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) current = typeof current === "object" && current !== null ? (current as Record<string, unknown>)[key] : undefined;
  return current;
}

function rawCount(value: unknown): number | null {
  return typeof value === "number" ? count(value) : null;
}

/** Raw usage of a known shape (Anthropic, Gemini, OpenAI Chat and Responses), read directly; undefined otherwise. */
function countsFromRaw(raw: unknown): Counts | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  if ("cache_creation_input_tokens" in raw || "cache_read_input_tokens" in raw) {
    // Anthropic Messages: input_tokens already excludes cache reads and writes.
    return {
      inputTotal: null,
      noCache: rawCount(field(raw, "input_tokens")),
      cacheRead: rawCount(field(raw, "cache_read_input_tokens")),
      cacheWrite: rawCount(field(raw, "cache_creation_input_tokens")),
      output: rawCount(field(raw, "output_tokens")),
    };
  }
  if ("promptTokenCount" in raw || "candidatesTokenCount" in raw) {
    // Gemini usageMetadata: promptTokenCount includes the cached tokens; thoughts are counted apart.
    const prompt = rawCount(field(raw, "promptTokenCount"));
    const toolPrompt = rawCount(field(raw, "toolUsePromptTokenCount")) ?? 0;
    const candidates = rawCount(field(raw, "candidatesTokenCount"));
    const thoughts = rawCount(field(raw, "thoughtsTokenCount"));
    return {
      inputTotal: prompt === null ? null : prompt + toolPrompt,
      noCache: null,
      cacheRead: rawCount(field(raw, "cachedContentTokenCount")),
      cacheWrite: null,
      output: candidates === null && thoughts === null ? null : (candidates ?? 0) + (thoughts ?? 0),
    };
  }
  if ("prompt_tokens" in raw || "completion_tokens" in raw) {
    const cacheRead = rawCount(field(raw, "prompt_tokens_details", "cached_tokens")) ?? rawCount(field(raw, "prompt_cache_hit_tokens"));
    return {
      inputTotal: rawCount(field(raw, "prompt_tokens")),
      noCache: null,
      cacheRead,
      cacheWrite: rawCount(field(raw, "prompt_tokens_details", "cache_write_tokens")),
      output: rawCount(field(raw, "completion_tokens")),
    };
  }
  if ("input_tokens" in raw || "output_tokens" in raw) {
    return {
      inputTotal: rawCount(field(raw, "input_tokens")),
      noCache: null,
      cacheRead: rawCount(field(raw, "input_tokens_details", "cached_tokens")),
      cacheWrite: null,
      output: rawCount(field(raw, "output_tokens")),
    };
  }
  return undefined;
}
