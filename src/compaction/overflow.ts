/**
 * Recognizing a context overflow (pi's `isContextOverflow`): an error event with `contextOverflow`, an error message matching the overflow patterns
 * (not a rate limit), or a silent overflow shown by usage (input + cacheRead above the window, or at 99 % with a `length` stop and no output).
 */
import { isContextOverflowMessage } from "../core/context-overflow.ts";
import type { AssistantMessage } from "../core/messages.ts";
import type { ModelErrorInfo } from "../core/model-stream.ts";

/**
 * True when the message (or the stream error info) reports a context overflow.
 * @example
 * isContextOverflow({ ...assistant, stopReason: "error", errorMessage: "prompt is too long: 210000 tokens > 200000 maximum" }); // true
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
