/**
 * `arbor-agent/compaction`: Compaction and branch summaries (pi's algorithm): settings, cut points, preparation, summaries, hooks and token estimates.
 * @example
 * import { compact } from "arbor-agent/compaction";
 */
export {
  runCompaction,
  compact,
  type CompactOptions,
} from "../compaction/compact.ts";
export {
  collectEntriesForBranchSummary,
  prepareBranchEntries,
  summarizeBranch,
  moveTo,
  BRANCH_SUMMARY_MAX_TOKENS,
  type BranchSummaryOutcome,
  type MoveToOptions,
  type MoveToResult,
} from "../compaction/branch-summary.ts";
export {
  createCompactionHooks,
  compactIfNeeded,
  type CompactionHookEvent,
  type CompactionHooksOptions,
} from "../compaction/hooks.ts";
export {
  type CompactionReason,
  type BeforeCompactResult,
  type CompactionHookCallbacks,
  type TreePreparation,
  type BeforeTreeResult,
  type TreeHookCallbacks,
} from "../compaction/hook-types.ts";
export {
  resolveCompactionSettings,
  resolveContextWindow,
  effectiveKeepRecentTokens,
  DEFAULT_COMPACTION_SETTINGS,
  FALLBACK_CONTEXT_WINDOW,
  type CompactionSettings,
  type CompactionSettingsInput,
} from "../compaction/settings.ts";
export {
  prepareCompaction,
  type CompactionPreparation,
  type CompactionRefusal,
  type PrepareCompactionResult,
} from "../compaction/prepare.ts";
export {
  callSummaryModel,
  summarizeCompaction,
  type SummaryCallResult,
  type SummaryCallOptions,
  type CompactionSummary,
} from "../compaction/summarize.ts";
export {
  estimateTokens,
  calculateContextTokens,
  hasKnownUsage,
  usableAssistantUsage,
  estimateContextTokens,
  estimateFreshContextTokens,
  shouldCompact,
  IMAGE_CHARS,
  type ContextTokenEstimate,
} from "../compaction/tokens.ts";
export {
  isValidCutPoint,
  findValidCutPoints,
  findTurnStartIndex,
  findCutPoint,
  type CutPointResult,
} from "../compaction/cut-point.ts";
export {
  compactionView,
  type CompactionViewItem,
} from "../compaction/compaction-view.ts";
export {
  isContextOverflow,
} from "../compaction/overflow.ts";
export {
  joinSplitTurnSummary,
  buildSummaryRequestText,
  SUMMARY_SYSTEM_PROMPT,
  COMPACTION_INSTRUCTIONS,
  COMPACTION_UPDATE_INSTRUCTIONS,
  TURN_PREFIX_INSTRUCTIONS,
  BRANCH_SUMMARY_INSTRUCTIONS,
  BRANCH_SUMMARY_PREAMBLE,
  NO_PRIOR_HISTORY,
} from "../compaction/prompts.ts";
export {
  createFileOps,
  extractFileOpsFromMessage,
  addFileOpsFromDetails,
  computeFileLists,
  formatFileOperations,
  DEFAULT_FILE_TOOL_NAMES,
  type FileOps,
  type FileToolNames,
} from "../compaction/file-ops.ts";
export {
  serializeConversation,
  TOOL_RESULT_MAX_CHARS,
} from "../compaction/serialize.ts";
export {
  type CompactionFailureReason,
  type CompactionOutcome,
} from "../compaction/compaction-outcome.ts";
export { CompactionFailedError } from "../core/errors.ts";
