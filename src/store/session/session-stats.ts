/**
 * Session statistics, folded one entry at a time (ours; pi's `getSessionStats` turns a missing usage into NaN, we do not). They count EVERY
 * `message` entry on all branches, plus pi 1.x spend outside the context (`usage` entries, tool results' and summaries' own usage); a token field
 * or the cost stays `null` until something reported it; `tokens.total` falls back to the sum of a usage's parts when it has no `totalTokens`;
 * `unknownUsageMessages` counts assistant messages with no usable count.
 */
import type { SessionEntry } from "../../core/entries.ts";
import type { AgentMessage } from "../../core/messages.ts";
import type { SessionStats } from "../session-types.ts";

/** Folds entries into {@link SessionStats}. */
export interface StatsAccumulator {
  add(entry: SessionEntry): void;
  snapshot(): SessionStats;
}

const TOKEN_FIELDS = [
  ["input", "input"],
  ["output", "output"],
  ["cacheRead", "cacheRead"],
  ["cacheWrite", "cacheWrite"],
  ["total", "totalTokens"],
] as const;

function finite(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Creates a statistics accumulator, empty or continuing from `initial` (a snapshot), see the module contract. */
export function createStatsAccumulator(initial?: SessionStats): StatsAccumulator {
  const stats: SessionStats = initial
    ? { ...initial, messages: { ...initial.messages }, tokens: { ...initial.tokens } }
    : {
        messages: { user: 0, assistant: 0, toolResult: 0, custom: 0, other: 0, total: 0 },
        toolCalls: 0,
        tokens: { input: null, output: null, cacheRead: null, cacheWrite: null, total: null },
        cost: null,
        unknownUsageMessages: 0,
        usageEntries: 0,
      };
  stats.usageEntries ??= 0;
  /** Adds one usage report; true if it had a finite count. */
  const addUsage = (usage: Partial<Record<string, unknown>> | undefined): boolean => {
    let reported = false;
    for (const [field, source] of TOKEN_FIELDS) {
      const value = usage?.[source];
      if (finite(value)) {
        stats.tokens[field] = (stats.tokens[field] ?? 0) + value;
        reported = true;
      }
    }
    // No `totalTokens` field at all (pi v1 sessions; an explicit null stays unknown): the total is the sum of the reported parts (pi's definition).
    if (reported && usage?.totalTokens === undefined) {
      const parts = TOKEN_FIELDS.filter(([field]) => field !== "total").map(([, source]) => usage?.[source]).filter(finite);
      stats.tokens.total = (stats.tokens.total ?? 0) + parts.reduce((sum, value) => sum + value, 0);
    }
    const cost = (usage?.cost as { total?: unknown } | undefined)?.total;
    if (finite(cost)) stats.cost = (stats.cost ?? 0) + cost;
    return reported;
  };
  return {
    add(entry) {
      if (entry.type === "usage") {
        stats.usageEntries += 1;
        addUsage((entry as { usage?: Partial<Record<string, unknown>> }).usage);
        return;
      }
      if (entry.type === "compaction" || entry.type === "branch_summary") {
        // The summary call's spend (pi 1.6 counts it in the session totals too).
        const usage = (entry as { usage?: Partial<Record<string, unknown>> }).usage;
        if (usage) addUsage(usage);
        return;
      }
      if (entry.type !== "message") return;
      const message = (entry as { message: AgentMessage }).message;
      stats.messages.total += 1;
      switch (message.role) {
        case "user":
        case "assistant":
        case "toolResult":
        case "custom":
          stats.messages[message.role] += 1;
          break;
        default:
          stats.messages.other += 1;
      }
      if (message.role === "toolResult") {
        addUsage((message as { usage?: Partial<Record<string, unknown>> }).usage);
        return;
      }
      if (message.role !== "assistant") return;
      if (Array.isArray(message.content)) {
        for (const block of message.content) if (block?.type === "toolCall") stats.toolCalls += 1;
      }
      if (!addUsage(message.usage as unknown as Partial<Record<string, unknown>> | undefined)) stats.unknownUsageMessages += 1;
    },
    snapshot() {
      return { ...stats, messages: { ...stats.messages }, tokens: { ...stats.tokens } };
    },
  };
}
