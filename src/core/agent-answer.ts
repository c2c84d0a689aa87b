/**
 * What a typed agent's session records of its answer, readable without the agent: the final-answer tool's name, the repair messages' custom type
 * (each carrying its ordinal in `details.repair`), and the invocation's totals folded from its messages (repairs, tokens with `null` as 0, `cost`
 * only when some message had one). Used by crash recovery and by `src/agents/` for a resume.
 */
import { isKnownEntry, type SessionEntry } from "./entries.ts";
import type { AgentMessage } from "./messages.ts";

/**
 * The name of the final-answer tool (tool mode).
 * @example
 * const answered = message.content.some((block) => block.type === "toolCall" && block.name === FINAL_ANSWER_TOOL);
 */
export const FINAL_ANSWER_TOOL = "final_answer";

/**
 * The custom type of repair messages (native mode).
 * @example
 * const repairs = messages.filter((message) => message.role === "custom" && message.customType === REPAIR_MESSAGE_TYPE);
 */
export const REPAIR_MESSAGE_TYPE = "arbor.agent.repair";

/** Token totals of an invocation's model calls (tokens; `cost` in $ when prices are known). */
export interface AnswerUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost?: number;
}

/** Repairs sent and tokens used by an invocation, folded from its messages. Plain JSON. */
export interface AnswerTotals {
  /** The highest repair ordinal seen (repairs sent). */
  repairs: number;
  usage: AnswerUsage;
}

/** Totals of no message. */
export function emptyAnswerTotals(): AnswerTotals {
  return { repairs: 0, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 } };
}

/** The repair ordinal `message` carries, when it is a repair (see the module contract). */
export function repairOf(message: AgentMessage): number | undefined {
  const isRepair =
    (message.role === "custom" && message.customType === REPAIR_MESSAGE_TYPE) || (message.role === "toolResult" && message.toolName === FINAL_ANSWER_TOOL && message.isError);
  return isRepair ? ordinalOf(message.details) : undefined;
}

function ordinalOf(details: unknown): number | undefined {
  if (!details || typeof details !== "object" || !("repair" in details)) return undefined;
  const { repair } = details;
  return typeof repair === "number" && Number.isInteger(repair) && repair > 0 ? repair : undefined;
}

/** `totals` with `message` added (pure: returns `totals` itself when the message adds nothing). */
export function addToAnswerTotals(totals: AnswerTotals, message: AgentMessage): AnswerTotals {
  if (message.role === "assistant") {
    const used = message.usage;
    const sum = totals.usage;
    const usage: AnswerUsage = {
      input: sum.input + (used.input ?? 0),
      output: sum.output + (used.output ?? 0),
      cacheRead: sum.cacheRead + (used.cacheRead ?? 0),
      cacheWrite: sum.cacheWrite + (used.cacheWrite ?? 0),
      totalTokens: sum.totalTokens + (used.totalTokens ?? 0),
    };
    const cost = used.cost ? (sum.cost ?? 0) + used.cost.total : sum.cost;
    return { ...totals, usage: cost === undefined ? usage : { ...usage, cost } };
  }
  const repair = repairOf(message);
  return repair !== undefined && repair > totals.repairs ? { ...totals, repairs: repair } : totals;
}

/** `totals` with a logged entry added (a message, or a native-mode repair); other entries add nothing. */
export function addEntryToAnswerTotals(totals: AnswerTotals, entry: SessionEntry): AnswerTotals {
  if (!isKnownEntry(entry)) return totals;
  if (entry.type === "message") return addToAnswerTotals(totals, entry.message);
  if (entry.type !== "custom_message" || entry.customType !== REPAIR_MESSAGE_TYPE) return totals;
  const repair = ordinalOf(entry.details);
  return repair !== undefined && repair > totals.repairs ? { ...totals, repairs: repair } : totals;
}
