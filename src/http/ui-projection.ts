/**
 * The log-to-UI projection: {@link projectRunEvent} is a pure reducer folding one run's logged events into AI SDK UI message stream chunks, so a live
 * stream and a replay from the log are the same chunks. One run is one UI message (id = run id), each turn a step, every id from the log; committed
 * entries close what deltas opened (and complete deleted deltas); run endings map to `finish`/`error`/`abort`; approvals, steering messages and
 * retried attempts (`reset-step`) have their own parts; a `resume` run, or a run another process continued, goes on in the same message. A run whose
 * session was deleted before it ended closes with `error` and `finish` ({@link projectSessionDeleted}).
 */
import type { UIMessageChunk } from "ai";
import type { AssistantMessage, ToolResultMessage, UserMessage } from "../core/messages.ts";
import type { ArborEvent } from "../store/events/catalogue.ts";
import { skipsEvents } from "../store/events/event-families.ts";
import { ignoreUnknown } from "../core/exhaustive.ts";

/** Events that give no UI message chunk of a run in progress. */
const uiSkips = skipsEvents(["session", "leaf", "queue", "retry", "hook", "agent", "summary", "workflow", "step", "workspace", "memory", "task", "control", "elicitation", "budget"], ["run.started", "message.started", "tool.started", "tool.updated", "approval.ended"]);

/** The projection's state between events. Treat as opaque; never mutated by the reducer. */
export interface RunProjectionState {
  /** The run followed (undefined until its `run.started`). */
  readonly runId: string | undefined;
  /** True once the run's `run.ended` was projected: no chunk follows. */
  readonly ended: boolean;
  /** Open text / reasoning part ids with their kind. */
  readonly openParts: Readonly<Record<string, "text" | "reasoning">>;
  /** The text sent so far by the deltas of each open text / reasoning part. */
  readonly streamedText: Readonly<Record<string, string>>;
  /** Tool calls whose `tool-input-start` was sent, with their state. */
  readonly toolCalls: Readonly<Record<string, { toolName: string; available: boolean }>>;
  /** Assistant entries committed but not yet closed by their `message.ended`, by entry id. */
  readonly pendingEntries: Readonly<Record<string, AssistantMessage>>;
  readonly stepOpen: boolean;
  /** The UI message id: the first run's id of a chain of runs resumed after approvals. */
  readonly messageId: string | undefined;
  /** The run ended `suspended` (waiting for approvals): a `resume` run continues the same message. */
  readonly suspended: boolean;
  /** The next `turn.started` continues the previous step (a resume's first turn only delivers the decided calls' results). */
  readonly continueStep: boolean;
  /** Tool calls whose `tool.ended` outcome was `denied`. */
  readonly denied: Readonly<Record<string, true>>;
  readonly lastStopReason: string | undefined;
  readonly lastError: string | undefined;
  /** The run's prompt (its first user message) is still to come: a `prompt` run until it is logged. */
  readonly promptPending: boolean;
  /** The open step holds parts a `reset-step` must not drop (a continued step, a steering message). */
  readonly stepKeeps: boolean;
  /** Tool calls whose `tool-approval-request` was sent. */
  readonly approvalRequested: Readonly<Record<string, true>>;
  /** The partial reply a takeover (`run.resumed`) closed: discarded like a retried attempt. */
  readonly discardedEntryId?: string;
}

/** One step of the fold. */
export interface RunProjectionStep {
  state: RunProjectionState;
  chunks: UIMessageChunk[];
}

/**
 * The state before any event.
 * @example
 * const state = initialRunProjection();
 */
export function initialRunProjection(): RunProjectionState {
  return {
    runId: undefined,
    ended: false,
    openParts: {},
    streamedText: {},
    toolCalls: {},
    pendingEntries: {},
    stepOpen: false,
    messageId: undefined,
    suspended: false,
    continueStep: false,
    denied: {},
    lastStopReason: undefined,
    lastError: undefined,
    promptPending: false,
    stepKeeps: false,
    approvalRequested: {},
  };
}

/** A user message's UI parts: its text, and each image as a `data:` URL file part. */
export function userUIParts(message: UserMessage): ({ type: "text"; text: string } | { type: "file"; mediaType: string; url: string })[] {
  if (typeof message.content === "string") return [{ type: "text", text: message.content }];
  return message.content.map((block) =>
    block.type === "text" ? { type: "text" as const, text: block.text } : { type: "file" as const, mediaType: block.mimeType, url: `data:${block.mimeType};base64,${block.data}` },
  );
}

