/**
 * The run actor's pure step functions: what a stream event, a finished or failed model call, or an abort does to the run's context and which
 * events it records. A retried attempt records `message.ended { discarded: true }` and never enters the context. Never throws. Its types are
 * `run-types.ts`.
 */
import { budgetExceededMessage } from "../core/budget.ts";
import { policyRecord } from "../core/run-policy.ts";
import type { AgentMessage, AssistantMessage } from "../core/messages.ts";
import type { ModelStreamEvent } from "../core/model-stream.ts";
import type { NewEvent } from "../store/event-log.ts";
import { abortedAssistant, emptyAssistant } from "./loop-messages.ts";
import { retryDecision } from "./loop-retry.ts";
import { gatedCalls, initialBatch } from "./run-batch.ts";
import { batchRecords, refuseLengthBatch } from "./run-batch-settle.ts";
import { currentRunOwner } from "./run-lease.ts";
import { assistantEnded, createEntryId, messageEntryEvent, messageRecords, runEvent, type RecordScope } from "./run-records.ts";
import type { RunContext } from "./run-types.ts";
import type { RunStatus } from "../core/vocabulary.ts";
import { assertNever } from "../core/exhaustive.ts";

/** What a step does: the context update and the events to record, in order. */
export interface RunStep {
  update: Partial<RunContext>;
  events: NewEvent[];
}

/** The correlation of events recorded now. */
export const scope = (context: RunContext) => ({ runId: context.input.runId, turnId: context.turnId });

/** Appends messages to the context and records them (pi's message_start/message_end). */
export function injectMessages(context: RunContext, messages: AgentMessage[]) {
  const events: NewEvent[] = [];
  for (const message of messages) events.push(...messageRecords(message, scope(context)).events);
  return {
    events,
    update: { messages: [...context.messages, ...messages], newMessages: [...context.newMessages, ...messages] },
  };
}


function startedIfNeeded(context: RunContext): NewEvent[] {
  return context.started ? [] : [runEvent(scope(context), "message.started", { messageId: context.messageId, role: "assistant" })];
}

/** A model call finished: the message is appended (entry + `message.ended` with usage). */
export function onModelDone(context: RunContext, message: AssistantMessage): RunStep {
  const entryId = createEntryId();
  const events = startedIfNeeded(context);
  events.push(messageEntryEvent(scope(context), message, entryId), assistantEnded(scope(context), context.messageId, message, entryId));
  if (context.attempt > 0) events.push(runEvent(scope(context), "retry.ended", { attempt: context.attempt, success: true }));
  return {
    events,
    update: {
      assistant: message,
      lastAssistant: message,
      started: true,
      attempt: 0,
      messages: [...context.messages, message],
      newMessages: [...context.newMessages, message],
    },
  };
}

/**
 * A model call failed: schedule a retry, go to overflow recovery (both discard the attempt's message), or append the error message and stop the run.
 */
export function onModelError(context: RunContext, failure: Extract<ModelStreamEvent, { type: "error" }>): RunStep {
  const message = failure.message;
  const events = startedIfNeeded(context);
  const attempt = context.attempt + 1;
  const decision = retryDecision(failure.error, attempt, context.input.retry);
  const overflow = failure.error.contextOverflow === true && context.input.hasOverflowHook === true && !context.overflowTried;
  const error = message.errorMessage ?? "error";
  if (decision.retry || overflow) {
    events.push(assistantEnded(scope(context), context.messageId, message, undefined));
    const update: Partial<RunContext> = { started: true, lastError: { message, error } };
    if (decision.retry) {
      events.push(
        runEvent(scope(context), "retry.scheduled", {
          attempt,
          delayMs: decision.delayMs,
          error,
          ...(failure.error.status === undefined ? {} : { status: failure.error.status }),
        }),
      );
      Object.assign(update, { attempt, retryDelayMs: decision.delayMs });
    } else {
      Object.assign(update, { overflowTried: true, retryDelayMs: -1 });
    }
    return { events, update };
  }
  const entryId = createEntryId();
  const final: AssistantMessage =
    // Say why it was not retried after retries, or when the server asked for too long a wait.
    message.errorMessage && (context.attempt > 0 || (failure.error.retryable && failure.error.retryAfterMs !== undefined))
      ? { ...message, errorMessage: `${message.errorMessage} (${decision.reason})` }
      : message;
  events.push(messageEntryEvent(scope(context), final, entryId), assistantEnded(scope(context), context.messageId, final, entryId));
  if (context.attempt > 0) {
    events.push(runEvent(scope(context), "retry.ended", { attempt: context.attempt, success: false, error: final.errorMessage ?? "error" }));
  }
  return {
    events,
    update: {
      started: true,
      assistant: final,
      lastAssistant: final,
      retryDelayMs: -2,
      messages: [...context.messages, final],
      newMessages: [...context.newMessages, final],
      stopping:
        final.stopReason === "aborted"
          ? { status: "aborted", reason: final.errorMessage }
          : { status: "failed", reason: final.errorMessage ?? "The model call failed." },
    },
  };
}

