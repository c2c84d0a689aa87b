/**
 * Thinking levels → provider reasoning options (`providerOptions`): OpenAI `reasoningEffort` (xhigh clamps to high unless `levelMap` says otherwise),
 * Anthropic `thinking.budgetTokens` and Google `thinkingBudget` (1024/2048/8192/16384/32768 tokens for minimal…xhigh). `off` and unknown providers
 * send nothing. Never throws.
 */
import type { ThinkingLevel } from "../../core/messages.ts";
import type { ProviderOptionsRecord } from "./provider-options.ts";

/**
 * Per-level override of the provider's effort value; `null` sends nothing for that level.
 * @example
 * const map: ThinkingLevelMap = { xhigh: "xhigh", minimal: null };
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
 * @example
 * THINKING_BUDGETS.medium; // 8192 tokens
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
 * @example
 * reasoningProviderOptions("openai.chat", "xhigh", { xhigh: "xhigh" }); // { openai: { reasoningEffort: "xhigh" } }
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
