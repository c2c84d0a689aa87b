/**
 * The messages session entries contribute to a context, for compaction and
 * branch summarization (which work on root-to-leaf paths of entries).
 *
 * Contract (source: pi 0.73.1 `buildSessionContext` and `getMessageFromEntry`,
 * `docs/pi-parity.md`):
 * - `message` → its message; `custom_message` → a `custom` message;
 *   `branch_summary` → a `branchSummary` message; `compaction` → a
 *   `compactionSummary` message; every other entry → nothing;
 * - synthetic messages take the entry's ISO timestamp as epoch ms;
 * - {@link pathContextMessages} applies the latest compaction on the path: its
 *   summary first, then the path entries from its `firstKeptEntryId` up to it
 *   (none if that id is not before it), then everything after it.
 * Unlike the session projection it does not repair tool-call pairing; compaction
 * keeps pairing intact by construction (see `cut-point.ts`).
 *
 * @example
 * ```ts
 * const messages = pathContextMessages(session.view.getBranch());
 * ```
 */
import type { BranchSummaryEntry, CompactionEntry, MessageEntry, SessionEntry } from "../core/entries.ts";
import { entryToMessage } from "../store/context.ts";
import type { AgentMessage } from "../core/messages.ts";

/**
 * The stored message of a `message` entry, else undefined.
 *
 * @example
 * ```ts
 * const message = storedMessage(entry); // undefined unless entry.type === "message"
 * ```
 */
export function storedMessage(entry: SessionEntry): AgentMessage | undefined {
  return entry.type === "message" ? (entry as MessageEntry).message : undefined;
}

/**
 * The message an entry contributes to a context, or undefined. Compaction entries
 * give their summary message. Source: pi.
 *
 * @example
 * ```ts
 * entryMessage({ type: "branch_summary", id: "b", parentId: "a", timestamp, fromId: "a", summary: "…" })?.role; // "branchSummary"
 * ```
 */
export function entryMessage(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "branch_summary": {
      const summary = entry as BranchSummaryEntry;
      return { role: "branchSummary", summary: summary.summary, fromId: summary.fromId, timestamp: new Date(summary.timestamp).getTime() };
    }
    case "compaction": {
      const compaction = entry as CompactionEntry;
      return {
        role: "compactionSummary",
        summary: compaction.summary,
        tokensBefore: compaction.tokensBefore,
        timestamp: new Date(compaction.timestamp).getTime(),
      };
    }
    default:
      // message and custom_message: as the context projection does.
      return entryToMessage(entry);
  }
}

/**
 * Index of the last compaction entry in `path`, or -1.
 *
 * @example
 * ```ts
 * const index = lastCompactionIndex(path); // -1 without a compaction
 * ```
 */
export function lastCompactionIndex(path: readonly SessionEntry[], before = path.length): number {
  for (let index = before - 1; index >= 0; index--) if (path[index].type === "compaction") return index;
  return -1;
}

/**
 * The context messages of a root-to-leaf path (pi's buildSessionContext messages,
 * before conversion for the model). Branch summaries with an empty summary are
 * left out, like pi.
 *
 * @example
 * ```ts
 * pathContextMessages(view.getBranch()).length;
 * ```
 */
export function pathContextMessages(path: readonly SessionEntry[]): AgentMessage[] {
  const messages: AgentMessage[] = [];
  const emit = (entry: SessionEntry) => {
    if (entry.type === "compaction") return;
    if (entry.type === "branch_summary" && !(entry as BranchSummaryEntry).summary) return;
    const message = entryMessage(entry);
    if (message) messages.push(message);
  };
  const compactionIndex = lastCompactionIndex(path);
  if (compactionIndex < 0) {
    for (const entry of path) emit(entry);
    return messages;
  }
  const compaction = path[compactionIndex] as CompactionEntry;
  messages.push(entryMessage(compaction)!);
  let keeping = false;
  for (let index = 0; index < compactionIndex; index++) {
    if (path[index].id === compaction.firstKeptEntryId) keeping = true;
    if (keeping) emit(path[index]);
  }
  for (let index = compactionIndex + 1; index < path.length; index++) emit(path[index]);
  return messages;
}
