/**
 * What the log recorded of a session's model calls, read back for replay: per run (or, for imported sessions, per user message) the calls with the
 * context at the time and the answer (or error, keeping its HTTP status so it is classified as before). Throws {@link ReplayError}
 * `REPLAY_RUN_NOT_FOUND` or `REPLAY_NOTHING_RECORDED`.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { isKnownEntry, messageOfEntry } from "../core/entries.ts";
import { ArborError } from "../core/errors.ts";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../core/messages.ts";
import type { EventLog } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import { createSessionRepository } from "../store/session-repository.ts";
import type { SessionHandle } from "../store/session-types.ts";
import type { ScriptedTurn } from "./openai-wire.ts";
import { httpError } from "./path-fixtures.ts";
import type { ScriptedStep } from "./scripted-model.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import type { RunKind } from "../core/vocabulary.ts";

/**
 * A replay that cannot start or go on: `REPLAY_RUN_NOT_FOUND`, `REPLAY_NOTHING_RECORDED`,
 * `REPLAY_UNSUPPORTED` (a `resume` run), `REPLAY_EXHAUSTED` (more model calls than recorded).
 * @example
 * try { await replayModel(log, id, "run-x"); } catch (error) { if (ReplayError.isInstance(error)) console.log(error.code); }
 */
export class ReplayError extends ArborError {
  static override isInstance(error: unknown): error is ReplayError {
    return ArborError.isInstance(error) && error.code.startsWith("REPLAY_");
  }
}

/** One recorded model call: the context it was sent and the answer the log holds. */
export interface RecordedCall {
  runId?: string;
  /** The session context (Arbor messages) the call was made with. */
  context: AgentMessage[];
  answer: ScriptedStep;
  /** One line: what the answer was. */
  summary: string;
}

/** One recorded run (or, for a pi session, one user turn). */
export interface RecordedSegment {
  runId?: string;
  kind: RunKind;
  prompts: AgentMessage[];
  baseLeafId: string | null;
  calls: RecordedCall[];
}

/** A session's recorded model calls, by segment. */
export interface RecordedSession {
  sessionId: string;
  session: SessionHandle;
  model: { provider: string; modelId: string };
  segments: RecordedSegment[];
  /** Every tool result of the session, by tool call id. */
  toolResults: Map<string, ToolResultMessage>;
}

function turnOf(message: AssistantMessage): ScriptedTurn {
  const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  const reasoning = message.content.flatMap((block) => (block.type === "thinking" && !block.redacted ? [block.thinking] : [])).join("");
  const toolCalls = message.content.flatMap((block) => (block.type === "toolCall" ? [{ id: block.id, name: block.name, arguments: block.argumentsError !== undefined ? block.argumentsError : block.arguments }] : []));
  const finishReason = message.stopReason === "toolUse" ? "tool_calls" : message.stopReason === "length" ? "length" : "stop";
  const usage = message.usage;
  return {
    ...(text ? { text } : {}),
    ...(reasoning ? { reasoning } : {}),
    ...(toolCalls.length ? { toolCalls } : {}),
    finishReason,
        // Arbor's `input` leaves out cache reads; the wire's input total holds them.
    usage: usage.input === null && usage.output === null ? null : { input: (usage.input ?? 0) + (usage.cacheRead ?? 0), output: usage.output ?? 0, ...(usage.cacheRead !== null ? { cached: usage.cacheRead } : {}) },
    ...(message.responseId ? { id: message.responseId } : {}),
    model: message.model,
  };
}

function errorOf(message: string | undefined): Error {
  const text = message ?? "the recorded call failed";
  const match = /^(\d{3}) (.*)$/s.exec(text);
  return match ? httpError(Number(match[1]), match[2]) : new Error(text);
}

/** The scripted step that answers like the recorded message did. */
function answerOf(message: AssistantMessage): { answer: ScriptedStep; summary: string } {
  if (message.stopReason === "error") return { answer: errorOf(message.errorMessage), summary: `error: ${message.errorMessage ?? ""}` };
  const turn = turnOf(message);
  const calls = (turn.toolCalls ?? []).map((call) => call.name);
  const summary = `${message.stopReason}${turn.text ? ` text ${JSON.stringify(turn.text.slice(0, 60))}` : ""}${calls.length ? ` calls ${calls.join(", ")}` : ""}`;
  if (message.stopReason === "aborted") {
    const parts: LanguageModelV4StreamPart[] = [];
    return { answer: { hangAfter: turn.text || turn.toolCalls ? turn : parts }, summary };
  }
  return { answer: turn, summary };
}

