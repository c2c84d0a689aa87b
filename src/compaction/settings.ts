/**
 * Compaction settings and their validation. Defaults (pi's): `enabled`, `reserveTokens` 16384, `keepRecentTokens` 20000,
 * `branchSummaryReserveTokens` 16384. `contextWindow` is a number or a map by `provider/modelId` or `modelId`, else the model's own; with none
 * known, threshold compaction is skipped. {@link resolveCompactionSettings} throws `HarnessConfigError` naming the bad field, never repairing it.
 */
import { z } from "zod";
import { HarnessConfigError } from "../core/errors.ts";
import type { ModelClient } from "../core/model-stream.ts";
import { formatZodError } from "../core/tools.ts";

/**
 * Resolved compaction settings (all token figures in tokens).
 * @example
 * const settings: CompactionSettings = resolveCompactionSettings({ reserveTokens: 8192 });
 */
export interface CompactionSettings {
  /** Automatic compaction (between turns and on overflow). Manual compaction works regardless. */
  enabled: boolean;
  /** Tokens kept free for the summary and the next reply; the threshold is window − reserve. */
  reserveTokens: number;
  /** Tokens of recent messages kept verbatim. */
  keepRecentTokens: number;
  /** Context window: one number, or per model (`provider/modelId` or `modelId`). */
  contextWindow?: number | Record<string, number>;
  /** Model used for summaries instead of the session's model. */
  summarizationModel?: ModelClient;
  /** Reserve for branch summaries (input budget = window − this). */
  branchSummaryReserveTokens: number;
}

/**
 * Defaults. Source: pi.
 * @example
 * DEFAULT_COMPACTION_SETTINGS.keepRecentTokens; // 20000
 */
export const DEFAULT_COMPACTION_SETTINGS: Readonly<CompactionSettings> = Object.freeze({
  enabled: true,
  reserveTokens: 16384,
  keepRecentTokens: 20000,
  branchSummaryReserveTokens: 16384,
});

/**
 * Window used by branch summarization when the model's window is unknown. Source: pi.
 * @example
 * const window = resolveContextWindow(settings, model) ?? FALLBACK_CONTEXT_WINDOW;
 */
export const FALLBACK_CONTEXT_WINDOW = 128_000;

const positiveInt = z.number().int().positive();
const settingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  reserveTokens: positiveInt.optional(),
  keepRecentTokens: positiveInt.optional(),
  contextWindow: z.union([positiveInt, z.record(z.string(), positiveInt)]).optional(),
  summarizationModel: z.custom<ModelClient>(
    (value) => typeof value === "object" && value !== null && typeof (value as ModelClient).stream === "function",
    { message: "must be a ModelClient (an object with a stream() method)" },
  ).optional(),
  branchSummaryReserveTokens: positiveInt.optional(),
});

/**
 * Input of {@link resolveCompactionSettings}: any subset of the settings.
 * @example
 * const input: CompactionSettingsInput = { enabled: false };
 */
export type CompactionSettingsInput = Partial<CompactionSettings>;

/**
 * Merges `input` over the defaults and validates it. Throws `HarnessConfigError` (code `HARNESS_CONFIG_INVALID`) naming the failing field, e.g.
 * "compaction.reserveTokens: Too small…", or an unknown key.
 * @example
 * resolveCompactionSettings({ keepRecentTokens: 8000 }).reserveTokens; // 16384
 */
export function resolveCompactionSettings(input: CompactionSettingsInput = {}): CompactionSettings {
  const parsed = settingsSchema.safeParse(input);
  if (!parsed.success) {
    throw new HarnessConfigError(`Invalid compaction settings: ${formatZodError(parsed.error).replace(/^/, "compaction.")}`, {
      details: { issues: parsed.error.issues },
    });
  }
  const merged: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS };
  for (const [key, value] of Object.entries(parsed.data)) {
    if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value;
  }
  if (input.summarizationModel) merged.summarizationModel = input.summarizationModel;
  return merged;
}

/**
 * The context window for `model` in tokens: the settings' number, else the map entry
 * for `provider/modelId`, else for `modelId`, else `model.contextWindow`, else undefined.
 * @example
 * resolveContextWindow({ ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 8192 }, model); // 8192
 */
export function resolveContextWindow(
  settings: Pick<CompactionSettings, "contextWindow">,
  model: Pick<ModelClient, "provider" | "modelId" | "contextWindow">,
): number | undefined {
  const configured = settings.contextWindow;
  if (typeof configured === "number") return configured;
  if (configured) {
    const byModel = configured[`${model.provider}/${model.modelId}`] ?? configured[model.modelId];
    if (byModel !== undefined) return byModel;
  }
  return model.contextWindow;
}

/**
 * The keep-recent budget actually used for a window (ours): `keepRecentTokens`, but at most half of what fits below the threshold (`(window −
 * reserve) / 2`), so that a compacted context (summary + kept tail) lands under the threshold even for small windows. Without a window it is
 * `keepRecentTokens`.
 * @example
 * effectiveKeepRecentTokens({ ...DEFAULT_COMPACTION_SETTINGS, reserveTokens: 1000 }, 8000); // 3500
 */
export function effectiveKeepRecentTokens(
  settings: Pick<CompactionSettings, "keepRecentTokens" | "reserveTokens">,
  contextWindow: number | undefined,
): number {
  if (contextWindow === undefined) return settings.keepRecentTokens;
  const room = Math.floor((contextWindow - settings.reserveTokens) / 2);
  return Math.max(1, Math.min(settings.keepRecentTokens, room));
}
