/**
 * Token accounting for compaction, in tokens (pi's rules): {@link estimateTokens} is `ceil(chars / 4)` (images in results count 1200);
 * {@link calculateContextTokens} is `totalTokens`, else the sum of parts; {@link estimateContextTokens} takes the last normally ended assistant's
 * usage plus estimates after it. A `null` (unknown) count adds 0, and all-unknown usage falls back to estimates.
 */
import type { AgentMessage, AssistantMessage, Usage } from "../core/messages.ts";

/**
 * Characters counted for one image in a tool result or custom message. Source: pi.
 * @example
 * estimateTokens(toolResultWithOneImage); // IMAGE_CHARS / 4 = 1200
 */
export const IMAGE_CHARS = 4800;

function blocksChars(content: string | readonly { type: string; text?: string }[], countImages: boolean): number {
  if (typeof content === "string") return content.length;
  let chars = 0;
  for (const block of content) {
    if (block.type === "text" && block.text) chars += block.text.length;
    else if (countImages && block.type === "image") chars += IMAGE_CHARS;
  }
  return chars;
}

/**
 * Estimated size of one message in tokens (`ceil(chars / 4)`, an overestimate for English text). Source: pi.
 * @example
 * estimateTokens({ role: "user", content: "12345678", timestamp: 0 }); // 2
 */
export function estimateTokens(message: AgentMessage): number {
  let chars = 0;
  switch (message.role) {
    case "user":
      chars = blocksChars(message.content, false);
      break;
    case "assistant":
      for (const block of message.content) {
        if (block.type === "text") chars += block.text.length;
        else if (block.type === "thinking") chars += block.thinking.length;
        else if (block.type === "toolCall") chars += block.name.length + JSON.stringify(block.arguments).length;
      }
      break;
    case "custom":
    case "toolResult":
      chars = blocksChars(message.content, true);
      break;
    case "bashExecution":
      chars = message.command.length + message.output.length;
      break;
    case "branchSummary":
    case "compactionSummary":
      chars = message.summary.length;
      break;
    default:
      return 0;
  }
  return Math.ceil(chars / 4);
}

/**
 * Context size in tokens reported by one model call's usage: `totalTokens` when it is a non-zero number, else input + output + cacheRead + cacheWrite
 * (unknown counts add 0). Source: pi (null handling ours).
 * @example
 * calculateContextTokens({ input: 900, output: 100, cacheRead: 0, cacheWrite: 0, totalTokens: null }); // 1000
 */
export function calculateContextTokens(usage: Usage): number {
  if (usage.totalTokens) return usage.totalTokens;
  return (usage.input ?? 0) + (usage.output ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0);
}

/**
 * True when at least one usage count is known (non-null). Ours.
 * @example
 * hasKnownUsage({ input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null }); // false
 */
export function hasKnownUsage(usage: Usage | undefined): usage is Usage {
  if (!usage) return false;
  return [usage.totalTokens, usage.input, usage.output, usage.cacheRead, usage.cacheWrite].some(
    (count) => typeof count === "number",
  );
}

/**
 * The usage of an assistant message that ended normally and reported usage, else undefined. Source: pi.
 * @example
 * usableAssistantUsage(erroredAssistant); // undefined: error/aborted usage is ignored
 */
export function usableAssistantUsage(message: AgentMessage): Usage | undefined {
  if (message.role !== "assistant") return undefined;
  const assistant = message as AssistantMessage;
  if (assistant.stopReason === "error" || assistant.stopReason === "aborted") return undefined;
  return hasKnownUsage(assistant.usage) ? assistant.usage : undefined;
}

/**
 * The result of {@link estimateContextTokens}, in tokens.
 * @example
 * const { tokens, lastUsageIndex }: ContextTokenEstimate = estimateContextTokens(messages);
 */
export interface ContextTokenEstimate {
  /** usageTokens + trailingTokens. */
  tokens: number;
  /** Context tokens reported by the last usable assistant usage (0 if none). */
  usageTokens: number;
  /** Estimated tokens of the messages after that assistant (all messages if none). */
  trailingTokens: number;
  /** Index of that assistant in `messages`, or null. */
  lastUsageIndex: number | null;
}

/**
 * Size of a context in tokens: the last usable assistant usage plus chars/4 estimates of what came after it. Source: pi.
 * @example
 * const { tokens, lastUsageIndex } = estimateContextTokens(messages);
 */
export function estimateContextTokens(messages: readonly AgentMessage[]): ContextTokenEstimate {
  return estimateSince(messages, undefined);
}

/** The estimate from the last usable usage reported after `compactedAt` (ms; any usage when undefined), else chars/4 of every message. */
function estimateSince(messages: readonly AgentMessage[], compactedAt: number | undefined): ContextTokenEstimate {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    const usage = usableAssistantUsage(message);
    if (!usage) continue;
    if (compactedAt !== undefined && (message.timestamp ?? -Infinity) <= compactedAt) break;
    const usageTokens = calculateContextTokens(usage);
    let trailingTokens = 0;
    for (let after = index + 1; after < messages.length; after++) trailingTokens += estimateTokens(messages[after]);
    return { tokens: usageTokens + trailingTokens, usageTokens, trailingTokens, lastUsageIndex: index };
  }
  let estimated = 0;
  for (const message of messages) estimated += estimateTokens(message);
  return { tokens: estimated, usageTokens: 0, trailingTokens: estimated, lastUsageIndex: null };
}

/**
 * Like {@link estimateContextTokens}, but ignores usage reported before the latest compaction summary in `messages` (by timestamp): that usage
 * measured the context before it was compacted. Source: pi's stale-usage rule (`_checkCompaction`), as a pure function (ours).
 * @example
 * const { tokens } = estimateFreshContextTokens(session.view.buildContext().messages);
 */
export function estimateFreshContextTokens(messages: readonly AgentMessage[]): ContextTokenEstimate {
  let compactedAt = -Infinity;
  for (const message of messages) if (message.role === "compactionSummary") compactedAt = Math.max(compactedAt, message.timestamp);
  return estimateSince(messages, compactedAt === -Infinity ? undefined : compactedAt);
}

/**
 * True when compaction should run: `enabled` and `contextTokens > contextWindow −
 * reserveTokens` (e.g. window 200,000 and reserve 16,384 → above 183,616). Source: pi.
 * @example
 * shouldCompact(183_617, 200_000, { enabled: true, reserveTokens: 16_384 }); // true
 */
export function shouldCompact(
  contextTokens: number,
  contextWindow: number,
  settings: { enabled: boolean; reserveTokens: number },
): boolean {
  return settings.enabled && contextTokens > contextWindow - settings.reserveTokens;
}