const FINISH_REASONS: Record<string, "stop" | "length" | "tool-calls" | "error" | "other"> = {
  stop: "stop",
  length: "length",
  toolUse: "tool-calls",
  error: "error",
  aborted: "other",
};

const textOf = (content: ToolResultMessage["content"]) =>
  content.map((block) => (block.type === "text" ? block.text : "")).join("");

/**
 * Folds one event into the run's chunks (see the module contract). Pure: `state` is not
 * changed; events of other runs, before the run and after its end give no chunk.
 * @example
 * const { state: next, chunks } = projectRunEvent(state, event);
 */
export function projectRunEvent(state: RunProjectionState, event: ArborEvent): RunProjectionStep {
  if (state.ended) {
    // A run resumed after approval decisions continues the suspended run's message.
    if (state.suspended && event.type === "run.started" && event.data.kind === "resume") {
      return { state: { ...state, runId: event.data.runId, ended: false, suspended: false, continueStep: true, promptPending: false }, chunks: [] };
    }
    // The decisions that let it go on: each on its call's part.
    if (state.suspended && event.type === "approval.ended" && event.data.status !== "cancelled" && state.approvalRequested[event.data.toolCallId]) {
      const { toolCallId, status, reason } = event.data;
      return { state, chunks: [{ type: "tool-approval-response", approvalId: toolCallId, approved: status === "approved", ...(reason !== undefined ? { reason } : {}) }] };
    }
    return { state, chunks: [] };
  }
  if (state.runId === undefined) {
    if (event.type !== "run.started") return { state, chunks: [] };
    return {
      state: { ...state, runId: event.data.runId, messageId: event.data.runId, promptPending: event.data.kind === "prompt" },
      chunks: [{ type: "start", messageId: event.data.runId }],
    };
  }
  if (event.metadata.runId !== state.runId) return { state, chunks: [] };

  const chunks: UIMessageChunk[] = [];
  const openParts = { ...state.openParts };
  const streamedText = { ...state.streamedText };
  const toolCalls = { ...state.toolCalls };
  let next: RunProjectionState = state;
  const closePart = (id: string) => {
    const kind = openParts[id];
    if (kind === undefined) return;
    chunks.push(partEnd(id, kind));
    delete openParts[id];
    delete streamedText[id];
  };
  const closeAll = (prefix: string) => {
    for (const id of Object.keys(openParts)) if (id.startsWith(prefix)) closePart(id);
  };

  if (uiSkips(event)) return { state: next, chunks };
  switch (event.type) {
    case "turn.started":
      if (!state.continueStep) chunks.push({ type: "start-step" });
      next = { ...state, stepOpen: true, continueStep: false, stepKeeps: state.continueStep };
      break;
    case "run.resumed":
      next = { ...state, discardedEntryId: event.data.closedMessageEntryId };
      break;
    case "tool.ended":
      if (event.data.outcome === "denied") next = { ...state, denied: { ...state.denied, [event.data.toolCallId]: true } };
      break;
    case "message.delta": {
      const { messageId, contentIndex, kind, delta } = event.data;
      const id = `${messageId}:${contentIndex}`;
      if (kind === "toolCall") {
        const toolCallId = event.data.toolCallId;
        if (toolCallId === undefined) break;
        if (toolCalls[toolCallId] === undefined) {
          toolCalls[toolCallId] = { toolName: event.data.toolName ?? "unknown", available: false };
          chunks.push({ type: "tool-input-start", toolCallId, toolName: toolCalls[toolCallId].toolName });
        }
        if (delta !== "") chunks.push({ type: "tool-input-delta", toolCallId, inputTextDelta: delta });
      } else {
        const partKind = kind === "text" ? "text" : "reasoning";
        if (openParts[id] === undefined) {
          openParts[id] = partKind;
          chunks.push(partKind === "text" ? { type: "text-start", id } : { type: "reasoning-start", id });
        }
        chunks.push(partKind === "text" ? { type: "text-delta", id, delta } : { type: "reasoning-delta", id, delta });
        streamedText[id] = (streamedText[id] ?? "") + delta;
      }
      next = { ...state, openParts, streamedText, toolCalls };
      break;
    }
    case "entry.appended": {
      const entry = event.data.entry;
      if (entry.type !== "message") break;
      const message = (entry as { message: { role: string } }).message;
      if (message.role === "assistant") {
        next = { ...state, pendingEntries: { ...state.pendingEntries, [entry.id]: message as AssistantMessage } };
      } else if (message.role === "user") {
        // The run's own prompt is the user message that precedes the reply; any later one was steered in.
        if (state.promptPending) next = { ...state, promptPending: false };
        else {
          chunks.push({ type: "steering-message", id: entry.id, parts: userUIParts(message as UserMessage) });
          next = { ...state, stepKeeps: state.stepOpen };
        }
      } else if (message.role === "toolResult") {
        const result = message as ToolResultMessage;
        // A result for a call this message never showed (a synthetic one of an earlier run) has no part to land on.
        if (toolCalls[result.toolCallId] === undefined) break;
        if (state.denied[result.toolCallId]) chunks.push({ type: "tool-output-denied", toolCallId: result.toolCallId });
        else if (result.isError) chunks.push({ type: "tool-output-error", toolCallId: result.toolCallId, errorText: textOf(result.content) });
        else {
          const output = result.details === undefined ? { content: result.content } : { content: result.content, details: result.details };
          chunks.push({ type: "tool-output-available", toolCallId: result.toolCallId, output });
        }
      }
      break;
    }
    case "message.ended": {
      if (event.data.role !== "assistant") break;
      const { messageId } = event.data;
      const prefix = `${messageId}:`;
      const message = event.data.entryId === undefined || event.data.entryId === state.discardedEntryId ? undefined : state.pendingEntries[event.data.entryId];
      const pendingEntries = { ...state.pendingEntries };
      if (event.data.entryId !== undefined) delete pendingEntries[event.data.entryId];
      if (message === undefined) {
        // Discarded (retried) or never committed.
        const unavailable = Object.entries(toolCalls).filter(([, call]) => !call.available);
        const opened = Object.keys(openParts).filter((id) => id.startsWith(prefix));
        if (state.stepOpen && !state.stepKeeps && (opened.length > 0 || unavailable.length > 0)) {
          // The step holds only this attempt: v7's reset-step drops its parts on the client.
          chunks.push({ type: "reset-step" });
          for (const id of opened) {
            delete openParts[id];
            delete streamedText[id];
          }
          for (const [toolCallId] of unavailable) delete toolCalls[toolCallId];
        } else {
          // Close what it opened, keeping the rest of the step.
          closeAll(prefix);
          for (const [toolCallId, call] of unavailable) {
            chunks.push({ type: "tool-input-error", toolCallId, toolName: call.toolName, input: undefined, errorText: event.data.errorMessage ?? "The model call was retried." });
            toolCalls[toolCallId] = { ...call, available: true };
          }
        }
      } else {
        message.content.forEach((block, index) => {
          const id = `${prefix}${index}`;
          if (block.type === "text" || block.type === "thinking") {
            if (block.type === "thinking" && block.redacted && openParts[id] === undefined) return;
            const text = block.type === "text" ? block.text : block.thinking;
            const kind = block.type === "text" ? "text" : "reasoning";
            if (openParts[id] === undefined) {
              if (text === "") return;
              openParts[id] = kind;
              chunks.push(kind === "text" ? { type: "text-start", id } : { type: "reasoning-start", id });
              chunks.push(kind === "text" ? { type: "text-delta", id, delta: text } : { type: "reasoning-delta", id, delta: text });
            } else {
              // Deltas this reader never saw (deleted by the log's retention once the message ended): send the rest of the text.
              const sent = streamedText[id] ?? "";
              const rest = text.length > sent.length && text.startsWith(sent) ? text.slice(sent.length) : "";
              if (rest !== "") chunks.push(openParts[id] === "text" ? { type: "text-delta", id, delta: rest } : { type: "reasoning-delta", id, delta: rest });
            }
            closePart(id);
          } else if (block.type === "toolCall") {
            if (toolCalls[block.id] === undefined) chunks.push({ type: "tool-input-start", toolCallId: block.id, toolName: block.name });
            if (block.argumentsError !== undefined) chunks.push({ type: "tool-input-error", toolCallId: block.id, toolName: block.name, input: block.argumentsError, errorText: `The arguments are not a JSON object: ${block.argumentsError}` });
            else chunks.push({ type: "tool-input-available", toolCallId: block.id, toolName: block.name, input: block.arguments });
            toolCalls[block.id] = { toolName: block.name, available: true };
          }
        });
        closeAll(prefix);
      }
      next = {
        ...state,
        openParts,
        streamedText,
        toolCalls,
        pendingEntries,
        lastStopReason: event.data.stopReason ?? state.lastStopReason,
        lastError: event.data.stopReason === "error" ? (event.data.errorMessage ?? "The model call failed.") : state.lastError,
      };
      break;
    }
    case "approval.requested":
      // The approval id is the tool call id: one decision per call (the approval log's own key).
      if (toolCalls[event.data.toolCallId] !== undefined) {
        chunks.push({ type: "tool-approval-request", approvalId: event.data.toolCallId, toolCallId: event.data.toolCallId });
        next = { ...state, approvalRequested: { ...state.approvalRequested, [event.data.toolCallId]: true } };
      }
      break;
    case "turn.ended":
      if (state.stepOpen) chunks.push({ type: "finish-step" });
      next = { ...state, stepOpen: false };
      break;
    case "run.ended": {
      const closed = closeRun(state);
      chunks.push(...closed.chunks);
      const ended = event.data;
      if (ended.status === "done") {
        const reason = FINISH_REASONS[state.lastStopReason ?? "stop"] ?? "other";
        if (reason === "error") chunks.push({ type: "error", errorText: state.lastError ?? "The model call failed." });
        chunks.push({ type: "finish", finishReason: reason });
      } else if (ended.status === "failed") {
        chunks.push({ type: "error", errorText: ended.error });
        chunks.push({ type: "finish", finishReason: "error" });
      } else if (ended.status === "budget_exceeded") {
        // A budget stopped the run (docs/budgets.md): the sentence names the scope, limit and use.
        chunks.push({ type: "error", errorText: ended.reason });
        chunks.push({ type: "finish", finishReason: "error" });
      } else if (ended.status === "suspended") {
        // Waiting for approval decisions: the message ends here with its approval requests shown.
        chunks.push({ type: "finish", finishReason: "tool-calls" });
        next = { ...closed.state, suspended: true };
        break;
      } else {
        chunks.push({ type: "abort", ...(ended.reason !== undefined ? { reason: ended.reason } : {}) });
      }
      next = closed.state;
      break;
    }
    default:
      ignoreUnknown(event);
  }
  return { state: next, chunks };
}

