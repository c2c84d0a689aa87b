/**
 * Branch summarization and `moveTo`: leave a branch of the session tree, optionally
 * leaving a summary of it on the branch you move to.
 *
 * Contract (source: pi 0.73.1 `navigateTree` and `branch-summarization.ts`,
 * `../shared/reference/pi-behaviour.md` §4; ours where marked):
 * - the abandoned entries run from the old leaf back to (excluding) the deepest
 *   common ancestor of the old leaf and the target, oldest first;
 * - {@link prepareBranchEntries} walks them newest first, skipping tool results,
 *   until the token budget (window or 128,000, minus `branchSummaryReserveTokens`)
 *   would be exceeded; a compaction or branch summary still fits while under 90 %
 *   of the budget; file operations come from every entry (pi);
 * - the summary call has no tools and maxTokens 2048; the stored summary is a
 *   preamble + the model text + `<read-files>`/`<modified-files>`;
 * - a target that is one result of a tool batch becomes the batch's last result (ours,
 *   `batch-end.ts`), so the siblings' results stay on the path;
 * - the new leaf is the target, except for a user message or custom_message target:
 *   then it is the target's parent (null at the root) and the target's text is
 *   returned as `editorText` for re-editing (pi);
 * - with a summary, ONE atomic append writes the `branch_summary` (a child of the new
 *   leaf, `fromId` = new leaf or `"root"`) and, when asked, a `label` on it; without
 *   one, the leaf moves (a label then targets the target entry, appended at the new leaf);
 * - hooks: `sessionBeforeTree` may cancel, supply the summary (used only when a
 *   summary was asked for; stored with `fromHook: true`) or override
 *   instructions/label; `sessionTree` observes the result;
 * - ours: refused with `InvalidStateError` while the session is compacting (pi #9178);
 *   the session lock is held while summarizing, and if the leaf moved meanwhile
 *   nothing is appended (`CompactionFailedError`);
 * - errors: unknown target → `EntryNotFoundError`; `summarize` without a model →
 *   `ModelConfigError`; a failed summary call → `CompactionFailedError`; an abort
 *   returns `{ cancelled: true, aborted: true }` with the session unchanged.
 *
 * @example
 * ```ts
 * const result = await moveTo(session, entryId, { summarize: true, label: "tried sqlite", model });
 * if (result.editorText) editor.setText(result.editorText);
 * ```
 */
import type { BranchSummaryEntry, CustomMessageEntry, LabelEntry, MessageEntry, SessionEntry } from "../core/entries.ts";
import { CompactionFailedError, EntryNotFoundError, InvalidStateError, ModelConfigError } from "../core/errors.ts";
import { type AgentMessage, messageText, type Usage } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import { batchEnd } from "../store/batch-end.ts";
import { generateEntryId } from "../store/session-handle.ts";
import type { SessionHandle, SessionView } from "../store/session-types.ts";
import { entryMessage } from "./entry-messages.ts";
import { addFileOpsFromDetails, computeFileLists, createFileOps, extractFileOpsFromMessage, type FileOps, formatFileOperations, type FileToolNames } from "./file-ops.ts";
import type { TreeHookCallbacks, TreePreparation } from "./hook-types.ts";
import { acquireSessionLock, sessionLockHolder } from "./lock.ts";
import { BRANCH_SUMMARY_INSTRUCTIONS, BRANCH_SUMMARY_PREAMBLE, buildSummaryRequestText } from "./prompts.ts";
import { serializeConversation } from "./serialize.ts";
import { type CompactionSettingsInput, FALLBACK_CONTEXT_WINDOW, resolveCompactionSettings, resolveContextWindow } from "./settings.ts";
import { callSummaryModel } from "./summarize.ts";
import { estimateTokens } from "./tokens.ts";

/**
 * Max output tokens of a branch summary call. Source: pi.
 *
 * @example
 * ```ts
 * request.maxTokens = BRANCH_SUMMARY_MAX_TOKENS; // 2048
 * ```
 */
export const BRANCH_SUMMARY_MAX_TOKENS = 2048;

/**
 * The entries abandoned when moving from `oldLeafId` to `targetId`, oldest first,
 * and their deepest common ancestor. Source: pi.
 *
 * @example
 * ```ts
 * const { entries, commonAncestorId } = collectEntriesForBranchSummary(session.view, session.view.leafId, targetId);
 * ```
 */
