/**
 * AI SDK usage → Arbor {@link Usage}, with cost.
 *
 * Contract (pi-ai's accounting, pi-behaviour.md §8; ours for unknowns):
 * - `input` counts NON-cached input tokens (pi: prompt tokens minus cache reads and writes);
 *   `cacheRead` / `cacheWrite` are counted separately; `output` includes reasoning tokens;
 * - a count the provider did not report is `null`, never 0 or NaN; when the non-cached
 *   input is not reported it is derived as total − cacheRead − cacheWrite (unreported cache
 *   counts as 0, since a provider that reports no cache numbers did not cache);
 * - `totalTokens` = input + output + cacheRead + cacheWrite (unknown cache counts as 0) when
 *   input and output are known, else null;
 * - the provider's raw usage is read directly where its shape is known, because the AI SDK
 *   packages report missing counts as 0 (`@ai-sdk/openai` 3 and 4, `@ai-sdk/google` 3 and 4) and the three
 *   providers count cache tokens differently:
 *   - OpenAI Chat (`prompt_tokens`, `prompt_tokens_details.cached_tokens`, DeepSeek's
 *     `prompt_cache_hit_tokens`) and Responses (`input_tokens`, `input_tokens_details.cached_tokens`):
 *     the prompt count INCLUDES cached tokens, so input = prompt − cached;
 *   - Anthropic Messages (`input_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`):
 *     `input_tokens` EXCLUDES cache reads and writes, so input = `input_tokens` as is (adding or
 *     subtracting the cache counts is the 2–4× over-count peers make);
 *   - Gemini (`promptTokenCount`, `cachedContentTokenCount`, `candidatesTokenCount`,
 *     `thoughtsTokenCount`, `toolUsePromptTokenCount`): the prompt count INCLUDES cached tokens;
 *     output = candidates + thoughts (Gemini counts thoughts apart); tool-use prompt tokens are
 *     input (ours: the AI SDK drops them, though they are billed), so `totalTokens` equals
 *     Gemini's `totalTokenCount`;
 * - `cost` ($) is present only when prices ($ per million tokens) are given and input and
 *   output are known: cost_x = price_x / 1e6 × tokens_x; total = sum.
 *
 * @example
 * ```ts
 * toUsage({ inputTokens: { total: 100, noCache: 80, cacheRead: 20, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } }, { input: 1, output: 2 });
 * // { input: 80, output: 5, cacheRead: 20, cacheWrite: null, totalTokens: 105, cost: {...} }
 * ```
 */
import type { LanguageModelV4Usage } from "@ai-sdk/provider";
import type { Usage } from "../../core/messages.ts";

/**
 * Prices in $ per million tokens.
 *
 * @example
 * ```ts
 * const cost: ModelCost = { input: 2.5, output: 10, cacheRead: 1.25 }; // $ per million tokens
 * ```
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
 *
 * @example
 * ```ts
 * toUsage(undefined); // { input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null }
 * ```
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
 * `usage` with its `cost` computed from its counts and `cost`'s prices (replacing any cost it had);
 * `usage` itself when input or output is unknown.
 *
 * @example
 * ```ts
 * priceUsage({ input: 1_000_000, output: 0, cacheRead: null, cacheWrite: null, totalTokens: 1_000_000 }, { input: 2, output: 8 }).cost?.total; // 2
 * ```
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

/**
 * Raw usage of a known shape, read directly (see the module contract): Anthropic Messages,
 * Gemini `usageMetadata`, OpenAI Chat Completions and Responses. Undefined for other shapes.
 */
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
