/**
 * `navigateTo`: model-free tree navigation with the `sessionBeforeTree` / `sessionTree`
 * hooks and an optional branch summary from a hook or a caller-supplied summarizer.
 * (A harness session's `moveTo` uses `src/compaction/branch-summary.ts` instead, which can
 * also generate the summary with the session's model; this module serves callers without a
 * model, e.g. the CLI's label-only moves.)
 *
 * Contract (semantics pi's `navigateTree`, `../shared/reference/pi-behaviour.md` §4; ours where marked):
 * - moving to the current leaf is a no-op (`{ cancelled: false, changed: false }`), no hook runs;
 * - an unknown id throws `EntryNotFoundError`; a running agent throws `SessionBusyError`; a
 *   compaction in progress throws `InvalidStateError` (ours, the fix for pi #9178); nothing is written;
 * - the abandoned branch = entries from the old leaf back to (excluding) the deepest common
 *   ancestor with the target, oldest first;
 * - `sessionBeforeTree` may cancel (nothing is written), supply a summary (used only when
 *   `summarize` was asked for), or override customInstructions / replaceInstructions / label;
 * - new leaf: a user `message` or a `custom_message` target → its parent, and its text is
 *   returned as `editorText`; any other target → the target itself;
 * - with a summary: ONE append of a `branch_summary {fromId: newLeaf ?? "root"}` as a child of
 *   the new leaf (which becomes the leaf); a label then targets the summary entry;
 *   without: the leaf moves (`leaf.moved`), and a label targets the chosen target;
 * - `summarize` with entries to summarize, no hook summary and no generator throws
 *   `InvalidStateError` before anything is written (ours: never silently skip a requested summary);
 * - `sessionTree` observes the result.
 *
 * @example
 * ```ts
 * const result = await navigateTo({ session, hooks, isBusy: () => false }, "a1b2c3d4", { summarize: true });
 * if (!result.cancelled) editor.setText(result.editorText ?? "");
 * ```
 */
import type { BranchSummaryEntry, SessionEntry } from "../core/entries.ts";
import { EntryNotFoundError, InvalidStateError, SessionBusyError } from "../core/errors.ts";
import { messageText } from "../core/messages.ts";
import { isCompacting } from "../compaction/lock.ts";
import type { SessionHandle } from "../store/session-types.ts";
import type { TreePreparation } from "./hook-types.ts";
import type { HookRunner } from "./hooks.ts";

/** Options of `moveTo`. */
export interface MoveToOptions {
  /** Summarize the abandoned branch (needs a hook summary or a generator). */
  summarize?: boolean;
  customInstructions?: string;
  /** Use `customInstructions` instead of the default summary instructions. */
  replaceInstructions?: boolean;
  /** Label to attach (to the summary entry, else to the target). */
  label?: string;
  signal?: AbortSignal;
}

/** The outcome of `moveTo`. */
export interface MoveToResult {
  cancelled: boolean;
  /** False for a move to the current leaf. */
  changed: boolean;
  oldLeafId: string | null;
  newLeafId: string | null;
  /** The text of a user / custom message target, for re-editing (pi). */
  editorText?: string;
  summaryEntry?: BranchSummaryEntry;
  /** True when the summary came from a hook. */
  fromHook?: boolean;
}

/** Generates a branch summary (the compaction module's job). */
export type BranchSummarizer = (input: {
  entries: SessionEntry[];
  customInstructions?: string;
  replaceInstructions?: boolean;
  signal: AbortSignal;
}) => Promise<{ summary: string; details?: unknown }>;

/** What {@link navigateTo} needs from the harness session. */
export interface NavigationContext {
  session: SessionHandle;
  hooks: HookRunner;
  isBusy: () => boolean;
  summarize?: BranchSummarizer;
}

/**
 * The abandoned branch (old leaf back to, excluding, the deepest common ancestor with the
 * target; oldest first) and that ancestor. Source: pi.
 *
 * @example
 * ```ts
 * const { entries, commonAncestorId } = collectAbandonedBranch(session, session.view.leafId, targetId);
 * ```
 */