export function collectEntriesForBranchSummary(
  view: Pick<SessionView, "getBranch" | "getEntry">,
  oldLeafId: string | null,
  targetId: string,
): { entries: SessionEntry[]; commonAncestorId: string | null } {
  if (!oldLeafId) return { entries: [], commonAncestorId: null };
  const oldPath = new Set(view.getBranch(oldLeafId).map((entry) => entry.id));
  const targetPath = view.getBranch(targetId);
  let commonAncestorId: string | null = null;
  for (let index = targetPath.length - 1; index >= 0; index--) {
    if (oldPath.has(targetPath[index].id)) {
      commonAncestorId = targetPath[index].id;
      break;
    }
  }
  const entries: SessionEntry[] = [];
  let current: string | null = oldLeafId;
  while (current && current !== commonAncestorId) {
    const entry = view.getEntry(current);
    if (!entry) break;
    entries.push(entry);
    current = entry.parentId;
  }
  return { entries: entries.reverse(), commonAncestorId };
}

/**
 * The messages of abandoned entries that fit in `tokenBudget` (tokens; 0 = no
 * limit), newest kept first, plus file operations of all entries. Source: pi.
 *
 * @example
 * ```ts
 * const { messages, fileOps, totalTokens } = prepareBranchEntries(entries, 100_000);
 * ```
 */
export function prepareBranchEntries(
  entries: readonly SessionEntry[],
  tokenBudget = 0,
  fileToolNames?: FileToolNames,
): { messages: AgentMessage[]; fileOps: FileOps; totalTokens: number } {
  const fileOps = createFileOps();
  for (const entry of entries) {
    if (entry.type === "branch_summary") addFileOpsFromDetails((entry as BranchSummaryEntry).details, (entry as BranchSummaryEntry).fromHook, fileOps);
  }
  const messages: AgentMessage[] = [];
  let totalTokens = 0;
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index];
    const message = entryMessage(entry);
    if (!message || message.role === "toolResult") continue;
    extractFileOpsFromMessage(message, fileOps, fileToolNames);
    const tokens = estimateTokens(message);
    if (tokenBudget > 0 && totalTokens + tokens > tokenBudget) {
      if ((entry.type === "compaction" || entry.type === "branch_summary") && totalTokens < tokenBudget * 0.9) {
        messages.unshift(message);
        totalTokens += tokens;
      }
      break;
    }
    messages.unshift(message);
    totalTokens += tokens;
  }
  return { messages, fileOps, totalTokens };
}

/**
 * Outcome of {@link summarizeBranch}.
 *
 * @example
 * ```ts
 * const outcome: BranchSummaryOutcome = await summarizeBranch(entries, { model, reserveTokens: 16_384 });
 * ```
 */
export type BranchSummaryOutcome =
  | { ok: true; summary: string; details: { readFiles: string[]; modifiedFiles: string[] }; usage?: Usage }
  | { ok: false; aborted: boolean; message: string };

/**
 * Summarizes abandoned entries with `model` (no tools, maxTokens 2048). Never throws.
 * Nothing to summarize gives pi's "No content to summarize" without a model call.
 *
 * @example
 * ```ts
 * const outcome = await summarizeBranch(entries, { model, contextWindow: 128_000, reserveTokens: 16_384 });
 * ```
 */
export async function summarizeBranch(
  entries: readonly SessionEntry[],
  options: {
    model: ModelClient;
    contextWindow?: number;
    reserveTokens: number;
    customInstructions?: string;
    replaceInstructions?: boolean;
    signal?: AbortSignal;
    fileToolNames?: FileToolNames;
  },
): Promise<BranchSummaryOutcome> {
  const budget = (options.contextWindow ?? FALLBACK_CONTEXT_WINDOW) - options.reserveTokens;
  const { messages, fileOps } = prepareBranchEntries(entries, Math.max(budget, 1), options.fileToolNames);
  const { readFiles, modifiedFiles } = computeFileLists(fileOps);
  if (messages.length === 0) return { ok: true, summary: "No content to summarize", details: { readFiles, modifiedFiles } };
  const text = buildSummaryRequestText({
    conversation: serializeConversation(messages),
    instructions: BRANCH_SUMMARY_INSTRUCTIONS,
    customInstructions: options.customInstructions,
    replaceInstructions: options.replaceInstructions,
  });
  const result = await callSummaryModel(text, BRANCH_SUMMARY_MAX_TOKENS, { model: options.model, signal: options.signal });
  if (!result.ok) return { ok: false, aborted: result.aborted, message: `Branch summarization failed: ${result.message}` };
  const summary = BRANCH_SUMMARY_PREAMBLE + result.text + formatFileOperations(readFiles, modifiedFiles);
  return { ok: true, summary, details: { readFiles, modifiedFiles }, usage: result.usage };
}

