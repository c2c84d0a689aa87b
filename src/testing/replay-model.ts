/**
 * `replayModel`: an AI SDK model answering call `n` with recorded call `n` (whatever the request), under the recorded provider and model id. Each
 * request is compared with the recorded context, both rendered as one line per message part; the first difference, an extra call
 * (`REPLAY_EXHAUSTED`) or a missing one is the divergence `report()` returns. `report()` never throws.
 */
import type { LanguageModelV4, LanguageModelV4Prompt } from "@ai-sdk/provider";
import { convertToLlm } from "../core/convert-to-llm.ts";
import { createPromptBuilder } from "../adapters/model/incremental-prompt.ts";
import type { EventLog } from "../store/event-log.ts";
import { readRecordedSession, ReplayError, type RecordedSession } from "./replay-record.ts";
import { scriptedModel } from "./scripted-model.ts";

/**
 * Where a new run's requests first differ from the recorded ones. `request` is 1-based;
 * `kind` says how: a message part differs, or one run made more calls than the other.
 * @example
 * const divergence: ReplayDivergence = { request: 2, kind: "message", part: 3, recorded: "tool result read: a", actual: "tool result read: b", description: "…" };
 */
export interface ReplayDivergence {
  request: number;
  kind: "message" | "more-calls" | "fewer-calls";
  /** 1-based index of the first differing part (one line per message part). */
  part?: number;
  recorded?: string;
  actual?: string;
  description: string;
}

/**
 * What a replay found: identical, or the first divergence; the counts of calls.
 * @example
 * const report: ReplayReport = model.report(); // { identical: true, recordedCalls: 3, calls: 3 }
 */
export interface ReplayReport {
  identical: boolean;
  recordedCalls: number;
  calls: number;
  divergence?: ReplayDivergence;
}

/**
 * The model {@link replayModel} returns: a `LanguageModelV4` with the recorded session and `report()`.
 * @example
 * const model: ReplayModel = await replayModel(log, sessionId);
 * model.recorded.segments.length; // runs recorded
 */
export interface ReplayModel extends LanguageModelV4 {
  readonly recorded: RecordedSession;
  report(): ReplayReport;
}

const clip = (text: string, length = 120) => (text.length > length ? `${text.slice(0, length)}…` : text);

function outputText(output: unknown): string {
  const value = output as { type: string; value: unknown };
  if (value.type === "text" || value.type === "error-text") return `${value.type === "error-text" ? "(error) " : ""}${String(value.value)}`;
  if (value.type === "json" || value.type === "error-json") return JSON.stringify(value.value);
  if (value.type === "content") return (value.value as { type: string; text?: string }[]).map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("");
  return JSON.stringify(value);
}

function inputText(input: unknown): string {
  if (typeof input !== "string") return JSON.stringify(input);
  try {
    return JSON.stringify(JSON.parse(input));
  } catch {
    return input;
  }
}

/**
 * A provider prompt as comparable lines, one per message part (see the module contract).
 * @example
 * promptLines([{ role: "user", content: [{ type: "text", text: "hi" }] }]); // ["user: hi"]
 */
export function promptLines(prompt: LanguageModelV4Prompt): string[] {
  const lines: string[] = [];
  for (const message of prompt) {
    if (message.role === "system") continue;
    for (const part of message.content as unknown as { type: string; [key: string]: unknown }[]) {
      if (part.type === "text") lines.push(`${message.role}: ${String(part.text)}`);
      else if (part.type === "tool-call") lines.push(`assistant calls ${String(part.toolName)} ${inputText(part.input)}`);
      else if (part.type === "tool-result") lines.push(`tool result ${String(part.toolName)}: ${outputText(part.output)}`);
      else if (part.type === "file") lines.push(`${message.role}: [file ${String(part.mediaType)}]`);
    }
  }
  return lines;
}

