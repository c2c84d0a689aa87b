/**
 * The chat's status line after each run (pi's footer as one line): model, thinking level, tokens in/out over every branch, cost, context use of the
 * last assistant as a percent of the window, short id, sandbox. Unknown figures are left out, never shown as 0.
 */
import type { AgentMessage } from "../core/messages.ts";
import type { SessionStats } from "../store/session-types.ts";

/** What {@link statusLine} shows. */
export interface StatusInput {
  model: string;
  thinking: string;
  stats: SessionStats;
  contextTokens?: number;
  contextWindow?: number;
  shortId: string;
  sandbox: string;
}

const count = (value: number) => value.toLocaleString("en-US");
const windowText = (tokens: number) => (tokens >= 1000 ? `${Math.round(tokens / 1000)}k` : String(tokens));

/** The tokens the last assistant message of `messages` reports (what the context held then), if any. */
export function contextTokensOf(messages: readonly AgentMessage[]): number | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message.role !== "assistant" || !message.usage) continue;
    const { input, output, cacheRead, cacheWrite } = message.usage as { input?: number | null; output?: number | null; cacheRead?: number | null; cacheWrite?: number | null };
    const parts = [input, output, cacheRead, cacheWrite].filter((value): value is number => typeof value === "number" && Number.isFinite(value));
    if (parts.length > 0) return parts.reduce((sum, value) => sum + value, 0);
  }
  return undefined;
}

/** One line (see the module contract). */
export function statusLine(input: StatusInput): string {
  const { tokens, cost } = input.stats;
  const inputTokens = [tokens.input, tokens.cacheRead, tokens.cacheWrite].filter((value): value is number => value !== null);
  const spend = [
    inputTokens.length > 0 ? `↑${count(inputTokens.reduce((sum, value) => sum + value, 0))}` : "",
    tokens.output !== null ? `↓${count(tokens.output)}` : "",
  ].filter(Boolean).join(" ");
  const context =
    input.contextTokens !== undefined && input.contextWindow ? `context ${Math.round((100 * input.contextTokens) / input.contextWindow)}% of ${windowText(input.contextWindow)}` : "";
  return [input.model, `thinking ${input.thinking}`, spend, cost !== null ? `$${cost.toFixed(4)}` : "", context, input.shortId, `sandbox ${input.sandbox.split(/\s/)[0]}`].filter(Boolean).join(" · ");
}
