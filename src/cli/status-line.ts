/**
 * The chat's status line, printed after each run on a terminal (pi's footer, as one line):
 * model, thinking level, tokens in and out, cost, context use, session short id, sandbox.
 *
 * Contract (ours):
 * - tokens are the session's totals over every branch (`getStats()`): `↑` input (cache reads and
 *   writes included), `↓` output; unknown figures are left out, never shown as 0;
 * - context is the last assistant message on the current branch: its input, cache and output
 *   tokens over the model's context window, as a whole percent; left out when either is unknown;
 * - the sandbox is the first word of its description (`none`, `bubblewrap`).
 *
 * @example
 * ```ts
 * statusLine({ model: "openai:gpt-4o", thinking: "off", stats, contextTokens: 3_000, contextWindow: 128_000, shortId: "7a4a03a1", sandbox: "none (…)" });
 * // "openai:gpt-4o · thinking off · ↑12,000 ↓800 · $0.0123 · context 2% of 128k · 7a4a03a1 · sandbox none"
 * ```
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