/**
 * Options of {@link moveTo}.
 *
 * @example
 * ```ts
 * const options: MoveToOptions = { summarize: true, label: "sqlite attempt", model };
 * ```
 */
export interface MoveToOptions {
  /** Summarize the abandoned branch (needs `model`). */
  summarize?: boolean;
  customInstructions?: string;
  /** Use `customInstructions` as the whole prompt instead of appending it. */
  replaceInstructions?: boolean;
  /** Label the summary entry (or, without a summary, the target). */
  label?: string;
  /** Model for the summary (`settings.summarizationModel` wins when set). */
  model?: ModelClient;
  settings?: CompactionSettingsInput;
  hooks?: TreeHookCallbacks;
  signal?: AbortSignal;
  fileToolNames?: FileToolNames;
}

/**
 * Result of {@link moveTo}.
 *
 * @example
 * ```ts
 * const { newLeafId, editorText, summaryEntry }: MoveToResult = await moveTo(session, id, options);
 * ```
 */
export interface MoveToResult {
  oldLeafId: string | null;
  newLeafId: string | null;
  summaryEntry?: BranchSummaryEntry;
  labelEntry?: LabelEntry;
  /** The target's text when the target was a user message or custom_message (for re-editing). */
  editorText?: string;
  cancelled?: boolean;
  /** The summary call was aborted (then `cancelled` too). */
  aborted?: boolean;
}

function textOfTarget(entry: SessionEntry): string | undefined {
  if (entry.type === "message" && (entry as MessageEntry).message.role === "user") return messageText((entry as MessageEntry).message);
  if (entry.type === "custom_message") {
    const content = (entry as CustomMessageEntry).content;
    return typeof content === "string" ? content : content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
  }
  return undefined;
}

/**
 * Moves the session's leaf to `targetId` (see the module contract).
 *
 * @example
 * ```ts
 * await moveTo(session, "a1b2c3d4", { summarize: true, model, customInstructions: "list the failed approaches" });
 * ```
 */
