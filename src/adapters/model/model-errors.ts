/**
 * Error facts for model calls: retryable or not, how long the server asked us to wait, and whether the context was too long. Never throws, whatever
 * was thrown. Retryable: HTTP 408/409/425/429/5xx, network and DNS failures, timeouts, "overloaded", "rate limit"; never caller aborts, context
 * overflow or quota exhaustion (`insufficient_quota`). `retryAfterMs` reads `retry-after-ms`, else `Retry-After` (seconds or HTTP date, ≥ 0).
 */
import { isContextOverflowMessage } from "../../core/context-overflow.ts";
import type { ModelErrorInfo } from "../../core/model-stream.ts";

/**
 * Facts about a model error plus a human-readable message for `errorMessage`.
 * @example
 * const { message, retryable, retryAfterMs }: ClassifiedModelError = classifyModelError(error);
 */
export interface ClassifiedModelError extends ModelErrorInfo {
  /** One line for humans, e.g. `429 Rate limit reached for gpt-4o`. Never contains request headers. */
  message: string;
  /** True when the caller's AbortSignal ended the call (the message's stopReason is then `aborted`). */
  aborted: boolean;
}

/** Transient wordings (ours, after pi's auto-retry list). */
const RETRYABLE_PATTERNS: readonly RegExp[] = [
  /overloaded/i,
  /rate.?limit/i,
  /too many requests/i,
  /service unavailable/i,
  /bad gateway/i,
  /gateway time-?out/i,
  /internal server error/i,
  /server error/i,
  /server_error/i,
  /server had an error/i,
  /api_error/i,
  /fetch failed/i,
  /failed to fetch/i,
  /cannot connect to api/i,
  /connection (?:refused|reset|lost|closed|error)/i,
  /network error/i,
  /socket hang up/i,
  /other side closed/i,
  /ended without/i,
  /timed? ?out/i,
  /terminated/i,
];

/** Quota and billing exhaustion: waiting does not help. */
const NOT_RETRYABLE_PATTERNS: readonly RegExp[] = [/insufficient_quota/i, /exceeded your current quota/i, /billing/i];

/** Node/undici error codes of transient network failures. */
const RETRYABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

/**
 * The server-requested delay in ms from response headers: `retry-after-ms` first, then `Retry-After` (seconds, or an HTTP date measured against
 * `now`, epoch ms). Header names are matched case-insensitively. Returns undefined when absent or unparsable.
 * @example
 * parseRetryAfterMs({ "retry-after": "2" }); // 2000
 */
export function parseRetryAfterMs(headers: Record<string, string> | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const lower = new Map(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]));
  const milliseconds = lower.get("retry-after-ms");
  if (milliseconds !== undefined && milliseconds.trim() !== "") {
    const parsed = Number(milliseconds);
    if (Number.isFinite(parsed) && parsed >= 0) return Math.ceil(parsed);
  }
  const retryAfter = lower.get("retry-after")?.trim();
  if (!retryAfter) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(retryAfter)) return Math.ceil(Number(retryAfter) * 1000);
  const date = Date.parse(retryAfter);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

interface ErrorShape {
  message?: unknown;
  name?: unknown;
  code?: unknown;
  statusCode?: unknown;
  status?: unknown;
  responseHeaders?: unknown;
  responseBody?: unknown;
  isRetryable?: unknown;
  cause?: unknown;
  error?: unknown;
  type?: unknown;
}

