/**
 * Where to cut a path for compaction (pi's `findCutPoint`): valid cuts are user, assistant, custom and summary entries, never a tool result. Walking
 * back to `keepRecentTokens` picks the first valid cut at or after it, else the last before it; a kept result whose call would be summarized moves
 * the cut back to that call; the cut extends over preceding non-message entries. O(n); `endIndex` exclusive.
 */
import type { MessageEntry, SessionEntry } from "../core/entries.ts";
import { storedMessage } from "./entry-messages.ts";
import { estimateTokens } from "./tokens.ts";

/**
 * Where to cut. Source: pi, plus `adjustment` (ours).
 * @example
 * const { firstKeptEntryIndex, isSplitTurn, adjustments }: CutPointResult = findCutPoint(path, 0, path.length, 20_000);
 */
export interface CutPointResult {
  /** Index of the first entry kept verbatim. */
  firstKeptEntryIndex: number;
  /** Index of the turn start when the cut splits a turn, else -1. */
  turnStartIndex: number;
  isSplitTurn: boolean;
  /**
   * Ours, when we differ from pi: `"budget-in-tool-results"` (the cut moved to the last valid point before the budget crossing) and/or `"pairing"`
   * (moved back to keep a tool result with its call).
   */
  adjustments: ("budget-in-tool-results" | "pairing")[];
}

const CUTTABLE_ROLES = new Set(["user", "assistant", "custom", "bashExecution", "branchSummary", "compactionSummary"]);

/**
 * True if the path may be cut at this entry (never at a tool result). Source: pi.
 * @example
 * path.filter(isValidCutPoint); // never a tool result
 */
export function isValidCutPoint(entry: SessionEntry): boolean {
  if (entry.type === "branch_summary" || entry.type === "custom_message") return true;
  const message = storedMessage(entry);
  return message !== undefined && CUTTABLE_ROLES.has(message.role);
}

/**
 * Indices of valid cut points in [startIndex, endIndex), ascending. Source: pi.
 * @example
 * const points = findValidCutPoints(path, 0, path.length); // ascending indices
 */
export function findValidCutPoints(entries: readonly SessionEntry[], startIndex: number, endIndex: number): number[] {
  const points: number[] = [];
  for (let index = startIndex; index < endIndex; index++) if (isValidCutPoint(entries[index])) points.push(index);
  return points;
}

/**
 * Index of the entry that starts the turn containing `entryIndex` (a user or bashExecution message, a branch_summary or a custom_message), searching
 * back to `startIndex`; -1 if none. Source: pi.
 * @example
 * const start = findTurnStartIndex(path, cutIndex, 0); // -1 when no turn start precedes
 */
export function findTurnStartIndex(entries: readonly SessionEntry[], entryIndex: number, startIndex: number): number {
  for (let index = entryIndex; index >= startIndex; index--) {
    const entry = entries[index];
    if (entry.type === "branch_summary" || entry.type === "custom_message") return index;
    const role = storedMessage(entry)?.role;
    if (role === "user" || role === "bashExecution") return index;
  }
  return -1;
}

/** Moves `cut` back until no kept tool result answers a call made before the cut. O(kept entries) when nothing needs moving (the common case). */
function guardPairing(entries: readonly SessionEntry[], startIndex: number, endIndex: number, cut: number): number {
  let current = cut;
  let scannedFrom = endIndex;
  const needed = new Set<string>();
  for (;;) {
    // Results kept from `current` on whose calls are not kept.
    for (let index = scannedFrom - 1; index >= current; index--) {
      const message = storedMessage(entries[index]);
      if (message?.role === "toolResult") needed.add(message.toolCallId);
      else if (message?.role === "assistant") for (const block of message.content) if (block.type === "toolCall") needed.delete(block.id);
    }
    scannedFrom = current;
    if (needed.size === 0) return current;
    let earliest = current;
    for (let index = current - 1; index >= startIndex && needed.size > 0; index--) {
      const message = storedMessage(entries[index]);
      if (message?.role !== "assistant") continue;
      for (const block of message.content) {
        if (block.type === "toolCall" && needed.has(block.id)) {
          needed.delete(block.id);
          earliest = index;
        }
      }
    }
    // Calls not found in range are left to the context's pairing repair.
    needed.clear();
    if (earliest === current) return current;
    // The next pass re-checks only the newly kept span [earliest, current) for results answering calls before it.
    current = earliest;
  }
}

/**
 * Finds the cut that keeps about `keepRecentTokens` (tokens) of recent messages in `entries[startIndex, endIndex)`. See the module contract for the
 * rules and for where it differs from pi on purpose.
 * @example
 * const { firstKeptEntryIndex, isSplitTurn } = findCutPoint(path, start, path.length, 20_000);
 */
export function findCutPoint(
  entries: readonly SessionEntry[],
  startIndex: number,
  endIndex: number,
  keepRecentTokens: number,
): CutPointResult {
  const cutPoints = findValidCutPoints(entries, startIndex, endIndex);
  const adjustments: CutPointResult["adjustments"] = [];
  if (cutPoints.length === 0) return { firstKeptEntryIndex: startIndex, turnStartIndex: -1, isSplitTurn: false, adjustments };

  let cut = cutPoints[0];
  let accumulated = 0;
  for (let index = endIndex - 1; index >= startIndex; index--) {
    const entry = entries[index];
    if (entry.type !== "message") continue;
    accumulated += estimateTokens((entry as MessageEntry).message);
    if (accumulated < keepRecentTokens) continue;
    const atOrAfter = cutPoints.find((point) => point >= index);
    if (atOrAfter !== undefined) cut = atOrAfter;
    else {
      cut = cutPoints[cutPoints.length - 1];
      if (cut !== cutPoints[0]) adjustments.push("budget-in-tool-results");
    }
    break;
  }

  const guarded = guardPairing(entries, startIndex, endIndex, cut);
  if (guarded !== cut) {
    adjustments.push("pairing");
    cut = guarded;
  }

  while (cut > startIndex) {
    const previous = entries[cut - 1];
    if (previous.type === "compaction" || previous.type === "message") break;
    cut--;
  }

  const cutEntry = entries[cut];
  const isUser = storedMessage(cutEntry)?.role === "user";
  const turnStartIndex = isUser ? -1 : findTurnStartIndex(entries, cut, startIndex);
  return { firstKeptEntryIndex: cut, turnStartIndex, isSplitTurn: !isUser && turnStartIndex !== -1, adjustments };
}