export function collectAbandonedBranch(session: SessionHandle, oldLeafId: string | null, targetId: string): { commonAncestorId: string | null; entries: SessionEntry[] } {
  if (oldLeafId === null) return { commonAncestorId: null, entries: [] };
  const targetPath = new Set(session.view.getBranch(targetId).map((entry) => entry.id));
  const oldPath = session.view.getBranch(oldLeafId);
  let index = oldPath.length - 1;
  while (index >= 0 && !targetPath.has(oldPath[index].id)) index--;
  return { commonAncestorId: index >= 0 ? oldPath[index].id : null, entries: oldPath.slice(index + 1) };
}

/**
 * Moves the session's leaf (see the module contract).
 *
 * @throws EntryNotFoundError, SessionBusyError, InvalidStateError — before anything is written.
 * @example
 * ```ts
 * await navigateTo(context, entryId, { label: "retry from here" });
 * ```
 */
export async function navigateTo(context: NavigationContext, targetId: string, options: MoveToOptions = {}): Promise<MoveToResult> {
  const { session, hooks } = context;
  const oldLeafId = session.view.leafId;
  if (targetId === oldLeafId) return { cancelled: false, changed: false, oldLeafId, newLeafId: oldLeafId };
  const target = session.view.getEntry(targetId);
  if (!target) throw new EntryNotFoundError(`moveTo(): no entry "${targetId}" in session ${session.id}.`, { details: { entryId: targetId } });
  if (context.isBusy()) throw new SessionBusyError("moveTo(): a run is active; abort it or wait for idle first.");
  if (isCompacting(session.id)) throw new InvalidStateError(`moveTo(): session ${session.id} is compacting; wait for it to finish.`);

  const { commonAncestorId, entries } = collectAbandonedBranch(session, oldLeafId, targetId);
  const preparation: TreePreparation = {
    targetId,
    oldLeafId,
    commonAncestorId,
    entriesToSummarize: entries,
    userWantsSummary: options.summarize === true,
    customInstructions: options.customInstructions,
    replaceInstructions: options.replaceInstructions,
    label: options.label,
  };
  const signal = options.signal ?? new AbortController().signal;
  const decision = await hooks.sessionBeforeTree({ preparation, signal });
  if (decision.cancel) return { cancelled: true, changed: false, oldLeafId, newLeafId: oldLeafId };
  const customInstructions = decision.customInstructions ?? options.customInstructions;
  const replaceInstructions = decision.replaceInstructions ?? options.replaceInstructions;
  const label = decision.label ?? options.label;

  let summary: { summary: string; details?: unknown } | undefined;
  let fromHook = false;
  if (options.summarize && entries.length > 0) {
    if (decision.summary) {
      summary = decision.summary;
      fromHook = true;
    } else if (context.summarize) {
      summary = await context.summarize({ entries, customInstructions, replaceInstructions, signal });
    } else {
      throw new InvalidStateError("moveTo(): a summary was asked for, but no branch summarizer is configured and no sessionBeforeTree hook supplied one.");
    }
  }

  let newLeafId: string | null = targetId;
  let editorText: string | undefined;
  if (target.type === "message" && (target as { message: { role: string } }).message.role === "user") {
    newLeafId = target.parentId;
    editorText = messageText((target as { message: Parameters<typeof messageText>[0] }).message);
  } else if (target.type === "custom_message") {
    newLeafId = target.parentId;
    const content = (target as { content: string | { type: string; text?: string }[] }).content;
    editorText = typeof content === "string" ? content : content.flatMap((block) => (block.type === "text" ? [block.text ?? ""] : [])).join("\n");
  }

  let summaryEntry: BranchSummaryEntry | undefined;
  if (summary) {
    const [stored] = await session.appendEntries([
      {
        type: "branch_summary",
        parentId: newLeafId,
        fromId: newLeafId ?? "root",
        summary: summary.summary,
        ...(summary.details === undefined ? {} : { details: summary.details }),
        ...(fromHook ? { fromHook: true } : {}),
      },
    ]);
    summaryEntry = stored as BranchSummaryEntry;
  } else {
    await session.moveLeaf(newLeafId);
  }
  if (label !== undefined) await session.appendEntry({ type: "label", targetId: summaryEntry?.id ?? targetId, label });

  const result: MoveToResult = { cancelled: false, changed: true, oldLeafId, newLeafId: session.view.leafId, editorText, summaryEntry, fromHook: summary ? fromHook : undefined };
  await hooks.observe("sessionTree", { newLeafId: result.newLeafId, oldLeafId, summaryEntry, fromHook: result.fromHook });
  return result;
}
