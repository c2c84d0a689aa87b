/**
 * Summary calls: one model request without tools and with {@link SUMMARY_SYSTEM_PROMPT}. maxTokens: floor(0.8 × reserveTokens) for history,
 * floor(0.5 ×) for a turn prefix, 2048 for a branch, each capped at the model's own. Failures are values (`{ ok: false, aborted }`), never throws; an
 * empty answer is a failure. A split turn runs both calls concurrently and sums usage.
 */
import type { AgentMessage, ThinkingLevel, Usage } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import { computeFileLists, formatFileOperations } from "./file-ops.ts";
import type { CompactionPreparation } from "./prepare.ts";
import {
  buildSummaryRequestText,
  COMPACTION_INSTRUCTIONS,
  COMPACTION_UPDATE_INSTRUCTIONS,
  joinSplitTurnSummary,
  NO_PRIOR_HISTORY,
  SUMMARY_SYSTEM_PROMPT,
  TURN_PREFIX_INSTRUCTIONS,
} from "./prompts.ts";
import { serializeConversation } from "./serialize.ts";

/**
 * Outcome of one summary call.
 * @example
 * const result: SummaryCallResult = await callSummaryModel(text, 1024, { model });
 */
export type SummaryCallResult =
  | { ok: true; text: string; usage: Usage }
  | { ok: false; aborted: boolean; message: string; usage?: Usage };

/**
 * Options shared by summary calls.
 * @example
 * const options: SummaryCallOptions = { model, signal: controller.signal, thinkingLevel: "low" };
 */
export interface SummaryCallOptions {
  model: ModelClient;
  signal?: AbortSignal;
  thinkingLevel?: ThinkingLevel;
}

/** Adds two usages; a count stays null only if both are null. */
export function addUsage(a: Usage, b: Usage): Usage {
  const add = (x: number | null, y: number | null) => (x === null && y === null ? null : (x ?? 0) + (y ?? 0));
  const sum: Usage = {
    input: add(a.input, b.input),
    output: add(a.output, b.output),
    cacheRead: add(a.cacheRead, b.cacheRead),
    cacheWrite: add(a.cacheWrite, b.cacheWrite),
    totalTokens: add(a.totalTokens, b.totalTokens),
  };
  if (a.cost && b.cost) {
    sum.cost = {
      input: a.cost.input + b.cost.input,
      output: a.cost.output + b.cost.output,
      cacheRead: a.cost.cacheRead + b.cost.cacheRead,
      cacheWrite: a.cost.cacheWrite + b.cost.cacheWrite,
      total: a.cost.total + b.cost.total,
    };
  }
  return sum;
}

/**
 * Sends one summary request (`text` as the only user message, no tools) and collects the answer. Never throws.
 * @example
 * const result = await callSummaryModel("<conversation>…", 1024, { model });
 */
export async function callSummaryModel(text: string, maxTokens: number, options: SummaryCallOptions): Promise<SummaryCallResult> {
  const { model, signal, thinkingLevel } = options;
  const messages: AgentMessage[] = [{ role: "user", content: [{ type: "text", text }], timestamp: Date.now() }];
  const request = {
    systemPrompt: SUMMARY_SYSTEM_PROMPT,
    messages,
    tools: [],
    maxTokens: model.maxTokens !== undefined ? Math.min(maxTokens, model.maxTokens) : maxTokens,
    ...(model.reasoning && thinkingLevel && thinkingLevel !== "off" ? { thinkingLevel } : {}),
  };
  try {
    for await (const event of model.stream(request, { signal })) {
      if (event.type === "error") {
        const aborted = event.message.stopReason === "aborted" || signal?.aborted === true;
        return { ok: false, aborted, message: event.message.errorMessage ?? "unknown provider error", usage: event.message.usage };
      }
      if (event.type === "done") {
        const answer = event.message.content
          .flatMap((block) => (block.type === "text" ? [block.text] : []))
          .join("\n")
          .trim();
        if (!answer) return { ok: false, aborted: false, message: "the model returned an empty summary", usage: event.message.usage };
        return { ok: true, text: answer, usage: event.message.usage };
      }
    }
  } catch (error) {
    return { ok: false, aborted: signal?.aborted === true, message: error instanceof Error ? error.message : String(error) };
  }
  return { ok: false, aborted: signal?.aborted === true, message: "the model stream ended without a result" };
}

/**
 * A compaction summary ready to store.
 * @example
 * const result = await summarizeCompaction(preparation, { model }); if (result.ok) store(result.value satisfies CompactionSummary);
 */
export interface CompactionSummary {
  summary: string;
  details: { readFiles: string[]; modifiedFiles: string[] };
  usage: Usage;
}

/**
 * Summarizes a prepared compaction: the history (updating the previous summary when there is one), plus a turn-prefix summary for a split turn, plus
 * the file lists. Never throws; see {@link SummaryCallResult} for failures.
 * @example
 * const result = await summarizeCompaction(preparation, { model, customInstructions: "keep the API names" });
 */
export async function summarizeCompaction(
  preparation: CompactionPreparation,
  options: SummaryCallOptions & { customInstructions?: string },
): Promise<{ ok: true; value: CompactionSummary } | { ok: false; aborted: boolean; message: string }> {
  const reserve = preparation.settings.reserveTokens;
  const history = async (): Promise<SummaryCallResult | undefined> => {
    if (preparation.messagesToSummarize.length === 0) return undefined;
    const text = buildSummaryRequestText({
      conversation: serializeConversation(preparation.messagesToSummarize),
      instructions: preparation.previousSummary ? COMPACTION_UPDATE_INSTRUCTIONS : COMPACTION_INSTRUCTIONS,
      previousSummary: preparation.previousSummary,
      customInstructions: options.customInstructions,
    });
    return callSummaryModel(text, Math.floor(0.8 * reserve), options);
  };
  const prefix = async (): Promise<SummaryCallResult | undefined> => {
    if (!preparation.isSplitTurn || preparation.turnPrefixMessages.length === 0) return undefined;
    const text = buildSummaryRequestText({
      conversation: serializeConversation(preparation.turnPrefixMessages),
      instructions: TURN_PREFIX_INSTRUCTIONS,
    });
    return callSummaryModel(text, Math.floor(0.5 * reserve), options);
  };
  const [historyResult, prefixResult] = await Promise.all([history(), prefix()]);
  for (const result of [historyResult, prefixResult]) {
    if (result && !result.ok) return { ok: false, aborted: result.aborted, message: `Summarization failed: ${result.message}` };
  }
  const ok = (result: SummaryCallResult | undefined) => (result?.ok ? result : undefined);
  const historyOk = ok(historyResult);
  const prefixOk = ok(prefixResult);
  let summary: string;
  if (prefixOk) summary = joinSplitTurnSummary(historyOk?.text ?? preparation.previousSummary ?? NO_PRIOR_HISTORY, prefixOk.text);
  else summary = historyOk!.text;
  const usage =
    historyOk && prefixOk ? addUsage(historyOk.usage, prefixOk.usage) : (historyOk?.usage ?? prefixOk!.usage);
  const { readFiles, modifiedFiles } = computeFileLists(preparation.fileOps);
  summary += formatFileOperations(readFiles, modifiedFiles);
  return { ok: true, value: { summary, details: { readFiles, modifiedFiles }, usage } };
}