function asShape(value: unknown): ErrorShape | undefined {
  return typeof value === "object" && value !== null ? (value as ErrorShape) : undefined;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** Walk `cause` (and nested `error`) links, at most 8 deep. */
function chainOf(error: unknown): ErrorShape[] {
  const chain: ErrorShape[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 8; depth++) {
    const shape = asShape(current);
    if (!shape || chain.includes(shape)) break;
    chain.push(shape);
    current = shape.cause ?? (asShape(shape.error) ? shape.error : undefined);
  }
  return chain;
}

function messageOf(error: unknown, chain: ErrorShape[]): string {
  if (typeof error === "string") return error;
  for (const link of chain) {
    const message = stringOf(link.message);
    if (message) return message;
    const nested = asShape(link.error);
    if (nested && stringOf(nested.message)) return stringOf(nested.message)!;
    if (typeof link.error === "string") return link.error;
  }
  if (error === undefined || error === null) return "Unknown model error";
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

function statusOf(chain: ErrorShape[]): number | undefined {
  for (const link of chain) {
    for (const candidate of [link.statusCode, link.status]) {
      // A 2xx/3xx status on an error means the failure came after the headers (a broken stream): not an HTTP error.
      if (typeof candidate === "number" && Number.isInteger(candidate) && candidate >= 400 && candidate <= 599) return candidate;
    }
  }
  return undefined;
}

function headersOf(chain: ErrorShape[]): Record<string, string> | undefined {
  for (const link of chain) {
    const headers = link.responseHeaders;
    if (headers && typeof headers === "object") return headers as Record<string, string>;
  }
  return undefined;
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

function hasName(chain: ErrorShape[], name: string): boolean {
  return chain.some((link) => link.name === name);
}

/**
 * True for an AbortError / DOMException "AbortError" anywhere in the cause chain.
 * @example
 * if (isAbortError(error)) return "aborted";
 */
export function isAbortError(error: unknown): boolean {
  return hasName(chainOf(error), "AbortError") || hasName(chainOf(error), "ResponseAborted");
}

/**
 * Classify anything thrown by, or streamed as an error from, a model call. `options.aborted` says the caller's signal fired (then the result is
 * `aborted`, not retryable, whatever the error says). Never throws.
 *
 * The message is `"<status> <provider message>"` when a status is known (pi's OpenAI SDK wording), else the provider message; the raw response body
 * is used only for the overflow and retry checks, never copied wholesale.
 * @example
 * classifyModelError(new APICallError({ message: "Rate limit", statusCode: 429, responseHeaders: { "retry-after": "3" }, url, requestBodyValues: {} }));
 * // { message: "429 Rate limit", retryable: true, status: 429, retryAfterMs: 3000, aborted: false }
 */
export function classifyModelError(error: unknown, options: { aborted?: boolean } = {}): ClassifiedModelError {
  const chain = chainOf(error);
  const status = statusOf(chain);
  let rawMessage = messageOf(error, chain).trim() || "Unknown model error";
  if (status === undefined) {
    // A broken stream or socket: name the underlying causes ("…: terminated: other side closed").
    for (const link of chain.slice(1)) {
      const cause = stringOf(link.message);
      if (cause && !rawMessage.includes(cause)) rawMessage += `: ${cause}`;
    }
  }
  const message = status !== undefined && !rawMessage.startsWith(String(status)) ? `${status} ${rawMessage}` : rawMessage;
  const retryAfterMs = parseRetryAfterMs(headersOf(chain));

  if (options.aborted) {
    return { message: "Request was aborted", aborted: true, retryable: false, ...(status !== undefined ? { status } : {}) };
  }

  const bodies = chain.flatMap((link) => (typeof link.responseBody === "string" ? [link.responseBody] : []));
  const codes = chain.flatMap((link) => {
    const nested = asShape(link.error);
    return [link.code, link.type, nested?.code, nested?.type].filter((code): code is string => typeof code === "string");
  });
  const texts = [message, ...bodies, ...codes];

  const contextOverflow =
    texts.some((text) => isContextOverflowMessage(text)) ||
    status === 413 ||
    (status === 400 && bodies.every((body) => body.trim() === "") && bodies.length > 0);

  const quota = texts.some((text) => NOT_RETRYABLE_PATTERNS.some((pattern) => pattern.test(text)));
  const timeout = hasName(chain, "TimeoutError");
  const networkCode = chain.some((link) => typeof link.code === "string" && RETRYABLE_CODES.has(link.code));
  const sdkSaysRetryable = chain.some((link) => link.isRetryable === true);

  let retryable: boolean;
  if (contextOverflow || quota) retryable = false;
  else if (status !== undefined) retryable = isRetryableStatus(status) || (status >= 400 && /overloaded/i.test(message));
  else if (chain[0]?.isRetryable === false) retryable = false;
  else retryable = timeout || networkCode || sdkSaysRetryable || texts.some((text) => RETRYABLE_PATTERNS.some((pattern) => pattern.test(text)));

  return {
    message,
    aborted: false,
    retryable,
    ...(status !== undefined ? { status } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(contextOverflow ? { contextOverflow: true } : {}),
  };
}