/** A non-terminal stream event: keeps the partial; deltas and tool-call starts record `message.delta`. Undefined without a partial. */
export function onStreamEvent(context: RunContext, streamEvent: ModelStreamEvent): RunStep | undefined {
  if (!("partial" in streamEvent)) return undefined;
  const events = startedIfNeeded(context);
  const delta = streamEventRecord(scope(context), context.messageId, streamEvent);
  if (delta) events.push(delta);
  return { events, update: { started: true, partial: streamEvent.partial } };
}

/**
 * The `message.delta` a non-terminal stream event records (a text, thinking or tool-call delta, or the start of a tool call), or undefined for the
 * events that record nothing (start, *-start of text and thinking, *-end). The run machine's {@link onStreamEvent} and the model-call actor's direct
 * path (`run-logic.ts`) both record through it.
 */
export function streamEventRecord(recordScope: RecordScope, messageId: string, streamEvent: ModelStreamEvent): NewEvent | undefined {
  if (streamEvent.type === "text-delta" || streamEvent.type === "thinking-delta") {
    return runEvent(recordScope, "message.delta", { messageId, contentIndex: streamEvent.contentIndex, kind: streamEvent.type === "text-delta" ? "text" : "thinking", delta: streamEvent.delta });
  }
  if (streamEvent.type === "toolcall-delta") {
    return runEvent(recordScope, "message.delta", { messageId, contentIndex: streamEvent.contentIndex, kind: "toolCall", delta: streamEvent.delta, toolCallId: streamEvent.id });
  }
  if (streamEvent.type === "toolcall-start") {
    return runEvent(recordScope, "message.delta", { messageId, contentIndex: streamEvent.contentIndex, kind: "toolCall", delta: "", toolCallId: streamEvent.id, toolName: streamEvent.name });
  }
  return undefined;
}

/** Abort during streaming: the partial message (or an empty one) is kept with stopReason aborted and appended; the run will end aborted. */
export function onStreamAbort(context: RunContext, reason: string | undefined): RunStep {
  const message = abortedAssistant(context.partial ?? emptyAssistant(context.input.model), reason);
  const entryId = createEntryId();
  const events = startedIfNeeded(context);
  events.push(messageEntryEvent(scope(context), message, entryId), assistantEnded(scope(context), context.messageId, message, entryId));
  if (context.attempt > 0) events.push(runEvent(scope(context), "retry.ended", { attempt: context.attempt, success: false, error: "Aborted" }));
  return {
    events,
    update: {
      assistant: message,
      lastAssistant: message,
      messages: [...context.messages, message],
      newMessages: [...context.newMessages, message],
      stopping: context.stopping ?? { status: "aborted", reason },
    },
  };
}

/**
 * The message of a `length`-stopped assistant: its tool calls are not run; each gets an error result saying its arguments may be truncated, and the
 * loop continues so the model sees them (pi upstream). A length stop with no tool call ends the run: there is nothing new for the model, and a prompt
 * ending in an assistant message is a prefill.
 */
export function onLengthStop(context: RunContext): RunStep {
  const folded = refuseLengthBatch(initialBatch(context.assistant!, context.input), scope(context));
  const { results, events, terminate } = batchRecords(folded.batch, scope(context));
  return {
    events: [...folded.events, ...events],
    update: {
      batch: folded.batch,
      messages: [...context.messages, ...results],
      newMessages: [...context.newMessages, ...results],
      hasMoreToolCalls: results.length > 0 && !terminate,
    },
  };
}

