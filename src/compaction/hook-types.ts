/**
 * The callbacks compaction and branch summarization call, so a harness can wire
 * its hook runner in. Plain async functions; the first argument is the event.
 *
 * Contract (events pi's `session_before_compact`, `session_compact`,
 * `session_before_tree`, `session_tree`, `docs/pi-parity.md`; ours where marked):
 * - `sessionBeforeCompact` may cancel (`{ cancel: true }`) or supply the compaction
 *   (`{ compaction: { summary, firstKeptEntryId?, tokensBefore?, details? } }`, stored
 *   with `fromHook: true`; missing fields default to Arbor's preparation). A supplied
 *   `firstKeptEntryId` must be on the path, not a tool result, and must not separate
 *   a kept tool result from its call, else the compaction fails (ours);
 * - `sessionCompact` observes the appended entry; a throw there is ignored (the entry is stored);
 * - `sessionBeforeTree` may cancel, supply `{ summary: { summary, details? } }` (used
 *   only when a summary was asked for) or override `customInstructions`,
 *   `replaceInstructions` and `label`;
 * - `sessionTree` observes the navigation;
 * - a throwing `sessionBefore*` callback fails the operation (nothing is appended).
 *
 * @example
 * ```ts
 * const hooks: CompactionHookCallbacks = {
 *   sessionBeforeCompact: ({ preparation }) => (preparation.tokensBefore < 1000 ? { cancel: true } : undefined),
 * };
 * ```
 */
import type { BranchSummaryEntry, CompactionEntry, SessionEntry } from "../core/entries.ts";
import type { CompactionPreparation } from "./prepare.ts";

/**
 * Why a compaction runs. Source: pi.
 *
 * @example
 * ```ts
 * const reason: CompactionReason = "threshold";
 * ```
 */
export type CompactionReason = "manual" | "threshold" | "overflow";

/**
 * Result of `sessionBeforeCompact`.
 *
 * @example
 * ```ts
 * const result: BeforeCompactResult = { compaction: { summary: "## Goal\n…" } };
 * ```
 */
export interface BeforeCompactResult {
  cancel?: boolean;
  compaction?: { summary: string; firstKeptEntryId?: string; tokensBefore?: number; details?: unknown };
}

/**
 * Compaction callbacks.
 *
 * @example
 * ```ts
 * const hooks: CompactionHookCallbacks = { sessionCompact: ({ compactionEntry }) => console.log(compactionEntry.id) };
 * ```
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
 *
 * @example
 * ```ts
 * const count = (preparation: TreePreparation) => preparation.entriesToSummarize.length;
 * ```
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
 *
 * @example
 * ```ts
 * const result: BeforeTreeResult = { label: "abandoned", customInstructions: "list failed approaches" };
 * ```
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
 *
 * @example
 * ```ts
 * const hooks: TreeHookCallbacks = { sessionBeforeTree: ({ preparation }) => (preparation.userWantsSummary ? undefined : { cancel: true }) };
 * ```
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