function compare(request: number, recorded: string[], actual: string[]): ReplayDivergence | undefined {
  const length = Math.max(recorded.length, actual.length);
  for (let index = 0; index < length; index++) {
    if (recorded[index] === actual[index]) continue;
    const before = recorded[index] ?? "(nothing)";
    const now = actual[index] ?? "(nothing)";
    return {
      request,
      kind: "message",
      part: index + 1,
      recorded: before,
      actual: now,
      description: `request ${request} differs at part ${index + 1}: recorded ${JSON.stringify(clip(before))}, now ${JSON.stringify(clip(now))}`,
    };
  }
  return undefined;
}

/**
 * Options of {@link replayModel}.
 * @example
 * const model = await replayModel(log, sessionId, undefined, { onAbortedAnswer: () => harness.abort() });
 */
export interface ReplayModelOptions {
  /** Called when the model serves a recorded call that was aborted (its stream then hangs until the run aborts). */
  onAbortedAnswer?: () => void;
}

/**
 * One line (or a few) for people: `identical`, or the first divergence.
 * @example
 * formatReplayReport({ identical: true, recordedCalls: 2, calls: 2 }); // "identical (2 model calls)"
 */
export function formatReplayReport(report: ReplayReport): string {
  if (report.identical) return `identical (${report.calls} model call${report.calls === 1 ? "" : "s"})`;
  return `diverged: ${report.divergence!.description}`;
}

/**
 * The replay model of `sessionId` (every run, or `runId` only); see the module contract. Rejects with ReplayError (`REPLAY_RUN_NOT_FOUND`,
 * `REPLAY_NOTHING_RECORDED`) and with SessionNotFoundError for an unknown session.
 * @example
 * const model = await replayModel(log, sessionId, runId);
 * await harness.prompt("fix the bug"); // a harness whose model is `model`
 * model.report(); // { identical: false, divergence: { request: 2, ... } }
 */
export async function replayModel(log: EventLog, sessionId: string, runId?: string, options: ReplayModelOptions = {}): Promise<ReplayModel> {
  const recorded = await readRecordedSession(log, sessionId, runId);
  const calls = recorded.segments.flatMap((segment) => segment.calls);
  const target = { provider: recorded.model.provider, api: recorded.model.provider.replace(/\./g, "-"), modelId: recorded.model.modelId };
  const expected = await Promise.all(
    calls.map(async (call) => promptLines(await createPromptBuilder(target).build(undefined, convertToLlm(call.context), { supportedUrls: {}, abortSignal: new AbortController().signal }))),
  );
  let made = 0;
  let divergence: ReplayDivergence | undefined;
  const model: ReplayModel = {
    specificationVersion: "v4",
    provider: recorded.model.provider,
    modelId: recorded.model.modelId,
    supportedUrls: {},
    recorded,
    doGenerate: async () => {
      throw new ReplayError("REPLAY_UNSUPPORTED", "replayModel only streams (the recorded calls were streams)");
    },
    doStream: async (call) => {
      const index = made++;
      if (index >= calls.length) {
        divergence ??= { request: index + 1, kind: "more-calls", description: `request ${index + 1} was never made in the recorded run (it made ${calls.length})` };
        throw new ReplayError("REPLAY_EXHAUSTED", `replayModel: the recorded run made ${calls.length} model calls; this is call ${index + 1}`);
      }
      divergence ??= compare(index + 1, expected[index], promptLines(call.prompt));
      const answer = calls[index].answer;
      const stream = await scriptedModel([answer], { provider: recorded.model.provider, modelId: recorded.model.modelId }).doStream(call);
      if (typeof answer === "object" && "hangAfter" in answer) options.onAbortedAnswer?.();
      return stream;
    },
    report: () => {
      const found =
        divergence ??
        (made < calls.length ? { request: made + 1, kind: "fewer-calls" as const, description: `the new run made ${made} model calls; the recorded run made ${calls.length} (request ${made + 1}: ${calls[made].summary})` } : undefined);
      return { identical: found === undefined, recordedCalls: calls.length, calls: made, ...(found ? { divergence: found } : {}) };
    },
  };
  return model;
}