function messageOf(session: SessionHandle, entryId: string | undefined): AgentMessage | undefined {
  return messageOfEntry(entryId === undefined ? undefined : session.view.getEntry(entryId));
}

/** Reads the recorded model calls of `sessionId` (every run, or `runId` only); see the module contract. */
export async function readRecordedSession(log: EventLog, sessionId: string, runId?: string): Promise<RecordedSession> {
  const session = await createSessionRepository({ log }).open(sessionId);
  const events = await log.readStream(sessionStreamId(sessionId));
  const toolResults = new Map<string, ToolResultMessage>();
  for (const entry of session.view.getEntries()) {
    const message = messageOfEntry(entry);
    if (message?.role === "toolResult") toolResults.set(message.toolCallId, message);
  }
  const context = (leafId: string | null) => session.view.buildContext({ leafId }).messages;
  const segments: RecordedSegment[] = [];
  let model: RecordedSession["model"] | undefined;
  if (events.some((event) => event.type === "run.started")) {
    let leaf: string | null = null;
    const open = new Map<string, RecordedSegment & { started: boolean }>();
    const pending = new Map<string, { segment: RecordedSegment; context: AgentMessage[] }>();
    for (const event of events) {
      const run = event.metadata?.runId as string | undefined;
      if (isEventOfType(event, "run.started")) {
        const { data } = event;
        const segment = { runId: data.runId, kind: data.kind, prompts: [], baseLeafId: leaf, calls: [], started: false };
        open.set(data.runId, segment);
        segments.push(segment);
        if (data.model && !model) model = { provider: data.model.provider, modelId: data.model.modelId };
      } else if (isEventOfType(event, "entry.appended")) {
        const { entry } = event.data;
        const segment = run === undefined ? undefined : open.get(run);
        const message = isKnownEntry(entry) && entry.type === "message" ? entry.message : undefined;
        if (segment && !segment.started && message && message.role !== "assistant" && message.role !== "toolResult") segment.prompts.push(message);
        leaf = entry.id;
      } else if (isEventOfType(event, "leaf.moved")) leaf = event.data.leafId;
      else if (isEventOfType(event, "message.started") && event.data.role === "assistant" && run !== undefined && open.has(run)) {
        const segment = open.get(run)!;
        segment.started = true;
        pending.set(event.data.messageId, { segment, context: context(leaf) });
      } else if (isEventOfType(event, "message.ended") && pending.has(event.data.messageId)) {
        const { data } = event;
        const { segment, context: sent } = pending.get(data.messageId)!;
        pending.delete(data.messageId);
        const message = messageOf(session, data.entryId);
        const { answer, summary } =
          message?.role === "assistant" ? answerOf(message) : { answer: errorOf(data.errorMessage), summary: `error (retried): ${data.errorMessage ?? ""}` };
        segment.calls.push({ runId: segment.runId, context: sent, answer, summary });
      }
    }
    for (const segment of segments) delete (segment as Partial<{ started: boolean }>).started;
  } else {
    for (const entry of session.view.getBranch()) {
      const message = messageOfEntry(entry);
      if (message?.role === "user") segments.push({ kind: "prompt", prompts: [message], baseLeafId: entry.parentId, calls: [] });
      else if (message?.role === "assistant" && segments.length) {
        model ??= { provider: message.provider, modelId: message.model };
        segments.at(-1)!.calls.push({ context: context(entry.parentId), ...answerOf(message) });
      }
    }
  }
  const selected = runId === undefined ? segments : segments.filter((segment) => segment.runId === runId);
  if (runId !== undefined && !selected.length) {
    throw new ReplayError("REPLAY_RUN_NOT_FOUND", `Session ${sessionId} has no run ${runId}${segments.some((segment) => segment.runId) ? ` (its runs: ${segments.map((segment) => segment.runId).join(", ")})` : " (it holds no run events: imported sessions replay as a whole)"}.`, { details: { sessionId, runId } });
  }
  const withCalls = selected.filter((segment) => segment.calls.length > 0);
  if (!withCalls.length) throw new ReplayError("REPLAY_NOTHING_RECORDED", `Session ${sessionId}${runId ? ` run ${runId}` : ""} holds no model call to replay.`, { details: { sessionId, runId } });
  return { sessionId, session, model: model ?? { provider: "arbor.replay", modelId: "replay" }, segments: withCalls, toolResults };
}
