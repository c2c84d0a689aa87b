/**
 * Retry policy of the run actor for failed model calls.
 *
 * Contract (pi's auto-retry schedule, `docs/pi-parity.md`; caps ours):
 * - only errors the adapter marks `retryable` (429, 5xx, overloaded, connection
 *   reset, timeouts) are retried, at most `maxRetries` times per model call;
 * - backoff for attempt n (1-based) is `baseDelayMs · 2^(n−1)`, capped at `maxDelayMs` (ms);
 * - a server-requested delay (`retryAfterMs`, from Retry-After / retry-after-ms) is
 *   honoured when it is longer than the backoff; one above `maxDelayMs` (default 60 s) is
 *   not waited for: the call fails at once, and the failed message names the requested
 *   delay and the cap, also on the first attempt (pi's rule; the wording is ours);
 * - context-overflow errors are never retried here (compaction handles them).
 *
 * @example
 * ```ts
 * const decision = retryDecision({ retryable: true, status: 503 }, 1, resolveRetrySettings({}));
 * if (decision.retry) setTimeout(again, decision.delayMs);
 * ```
 */
import type { ModelErrorInfo } from "../core/model-stream.ts";
import type { RetrySettings } from "./agent-types.ts";

/**
 * Defaults: 3 retries, 2000 ms base, 60000 ms cap (pi's).
 *
 * @example
 * ```ts
 * resolveRetrySettings({ ...DEFAULT_RETRY_SETTINGS, maxRetries: 5 });
 * ```
 */
export const DEFAULT_RETRY_SETTINGS: RetrySettings = { maxRetries: 3, baseDelayMs: 2000, maxDelayMs: 60_000 };

/**
 * Fills defaults and clamps negative values to 0.
 *
 * @example
 * ```ts
 * resolveRetrySettings({ baseDelayMs: 500 }); // { maxRetries: 3, baseDelayMs: 500, maxDelayMs: 60000 }
 * ```
 */
export function resolveRetrySettings(partial: Partial<RetrySettings> | undefined): RetrySettings {
  const merged = { ...DEFAULT_RETRY_SETTINGS, ...partial };
  return {
    maxRetries: Math.max(0, Math.floor(merged.maxRetries)),
    baseDelayMs: Math.max(0, merged.baseDelayMs),
    maxDelayMs: Math.max(0, merged.maxDelayMs),
  };
}

/**
 * Whether to retry attempt `attempt` (1-based: the first retry is 1), and after how long.
 *
 * @example
 * ```ts
 * const decision: RetryDecision = retryDecision({ retryable: true }, 1, settings);
 * ```
 */
export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: string };

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * Decides one retry (see the module contract). Pure.
 *
 * @example
 * ```ts
 * retryDecision({ retryable: true, retryAfterMs: 3000 }, 1, settings); // { retry: true, delayMs: 3000 }
 * ```
 */
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
