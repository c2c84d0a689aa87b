/**
 * Recognizing a context overflow: the provider said the prompt is too long, or
 * its usage shows it silently overflowed.
 *
 * Contract (source: pi 0.73.1 `isContextOverflow`, `docs/pi-parity.md`):
 * - an `error` stream event with `error.contextOverflow` (set by the model adapter)
 *   is an overflow;
 * - an assistant message with stopReason `error` whose `errorMessage` matches the
 *   adapter's overflow pattern list (and not a rate-limit pattern) is an overflow;
 * - silent overflow (needs the window, tokens): stopReason `stop` with
 *   input + cacheRead above the window, or stopReason `length` with 0 output and
 *   input + cacheRead at least 99 % of the window.
 *
 * @example
 * ```ts
 * if (isContextOverflow(lastAssistant, 128_000)) await runCompaction(session, { model, reason: "overflow" });
 * ```
 */
import { isContextOverflowMessage } from "../core/context-overflow.ts";
import type { AssistantMessage } from "../core/messages.ts";
import type { ModelErrorInfo } from "../core/model-stream.ts";

/**
 * True when the message (or the stream error info) reports a context overflow.
 *
 * @example
 * ```ts
 * isContextOverflow({ ...assistant, stopReason: "error", errorMessage: "prompt is too long: 210000 tokens > 200000 maximum" }); // true
 * ```
 */
export function isContextOverflow(message: AssistantMessage, contextWindow?: number, error?: ModelErrorInfo): boolean {
  if (error?.contextOverflow) return true;
  if (message.stopReason === "error") return isContextOverflowMessage(message.errorMessage ?? "");
  if (contextWindow === undefined) return false;
  const input = (message.usage.input ?? 0) + (message.usage.cacheRead ?? 0);
  if (message.stopReason === "stop") return input > contextWindow;
  if (message.stopReason === "length") return (message.usage.output ?? 0) === 0 && input >= 0.99 * contextWindow;
  return false;
}