/**
 * The end of a run whose session was deleted before its `run.ended` (nothing more of the run is logged): its open text and reasoning parts and its
 * step close, then `error` (`errorText`) and `finish` (`error`), as a failed run ends. Pure; no chunk when the run already ended.
 */
export function projectSessionDeleted(state: RunProjectionState, errorText: string): RunProjectionStep {
  if (state.ended) return { state, chunks: [] };
  const closed = closeRun(state);
  return { state: closed.state, chunks: [...closed.chunks, { type: "error", errorText }, { type: "finish", finishReason: "error" }] };
}

/** The chunk that ends an open text or reasoning part. */
function partEnd(id: string, kind: "text" | "reasoning"): UIMessageChunk {
  return kind === "text" ? { type: "text-end", id } : { type: "reasoning-end", id };
}

/** How every run's message ends, whatever its status: its open parts end, then its step; the state is an ended run's. */
function closeRun(state: RunProjectionState): RunProjectionStep {
  const chunks = Object.entries(state.openParts).map(([id, kind]) => partEnd(id, kind));
  if (state.stepOpen) chunks.push({ type: "finish-step" });
  return { state: { ...state, openParts: {}, streamedText: {}, stepOpen: false, ended: true }, chunks };
}

/**
 * The chunks of a whole run (or of its beginning, for a run still going) from its events.
 * @example
 * const chunks = projectRun(await log.readStream(streamId, { fromVersion: runStartedVersion }));
 */
export function projectRun(events: Iterable<ArborEvent>): UIMessageChunk[] {
  let state = initialRunProjection();
  const chunks: UIMessageChunk[] = [];
  for (const event of events) {
    const step = projectRunEvent(state, event);
    state = step.state;
    chunks.push(...step.chunks);
  }
  return chunks;
}
