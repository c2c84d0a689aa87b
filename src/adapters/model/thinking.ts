/**
 * Thinking levels → provider reasoning options (AI SDK `providerOptions`).
 *
 * Contract (ours, after pi-ai's `clampReasoning` and thinking budgets, pi-behaviour.md §1.6):
 * - `off` (or no level) sends nothing: the provider's default applies;
 * - OpenAI (`openai.*` providers): `providerOptions.openai.reasoningEffort` =
 *   minimal → "minimal", low → "low", medium → "medium", high → "high", xhigh → "high"
 *   (pi clamps the same way; pass `levelMap: { xhigh: "xhigh" }` for models that accept it);
 *   on the Responses API also `reasoningSummary: "auto"` so reasoning text streams;
 * - Anthropic (`anthropic.*`): `thinking: { type: "enabled", budgetTokens }` with budgets
 *   minimal 1024, low 2048, medium 8192, high 16384, xhigh 32768 tokens (pi's defaults);
 * - Google (`google.*`, `vertex.*`): `thinkingConfig: { thinkingBudget, includeThoughts: true }`,
 *   same budgets;
 * - any other provider: nothing (pass `providerOptions` yourself, or `reasoningOptions`
 *   to {@link createAiSdkModelClient}).
 * Never throws.
 *
 * @example
 * ```ts
 * reasoningProviderOptions("openai.responses", "high");
 * // { openai: { reasoningEffort: "high", reasoningSummary: "auto" } }
 * ```
 */
import type { ThinkingLevel } from "../../core/messages.ts";
import type { ProviderOptionsRecord } from "./provider-options.ts";

/**
 * Per-level override of the provider's effort value; `null` sends nothing for that level.
 *
 * @example
 * ```ts
 * const map: ThinkingLevelMap = { xhigh: "xhigh", minimal: null };
 * ```
 */
export type ThinkingLevelMap = Partial<Record<Exclude<ThinkingLevel, "off">, string | null>>;

const OPENAI_EFFORT: Record<Exclude<ThinkingLevel, "off">, string> = {
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
};

/**
 * Thinking budgets in tokens (pi's defaults).
 *
 * @example
 * ```ts
 * THINKING_BUDGETS.medium; // 8192 tokens
 * ```
 */
export const THINKING_BUDGETS: Readonly<Record<Exclude<ThinkingLevel, "off">, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
};

/**
 * Provider options for a thinking level, keyed by the AI SDK provider name
 * (`LanguageModelV4.provider`, e.g. `openai.chat`). Undefined when nothing applies.
 *
 * @example
 * ```ts
 * reasoningProviderOptions("openai.chat", "xhigh", { xhigh: "xhigh" }); // { openai: { reasoningEffort: "xhigh" } }
 * ```
 */
export function reasoningProviderOptions(
  provider: string,
  level: ThinkingLevel | undefined,
  levelMap: ThinkingLevelMap = {},
): ProviderOptionsRecord | undefined {
  if (!level || level === "off") return undefined;
  const family = provider.split(".")[0];
  if (family === "openai" || family === "azure") {
    const effort = level in levelMap ? levelMap[level] : OPENAI_EFFORT[level];
    if (effort === null || effort === undefined) return undefined;
    const options: Record<string, unknown> = { reasoningEffort: effort };
    if (provider.endsWith(".responses")) options.reasoningSummary = "auto";
    return { [family]: options };
  }
  const budget = level in levelMap ? Number(levelMap[level]) : THINKING_BUDGETS[level];
  if (!Number.isFinite(budget) || budget <= 0) return undefined;
  if (family === "anthropic") return { anthropic: { thinking: { type: "enabled", budgetTokens: budget } } };
  if (family === "google" || family === "vertex") return { google: { thinkingConfig: { thinkingBudget: budget, includeThoughts: true } } };
  return undefined;
}
