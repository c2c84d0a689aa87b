/**
 * Branch summarization: the entries a move leaves behind (from the old leaf back to the common ancestor, oldest first) and their summary.
 * {@link prepareBranchEntries} keeps the newest within the token budget, skipping tool results; the call has no tools and maxTokens 2048; the summary
 * carries `<read-files>`/`<modified-files>`. {@link summarizeBranch} never throws.
 */
import type { BranchSummaryEntry, SessionEntry } from "../core/entries.ts";
import type { AgentMessage, Usage } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { SessionView } from "../store/session-types.ts";
import { entryMessage } from "./entry-messages.ts";
import { addFileOpsFromDetails, computeFileLists, createFileOps, extractFileOpsFromMessage, type FileOps, formatFileOperations, type FileToolNames } from "./file-ops.ts";
import { BRANCH_SUMMARY_INSTRUCTIONS, BRANCH_SUMMARY_PREAMBLE, buildSummaryRequestText } from "./prompts.ts";
import { serializeConversation } from "./serialize.ts";
import { FALLBACK_CONTEXT_WINDOW } from "./settings.ts";
import { callSummaryModel } from "./summarize.ts";
import { estimateTokens } from "./tokens.ts";

/**
 * Max output tokens of a branch summary call. Source: pi.
 * @example
 * request.maxTokens = BRANCH_SUMMARY_MAX_TOKENS; // 2048
 */
export const BRANCH_SUMMARY_MAX_TOKENS = 2048;

/**
 * The entries abandoned when moving from `oldLeafId` to `targetId`, oldest first, and their deepest common ancestor. Source: pi.
 * @example
 * const { entries, commonAncestorId } = collectEntriesForBranchSummary(session.view, session.view.leafId, targetId);
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
 * @example
 * const { messages, fileOps, totalTokens } = prepareBranchEntries(entries, 100_000);
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
 * @example
 * const outcome: BranchSummaryOutcome = await summarizeBranch(entries, { model, reserveTokens: 16_384 });
 */
export type BranchSummaryOutcome =
  | { ok: true; summary: string; details: { readFiles: string[]; modifiedFiles: string[] }; usage?: Usage }
  | { ok: false; aborted: boolean; message: string };

/**
 * Summarizes abandoned entries with `model` (no tools, maxTokens 2048). Never throws.
 * Nothing to summarize gives pi's "No content to summarize" without a model call.
 * @example
 * const outcome = await summarizeBranch(entries, { model, contextWindow: 128_000, reserveTokens: 16_384 });
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

export { moveTo, type MoveToOptions, type MoveToResult } from "./navigation.ts";
