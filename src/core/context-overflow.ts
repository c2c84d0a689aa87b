/**
 * "The prompt does not fit": the provider wordings of a context overflow, shared by the model adapter (which marks such errors not retryable) and
 * compaction (which compacts and retries on them). A pure text classifier in the contracts layer, so compaction does not import the model adapter.
 * Source: pi 0.73.1 `pi-ai/utils/overflow.ts`.
 */

/** Provider wordings of "the prompt does not fit". Source: pi 0.73.1 `OVERFLOW_PATTERNS`. */
const OVERFLOW_PATTERNS: readonly RegExp[] = [
  /prompt is too long/i,
  /request_too_large/i,
  /input is too long for requested model/i,
  /exceeds the context window/i,
  /input token count.*exceeds the maximum/i,
  /maximum prompt length is \d+/i,
  /reduce the length of the messages/i,
  /maximum context length is \d+ tokens/i,
  /exceeds the limit of \d+/i,
  /exceeds the available context size/i,
  /greater than the context length/i,
  /context window exceeds limit/i,
  /exceeded model token limit/i,
  /too large for model with \d+ maximum context length/i,
  /model_context_window_exceeded/i,
  /prompt too long; exceeded (?:max )?context length/i,
  /context[_ ]length[_ ]exceeded/i,
  /too many tokens/i,
  /token limit exceeded/i,
  /^4(?:00|13)\s*(?:status code)?\s*\(no body\)/i,
];

/** Wordings that look like overflow but are throttling. Source: pi 0.73.1 `NON_OVERFLOW_PATTERNS`. */
const NON_OVERFLOW_PATTERNS: readonly RegExp[] = [
  /^(Throttling error|Service unavailable):/i,
  /rate limit/i,
  /too many requests/i,
];

/**
 * True when `text` is a provider's "context too long" error message. Source: pi 0.73.1 `isContextOverflow` (error-message case); silent overflow
 * (usage above the window) is the caller's check, it needs the window.
 * @example
 * isContextOverflowMessage("This model's maximum context length is 128000 tokens."); // true
 * isContextOverflowMessage("Rate limit reached: too many tokens per min"); // false
 */
export function isContextOverflowMessage(text: string): boolean {
  if (NON_OVERFLOW_PATTERNS.some((pattern) => pattern.test(text))) return false;
  return OVERFLOW_PATTERNS.some((pattern) => pattern.test(text));
}
