/**
 * Checks of a session path before a compaction is appended: a hook's first kept entry must be a valid cut (never a tool result, never separating a
 * kept result from its call), and nothing is compacted while the last assistant message has calls without results.
 */
import type { SessionEntry } from "../core/entries.ts";
import { storedMessage } from "./entry-messages.ts";

/** Checks a hook-supplied firstKeptEntryId against the path; returns a problem or undefined. */
export function checkFirstKept(path: readonly SessionEntry[], firstKeptEntryId: string): string | undefined {
  const index = path.findIndex((entry) => entry.id === firstKeptEntryId);
  if (index < 0) return `firstKeptEntryId "${firstKeptEntryId}" is not on the session's current path`;
  if (storedMessage(path[index])?.role === "toolResult") return `firstKeptEntryId "${firstKeptEntryId}" is a tool result; a compaction must not start at one`;
  const callsBefore = new Set<string>();
  for (let at = 0; at < index; at++) {
    const stored = storedMessage(path[at]);
    if (stored?.role === "assistant") for (const block of stored.content) if (block.type === "toolCall") callsBefore.add(block.id);
  }
  for (let at = index; at < path.length; at++) {
    const stored = storedMessage(path[at]);
    if (stored?.role === "toolResult" && callsBefore.has(stored.toolCallId)) {
      return `firstKeptEntryId "${firstKeptEntryId}" separates tool result ${path[at].id} from its call ${stored.toolCallId}`;
    }
  }
  return undefined;
}

/** Tool calls of the path's last assistant message that have no result after it yet, i.e. a tool batch in flight. Empty when none. */
export function pendingToolCalls(path: readonly SessionEntry[]): string[] {
  for (let index = path.length - 1; index >= 0; index--) {
    const stored = storedMessage(path[index]);
    if (stored?.role !== "assistant") continue;
    const open = new Set(stored.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : [])));
    for (let after = index + 1; after < path.length; after++) {
      const later = storedMessage(path[after]);
      if (later?.role === "toolResult") open.delete(later.toolCallId);
    }
    return [...open];
  }
  return [];
}
