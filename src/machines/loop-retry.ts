/**
 * Retry policy for failed model calls (pi's schedule): only `retryable` errors, at most `maxRetries` per call, backoff `baseDelayMs · 2^(n−1)`
 * capped at `maxDelayMs`; a longer server-requested delay is honoured, one above the cap fails the call at once; context overflow is never retried.
 */
import type { ModelErrorInfo } from "../core/model-stream.ts";
import type { RetrySettings } from "./agent-types.ts";

/** Defaults: 3 retries, 2000 ms base, 60000 ms cap (pi's). */
export const DEFAULT_RETRY_SETTINGS: RetrySettings = { maxRetries: 3, baseDelayMs: 2000, maxDelayMs: 60_000 };

/** Fills defaults and clamps negative values to 0. */
export function resolveRetrySettings(partial: Partial<RetrySettings> | undefined): RetrySettings {
  const merged = { ...DEFAULT_RETRY_SETTINGS, ...partial };
  return {
    maxRetries: Math.max(0, Math.floor(merged.maxRetries)),
    baseDelayMs: Math.max(0, merged.baseDelayMs),
    maxDelayMs: Math.max(0, merged.maxDelayMs),
  };
}

/** Whether to retry attempt `attempt` (1-based: the first retry is 1), and after how long. */
export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: string };

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** Decides one retry (see the module contract). Pure. */
export function retryDecision(error: ModelErrorInfo, attempt: number, settings: RetrySettings): RetryDecision {
  if (!error.retryable || error.contextOverflow) return { retry: false, reason: "not retryable" };
  if (attempt > settings.maxRetries) {
    return { retry: false, reason: `gave up after ${settings.maxRetries} retries` };
  }
  const backoff = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));
  if (error.retryAfterMs !== undefined) {
    if (error.retryAfterMs > settings.maxDelayMs) {
      return {
        retry: false,
        reason: `the server asked to wait ${error.retryAfterMs} ms (${formatSeconds(error.retryAfterMs)}), more than the maximum retry delay of ${settings.maxDelayMs} ms (retry.maxDelayMs), so it was not retried`,
      };
    }
    return { retry: true, delayMs: Math.max(backoff, error.retryAfterMs) };
  }
  return { retry: true, delayMs: backoff };
}
