/**
 * The callbacks compaction and branch summarization call, so a harness can wire its hook runner in (pi's `session_before_compact`, `session_compact`,
 * `session_before_tree`, `session_tree`). `sessionBefore*` may cancel or supply the result (a supplied cut must be valid); a throw there fails the
 * operation with nothing appended; the observers' errors are ignored.
 */
import type { BranchSummaryEntry, CompactionEntry, SessionEntry } from "../core/entries.ts";
import type { CompactionPreparation } from "./prepare.ts";

/**
 * Why a compaction runs. Source: pi.
 * @example
 * const reason: CompactionReason = "threshold";
 */
export type CompactionReason = "manual" | "threshold" | "overflow";

/**
 * Result of `sessionBeforeCompact`.
 * @example
 * const result: BeforeCompactResult = { compaction: { summary: "## Goal\n…" } };
 */
export interface BeforeCompactResult {
  cancel?: boolean;
  compaction?: { summary: string; firstKeptEntryId?: string; tokensBefore?: number; details?: unknown };
}

/**
 * Compaction callbacks.
 * @example
 * const hooks: CompactionHookCallbacks = { sessionCompact: ({ compactionEntry }) => console.log(compactionEntry.id) };
 */
export interface CompactionHookCallbacks {
  sessionBeforeCompact?: (event: {
    preparation: CompactionPreparation;
    /** The root-to-leaf path the preparation was made from. */
    branchEntries: SessionEntry[];
    customInstructions?: string;
    reason: CompactionReason;
    signal: AbortSignal;
  }) => BeforeCompactResult | undefined | void | Promise<BeforeCompactResult | undefined | void>;
  sessionCompact?: (event: { compactionEntry: CompactionEntry; fromHook: boolean; reason: CompactionReason }) => void | Promise<void>;
}

/**
 * What `sessionBeforeTree` sees.
 * @example
 * const count = (preparation: TreePreparation) => preparation.entriesToSummarize.length;
 */
export interface TreePreparation {
  targetId: string;
  oldLeafId: string | null;
  commonAncestorId: string | null;
  /** Entries of the abandoned branch, oldest first. */
  entriesToSummarize: SessionEntry[];
  userWantsSummary: boolean;
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}

/**
 * Result of `sessionBeforeTree`.
 * @example
 * const result: BeforeTreeResult = { label: "abandoned", customInstructions: "list failed approaches" };
 */
export interface BeforeTreeResult {
  cancel?: boolean;
  summary?: { summary: string; details?: unknown };
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}

/**
 * Branch navigation callbacks.
 * @example
 * const hooks: TreeHookCallbacks = { sessionBeforeTree: ({ preparation }) => (preparation.userWantsSummary ? undefined : { cancel: true }) };
 */
export interface TreeHookCallbacks {
  sessionBeforeTree?: (event: { preparation: TreePreparation; signal: AbortSignal }) =>
    BeforeTreeResult | undefined | void | Promise<BeforeTreeResult | undefined | void>;
  sessionTree?: (event: {
    newLeafId: string | null;
    oldLeafId: string | null;
    summaryEntry?: BranchSummaryEntry;
    fromHook?: boolean;
  }) => void | Promise<void>;
}