export async function moveTo(session: SessionHandle, requestedId: string, options: MoveToOptions = {}): Promise<MoveToResult> {
  const view = session.view;
  if (!view.getEntry(requestedId)) throw new EntryNotFoundError(`Cannot move to "${requestedId}": no such entry in session ${session.id}.`, { details: { targetId: requestedId } });
  // A move to one result of a tool batch lands on the batch's last result (ours, batch-end.ts).
  const targetId = batchEnd(view, requestedId);
  const target = view.getEntry(targetId)!;
  const busy = sessionLockHolder(session.id);
  if (busy) {
    throw new InvalidStateError(
      `Cannot move the leaf while a ${busy === "compaction" ? "compaction" : "branch summary"} runs on session ${session.id}; wait for it or abort it.`,
      { details: { sessionId: session.id, busyWith: busy } },
    );
  }
  const oldLeafId = view.leafId;
  if (targetId === oldLeafId) return { oldLeafId, newLeafId: oldLeafId };
  const settings = resolveCompactionSettings(options.settings);
  const model = settings.summarizationModel ?? options.model;
  if (options.summarize && !model) throw new ModelConfigError("moveTo({ summarize: true }) needs a model (options.model or settings.summarizationModel).");

  const controller = new AbortController();
  const onAbort = () => controller.abort();
  if (options.signal?.aborted) controller.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const release = acquireSessionLock(session.id, "branch-summary", () => controller.abort());
  try {
    const { entries, commonAncestorId } = collectEntriesForBranchSummary(view, oldLeafId, targetId);
    let customInstructions = options.customInstructions;
    let replaceInstructions = options.replaceInstructions;
    let label = options.label;
    let supplied: { summary: string; details?: unknown } | undefined;
    if (options.hooks?.sessionBeforeTree) {
      const preparation: TreePreparation = {
        targetId,
        oldLeafId,
        commonAncestorId,
        entriesToSummarize: entries,
        userWantsSummary: options.summarize === true,
        customInstructions,
        replaceInstructions,
        label,
      };
      let verdict;
      try {
        verdict = await options.hooks.sessionBeforeTree({ preparation, signal: controller.signal });
      } catch (error) {
        throw new CompactionFailedError(`sessionBeforeTree threw: ${error instanceof Error ? error.message : String(error)}; the leaf did not move.`, { cause: error });
      }
      if (verdict?.cancel) return { oldLeafId, newLeafId: oldLeafId, cancelled: true };
      if (verdict?.customInstructions !== undefined) customInstructions = verdict.customInstructions;
      if (verdict?.replaceInstructions !== undefined) replaceInstructions = verdict.replaceInstructions;
      if (verdict?.label !== undefined) label = verdict.label;
      if (verdict?.summary && options.summarize) supplied = verdict.summary;
    }

    let summary: { summary: string; details?: unknown; usage?: Usage; fromHook: boolean } | undefined;
    if (supplied) summary = { ...supplied, fromHook: true };
    else if (options.summarize && entries.length > 0) {
      const outcome = await summarizeBranch(entries, {
        model: model!,
        contextWindow: resolveContextWindow(settings, model!),
        reserveTokens: settings.branchSummaryReserveTokens,
        customInstructions,
        replaceInstructions,
        signal: controller.signal,
        fileToolNames: options.fileToolNames,
      });
      if (!outcome.ok) {
        if (outcome.aborted || controller.signal.aborted) return { oldLeafId, newLeafId: oldLeafId, cancelled: true, aborted: true };
        throw new CompactionFailedError(`${outcome.message}; the leaf did not move.`);
      }
      summary = { summary: outcome.summary, details: outcome.details, usage: outcome.usage, fromHook: false };
    }
    if (controller.signal.aborted) return { oldLeafId, newLeafId: oldLeafId, cancelled: true, aborted: true };
    if (view.leafId !== oldLeafId) {
      throw new CompactionFailedError(`The session's leaf moved while summarizing the branch (now ${String(view.leafId)}); nothing was appended.`);
    }

    const editorText = textOfTarget(target);
    const newLeafId = editorText !== undefined ? target.parentId : targetId;
    let summaryEntry: BranchSummaryEntry | undefined;
    let labelEntry: LabelEntry | undefined;
    if (summary) {
      const summaryId = generateEntryId((id) => view.getEntry(id) !== undefined);
      const batch: Record<string, unknown>[] = [
        {
          type: "branch_summary",
          id: summaryId,
          parentId: newLeafId,
          fromId: newLeafId ?? "root",
          summary: summary.summary,
          ...(summary.details !== undefined ? { details: summary.details } : {}),
          ...(summary.usage ? { usage: summary.usage } : {}),
          ...(summary.fromHook ? { fromHook: true } : {}),
        },
      ];
      if (label) batch.push({ type: "label", targetId: summaryId, label });
      const stored = await session.appendEntries(batch as never);
      summaryEntry = stored[0] as BranchSummaryEntry;
      labelEntry = stored[1] as LabelEntry | undefined;
    } else if (label) {
      const [stored] = await session.appendEntries([{ type: "label", parentId: newLeafId, targetId, label }]);
      labelEntry = stored as LabelEntry;
    } else {
      await session.moveLeaf(newLeafId);
    }
    const result: MoveToResult = { oldLeafId, newLeafId, ...(summaryEntry ? { summaryEntry } : {}), ...(labelEntry ? { labelEntry } : {}), ...(editorText !== undefined ? { editorText } : {}) };
    if (options.hooks?.sessionTree) {
      try {
        await options.hooks.sessionTree({ newLeafId, oldLeafId, summaryEntry, fromHook: summary?.fromHook });
      } catch {
        // Observers cannot undo the move; their errors are ignored.
      }
    }
    return result;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    release();
  }
}
