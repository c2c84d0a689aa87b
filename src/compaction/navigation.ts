/**
 * The navigation actor's work: `moveTo` moves the leaf to another entry (pi's `navigateTree`), optionally leaving a summary of the abandoned branch.
 * It runs in the session's slot as `navigating` (`SessionBusyError` otherwise). A user-message target moves to its parent and returns its text as
 * `editorText`; a summary and its label are ONE atomic append; nothing is appended if the leaf moved meanwhile (`CompactionFailedError`) or on abort.
 * Errors: `EntryNotFoundError`, `ModelConfigError`, `CompactionFailedError`.
 */
import type { BranchSummaryEntry, CustomMessageEntry, LabelEntry, MessageEntry, SessionEntry } from "../core/entries.ts";
import { CompactionFailedError, EntryNotFoundError, ModelConfigError } from "../core/errors.ts";
import { messageText, type Usage } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import { sessionActorOf } from "../machines/session-actor.ts";
import { batchEnd } from "../store/session/batch-end.ts";
import { generateEntryId } from "../store/session/session-handle.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { collectEntriesForBranchSummary, summarizeBranch } from "./branch-summary.ts";
import type { FileToolNames } from "./file-ops.ts";
import type { TreeHookCallbacks, TreePreparation } from "./hook-types.ts";
import { startSummaryIntent, type SummaryIntent } from "./summary-intent.ts";
import { type CompactionSettingsInput, resolveCompactionSettings, resolveContextWindow } from "./settings.ts";
import { ignored } from "../core/ignored.ts";

/**
 * Options of {@link moveTo}.
 * @example
 * const options: MoveToOptions = { summarize: true, label: "sqlite attempt", model };
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
 * @example
 * const { newLeafId, editorText, summaryEntry }: MoveToResult = await moveTo(session, id, options);
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
 * Moves the session's leaf to `targetId` in the session's operation slot (see the module
 * contract). Rejects with `SessionBusyError` unless the slot is idle.
 * @example
 * await moveTo(session, "a1b2c3d4", { summarize: true, model, customInstructions: "list the failed approaches" });
 */
export async function moveTo(session: SessionHandle, targetId: string, options: MoveToOptions = {}): Promise<MoveToResult> {
  if (!session.view.getEntry(targetId)) {
    throw new EntryNotFoundError(`Cannot move to "${targetId}": no such entry in session ${session.id}.`, { details: { targetId } });
  }
  return sessionActorOf(session).operate("navigating", (signal) => navigate(session, targetId, options, signal));
}

/** The navigation itself; runs inside the slot. */
async function navigate(session: SessionHandle, requestedId: string, options: MoveToOptions, slotSignal: AbortSignal): Promise<MoveToResult> {
  const view = session.view;
  if (!view.getEntry(requestedId)) throw new EntryNotFoundError(`Cannot move to "${requestedId}": no such entry in session ${session.id}.`, { details: { targetId: requestedId } });
  // A move to one result of a tool batch lands on the batch's last result (ours, batch-end.ts).
  const targetId = batchEnd(view, requestedId);
  const target = view.getEntry(targetId)!;
  const oldLeafId = view.leafId;
  if (targetId === oldLeafId) return { oldLeafId, newLeafId: oldLeafId };
  const settings = resolveCompactionSettings(options.settings);
  const model = settings.summarizationModel ?? options.model;
  if (options.summarize && !model) throw new ModelConfigError("moveTo({ summarize: true }) needs a model (options.model or settings.summarizationModel).");

  const controller = new AbortController();
  const onAbort = () => controller.abort();
  if (options.signal?.aborted || slotSignal.aborted) controller.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  slotSignal.addEventListener("abort", onAbort, { once: true });
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
    let intent: SummaryIntent | undefined;
    if (supplied) summary = { ...supplied, fromHook: true };
    else if (options.summarize && entries.length > 0) {
      intent = await startSummaryIntent(session, "branch_summary", "navigation");
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
        if (outcome.aborted || controller.signal.aborted) {
          await intent.end("cancelled");
          return { oldLeafId, newLeafId: oldLeafId, cancelled: true, aborted: true };
        }
        await intent.end("failed", outcome.message);
        throw new CompactionFailedError(`${outcome.message}; the leaf did not move.`);
      }
      summary = { summary: outcome.summary, details: outcome.details, usage: outcome.usage, fromHook: false };
    }
    if (controller.signal.aborted) {
      await intent?.end("cancelled");
      return { oldLeafId, newLeafId: oldLeafId, cancelled: true, aborted: true };
    }
    if (view.leafId !== oldLeafId) {
      await intent?.end("failed", "the leaf moved while summarizing");
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
      const stored = await sessionActorOf(session).writes.appendEntries(batch as never, intent ? { extraEvents: [intent.appended(summaryId)] } : undefined).catch(async (error: unknown) => {
        await intent?.end("failed", `appending the branch summary failed: ${error instanceof Error ? error.message : String(error)}`);
        throw error;
      });
      summaryEntry = stored[0] as BranchSummaryEntry;
      labelEntry = stored[1] as LabelEntry | undefined;
    } else if (label) {
      const [stored] = await sessionActorOf(session).writes.appendEntries([{ type: "label", parentId: newLeafId, targetId, label }]);
      labelEntry = stored as LabelEntry;
    } else {
      await sessionActorOf(session).writes.moveLeaf(newLeafId);
    }
    const result: MoveToResult = { oldLeafId, newLeafId, ...(summaryEntry ? { summaryEntry } : {}), ...(labelEntry ? { labelEntry } : {}), ...(editorText !== undefined ? { editorText } : {}) };
    if (options.hooks?.sessionTree) {
      try {
        await options.hooks.sessionTree({ newLeafId, oldLeafId, summaryEntry, fromHook: summary?.fromHook });
      } catch (error) {
        ignored("a sessionTree observer threw; it cannot undo the move", error);
      }
    }
    return result;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    slotSignal.removeEventListener("abort", onAbort);
  }
}
