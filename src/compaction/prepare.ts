/**
 * Compaction preparation (pi's `prepareCompaction`): from a root-to-leaf path, the range after the previous compaction, the cut from
 * {@link findCutPoint}, a split turn's prefix, file operations and `tokensBefore`. Refusals are results, not throws: `"empty"`,
 * `"already_compacted"`, `"nothing_to_compact"`. Pure; O(n) in the path length.
 */
import type { CompactionEntry, SessionEntry } from "../core/entries.ts";
import type { AgentMessage } from "../core/messages.ts";
import { type CutPointResult, findCutPoint } from "./cut-point.ts";
import { entryMessage, lastCompactionIndex, pathContextMessages } from "./entry-messages.ts";
import { addFileOpsFromDetails, createFileOps, extractFileOpsFromMessage, type FileOps, type FileToolNames } from "./file-ops.ts";
import { estimateContextTokens, estimateTokens } from "./tokens.ts";

/**
 * Everything the summarizer needs. Token figures are in tokens.
 * @example
 * const result = prepareCompaction(path, settings); if (result.ok) console.log(result.preparation.keptEntryIds.length);
 */
export interface CompactionPreparation {
  /** The leaf the preparation was made from; the compaction entry is appended as its child. */
  preparedLeafId: string;
  firstKeptEntryId: string;
  /** Index of the first kept entry in the path. */
  firstKeptEntryIndex: number;
  /** Messages replaced by the summary (older history). */
  messagesToSummarize: AgentMessage[];
  /** Early part of a split turn, summarized separately. */
  turnPrefixMessages: AgentMessage[];
  isSplitTurn: boolean;
  tokensBefore: number;
  previousSummary?: string;
  previousCompactionId?: string;
  fileOps: FileOps;
  /** Ids of the path entries the summary covers (from the range start up to the cut). */
  summarizedEntryIds: string[];
  /** Ids of the path entries kept verbatim, first kept to leaf. */
  keptEntryIds: string[];
  cut: CutPointResult;
  settings: { keepRecentTokens: number; reserveTokens: number };
}

/**
 * Why a compaction cannot be prepared.
 * @example
 * if (!result.ok && result.reason === "already_compacted") return;
 */
export type CompactionRefusal = "empty" | "already_compacted" | "nothing_to_compact";

/**
 * The outcome of {@link prepareCompaction}.
 * @example
 * const result: PrepareCompactionResult = prepareCompaction(path, { keepRecentTokens: 20_000, reserveTokens: 16_384 });
 */
export type PrepareCompactionResult =
  | { ok: true; preparation: CompactionPreparation }
  | { ok: false; reason: CompactionRefusal; message: string };

/**
 * Prepares a compaction of `path` (root first). See the module contract.
 * @example
 * const result = prepareCompaction(path, { keepRecentTokens: 20_000, reserveTokens: 16_384 });
 * if (result.ok) console.log(result.preparation.firstKeptEntryId);
 */
export function prepareCompaction(
  path: readonly SessionEntry[],
  settings: { keepRecentTokens: number; reserveTokens: number },
  options: { fileToolNames?: FileToolNames } = {},
): PrepareCompactionResult {
  if (path.length === 0) return { ok: false, reason: "empty", message: "Nothing to compact: the session has no entries." };
  const leaf = path[path.length - 1];
  if (leaf.type === "compaction") {
    return { ok: false, reason: "already_compacted", message: "Already compacted: the latest entry is a compaction." };
  }

  const previousIndex = lastCompactionIndex(path);
  const previous = previousIndex >= 0 ? (path[previousIndex] as CompactionEntry) : undefined;
  let rangeStart = 0;
  if (previous) {
    const keptIndex = path.findIndex((entry) => entry.id === previous.firstKeptEntryId);
    rangeStart = keptIndex >= 0 && keptIndex < previousIndex ? keptIndex : previousIndex + 1;
  }

  const tokensBefore = estimateContextTokens(pathContextMessages(path)).tokens;
  const cut = findCutPoint(path, rangeStart, path.length, settings.keepRecentTokens);
  const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptEntryIndex;

  const messagesToSummarize: AgentMessage[] = [];
  const summarizedEntryIds: string[] = [];
  const collect = (from: number, to: number, into: AgentMessage[]) => {
    for (let index = from; index < to; index++) {
      const entry = path[index];
      if (entry.type === "compaction") continue;
      const message = entryMessage(entry);
      if (message) into.push(message);
    }
  };
  collect(rangeStart, historyEnd, messagesToSummarize);
  const turnPrefixMessages: AgentMessage[] = [];
  if (cut.isSplitTurn) collect(cut.turnStartIndex, cut.firstKeptEntryIndex, turnPrefixMessages);
  for (let index = rangeStart; index < cut.firstKeptEntryIndex; index++) summarizedEntryIds.push(path[index].id);

  if (messagesToSummarize.length === 0 && turnPrefixMessages.length === 0) {
    let kept = 0;
    for (let index = rangeStart; index < path.length; index++) {
      const message = path[index].type === "compaction" ? undefined : entryMessage(path[index]);
      if (message) kept += estimateTokens(message);
    }
    return {
      ok: false,
      reason: "nothing_to_compact",
      message:
        `Nothing to compact: the ${path.length - rangeStart} entries since the last compaction (about ${kept} tokens) ` +
        `fit in keepRecentTokens (${settings.keepRecentTokens}) or cannot be cut without separating a tool call from its result.`,
    };
  }

  const fileOps = createFileOps();
  if (previous) addFileOpsFromDetails(previous.details, previous.fromHook, fileOps);
  for (const message of messagesToSummarize) extractFileOpsFromMessage(message, fileOps, options.fileToolNames);
  for (const message of turnPrefixMessages) extractFileOpsFromMessage(message, fileOps, options.fileToolNames);

  return {
    ok: true,
    preparation: {
      preparedLeafId: leaf.id,
      firstKeptEntryId: path[cut.firstKeptEntryIndex].id,
      firstKeptEntryIndex: cut.firstKeptEntryIndex,
      messagesToSummarize,
      turnPrefixMessages,
      isSplitTurn: cut.isSplitTurn,
      tokensBefore,
      previousSummary: previous?.summary,
      previousCompactionId: previous?.id,
      fileOps,
      summarizedEntryIds,
      keptEntryIds: path.slice(cut.firstKeptEntryIndex).map((entry) => entry.id),
      cut,
      settings: { keepRecentTokens: settings.keepRecentTokens, reserveTokens: settings.reserveTokens },
    },
  };
}
