/**
 * The messages session entries contribute to a context (pi's `buildSessionContext`): messages, custom messages, branch and compaction summaries;
 * {@link pathContextMessages} applies the latest compaction on the path. Tool-call pairing is not repaired here: compaction keeps it by construction.
 */
import type { BranchSummaryEntry, CompactionEntry, MessageEntry, SessionEntry } from "../core/entries.ts";
import { entryToMessage } from "../store/session/context.ts";
import type { AgentMessage } from "../core/messages.ts";

/** The stored message of a `message` entry, else undefined. */
export function storedMessage(entry: SessionEntry): AgentMessage | undefined {
  return entry.type === "message" ? (entry as MessageEntry).message : undefined;
}

/** The message an entry contributes to a context, or undefined. Compaction entries give their summary message. Source: pi. */
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

/** Index of the last compaction entry in `path`, or -1. */
export function lastCompactionIndex(path: readonly SessionEntry[], before = path.length): number {
  for (let index = before - 1; index >= 0; index--) if (path[index].type === "compaction") return index;
  return -1;
}

/**
 * The context messages of a root-to-leaf path (pi's buildSessionContext messages, before conversion for the model). Branch summaries with an empty
 * summary are left out, like pi.
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
