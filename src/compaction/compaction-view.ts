/**
 * `compactionView(session)`: the compactions on the leaf's path, oldest first, for UIs: the stored `tokensBefore`, a chars/4 estimate after, what
 * each summary replaced (`covers`), file lists and the summary call's usage. O(path length × compactions).
 */
import type { CompactionEntry, SessionEntry } from "../core/entries.ts";
import type { Usage } from "../core/messages.ts";
import type { SessionHandle, SessionView } from "../store/session-types.ts";
import { entryMessage, pathContextMessages } from "./entry-messages.ts";
import { estimateTokens } from "./tokens.ts";

/**
 * One compaction on the path. Token figures in tokens.
 * @example
 * const [first]: CompactionViewItem[] = compactionView(session);
 */
export interface CompactionViewItem {
  entryId: string;
  /** ISO 8601. */
  timestamp: string;
  tokensBefore: number;
  estimatedTokensAfter: number;
  firstKeptEntryId: string;
  /** Tokens of the summary text (estimate). */
  summaryTokens: number;
  covers: { entryCount: number; messageCount: number; fromEntryId?: string; toEntryId?: string };
  fromHook: boolean;
  usage?: Usage;
  readFiles: string[];
  modifiedFiles: string[];
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []);

/**
 * Lists the compactions on the session's current path (see the module contract).
 * @example
 * const [latest] = compactionView(session).slice(-1);
 */
export function compactionView(session: SessionHandle | SessionView): CompactionViewItem[] {
  const view: SessionView = "view" in session ? session.view : session;
  const path: SessionEntry[] = view.getBranch();
  const items: CompactionViewItem[] = [];
  let rangeStart = 0;
  for (let index = 0; index < path.length; index++) {
    if (path[index].type !== "compaction") continue;
    const compaction = path[index] as CompactionEntry;
    const keptIndex = path.findIndex((entry, at) => at < index && entry.id === compaction.firstKeptEntryId);
    const coverEnd = keptIndex >= 0 ? keptIndex : index;
    const covered = path.slice(rangeStart, coverEnd).filter((entry) => entry.type !== "compaction");
    const after = pathContextMessages(path.slice(0, index + 1));
    const details = (compaction.details ?? {}) as { readFiles?: unknown; modifiedFiles?: unknown };
    items.push({
      entryId: compaction.id,
      timestamp: compaction.timestamp,
      tokensBefore: compaction.tokensBefore,
      estimatedTokensAfter: after.reduce((sum, message) => sum + estimateTokens(message), 0),
      firstKeptEntryId: compaction.firstKeptEntryId,
      summaryTokens: Math.ceil(compaction.summary.length / 4),
      covers: {
        entryCount: covered.length,
        messageCount: covered.filter((entry) => entryMessage(entry) !== undefined).length,
        ...(covered.length ? { fromEntryId: covered[0].id, toEntryId: covered[covered.length - 1].id } : {}),
      },
      fromHook: compaction.fromHook === true,
      ...(compaction.usage ? { usage: compaction.usage } : {}),
      readFiles: strings(details.readFiles),
      modifiedFiles: strings(details.modifiedFiles),
    });
    rangeStart = keptIndex >= 0 ? keptIndex : index + 1;
  }
  return items;
}