/** No overflow recovery: the overflowing attempt's error message is appended after all and the run fails. */
export function onOverflowGiveUp(context: RunContext): RunStep {
  const failure = context.lastError;
  if (!failure) return { events: [], update: {} };
  return {
    events: messageRecords(failure.message, scope(context)).events,
    update: {
      assistant: failure.message,
      lastAssistant: failure.message,
      messages: [...context.messages, failure.message],
      newMessages: [...context.newMessages, failure.message],
      stopping: context.stopping ?? { status: "failed", reason: failure.error },
    },
  };
}

/** States whose entry is a pure step. */
export type EntryState = "starting" | "toolsDone" | "turnEnding" | "turnStarting" | RunStatus;

/**
 * What entering `state` records and changes: run.started + turn 0 + the prompts (`starting`), the batch's results in call order (`toolsDone`),
 * `turn.ended`, the next turn with the pending messages (`turnStarting`), the terminal run event.
 */
export function stepOnEntry(context: RunContext, state: EntryState): RunStep | undefined {
  const runId = context.input.runId;
  switch (state) {
    case "starting": {
      const continuation = context.input.continuation;
      if (continuation) {
        const assistant = continuation.assistant;
        return { update: { hasMoreToolCalls: continuation.hasMoreToolCalls, ...(assistant ? { assistant, lastAssistant: assistant } : {}) }, events: [] };
      }
      const injected = injectMessages(context, context.input.prompts);
      const resume = context.input.resume;
      const policy = policyRecord(context.input.policy);
      return {
        update: resume ? { ...injected.update, assistant: resume.assistant } : injected.update,
        events: [
          // metadata.owner: the process running it, so another process leaves a live run alone (run-lease.ts).
          { ...runEvent({ runId }, "run.started", { runId, kind: context.input.kind, model: context.input.model, ...(policy ? { policy } : {}) }), metadata: { runId, owner: currentRunOwner() } },
          runEvent(scope(context), "turn.started", { runId, turnId: context.turnId, index: 0 }),
          ...injected.events,
        ],
      };
    }
    case "toolsDone": {
      const { results, events, terminate } = batchRecords(context.batch!, scope(context));
      return {
        events,
        update: { messages: [...context.messages, ...results], newMessages: [...context.newMessages, ...results], hasMoreToolCalls: !terminate },
      };
    }
    case "turnEnding": {
      const data = {
        runId,
        turnId: context.turnId,
        index: context.turnIndex,
        toolCallIds: context.batch?.calls.map((call) => call.id) ?? [],
        ...(context.assistant ? { stopReason: context.assistant.stopReason } : {}),
      };
      return { update: {}, events: [runEvent(scope(context), "turn.ended", data)] };
    }
    case "turnStarting": {
      const turnIndex = context.turnIndex + 1;
      const turnId = `${runId}:${turnIndex}`;
      const next = { ...context, turnIndex, turnId };
      const injected = injectMessages(next, context.pending);
      return {
        update: { turnIndex, turnId, pending: [], batch: undefined, assistant: undefined, hasMoreToolCalls: false, ...injected.update },
        events: [runEvent(scope(next), "turn.started", { runId, turnId, index: turnIndex }), ...injected.events],
      };
    }
    case "done":
      return { update: {}, events: [runEvent({ runId }, "run.ended", { runId, status: "done", turns: context.turnIndex + 1 })] };
    case "failed": {
      const error = context.stopping?.reason ?? "The run failed.";
      const code = context.stopping?.code;
      return { update: {}, events: [runEvent({ runId }, "run.ended", { runId, status: "failed", error, ...(code ? { code } : {}) })] };
    }
    case "aborted": {
      const reason = context.stopping?.reason;
      return { update: {}, events: [runEvent({ runId }, "run.ended", { runId, status: "aborted", ...(reason ? { reason } : {}) })] };
    }
    case "interrupted":
      return { update: {}, events: [runEvent({ runId }, "run.ended", { runId, status: "interrupted", reason: context.stopping?.reason ?? "interrupted" })] };
    case "budget_exceeded": {
      const budget = context.stopping!.budget!;
      const data = { runId, status: "budget_exceeded" as const, reason: context.stopping?.reason ?? budgetExceededMessage(budget), scope: budget.scope, limit: budget.limit };
      return { update: {}, events: [runEvent({ runId }, "run.ended", data)] };
    }
    case "suspended": {
      const pendingToolCallIds = context.batch ? gatedCalls(context.batch) : [];
      return { update: { suspended: pendingToolCallIds }, events: [runEvent({ runId }, "run.ended", { runId, status: "suspended", pendingToolCallIds })] };
    }
    default:
      return assertNever(state, "run state");
  }
}
