/**
 * The run machine's named implementations, as one `setup()`: its default actors (`modelCall` unprovided, `tool`, hooks that change nothing), its
 * named actions (the tool batch's spawn / prepare / execute / settle / skip, the pure steps of `run-steps.ts`, `drain`, `markAborted`, and `record`,
 * which does nothing until provided), guards and delays. `run.machine.ts` builds the state chart on it; `run-logic.ts` binds the keyed actors and
 * `record` to real dependencies.
 */
import { assign, enqueueActions, fromCallback, fromPromise, sendParent, setup } from "xstate";
import type { AgentMessage, AssistantMessage } from "../core/messages.ts";
import type { NewEvent } from "../store/event-log.ts";
import { toolCallsOf } from "./loop-messages.ts";
import { isBatchSettled, isUnsettled, markExecuting, markPrepared, markSpawned, readyToExecute } from "./run-batch.ts";
import { closeGated, markGated, settleInBatch, skipUnspawned } from "./run-batch-settle.ts";
import { runEvent } from "./run-records.ts";
import { BATCH_MODES } from "./batch-modes.ts";
import { onLengthStop, onOverflowGiveUp, stepOnEntry, type EntryState, scope } from "./run-steps.ts";
import type { ModelCallInput, RunContext, RunEvent, RunInput, RunOutput, RunParentEvent } from "./run-types.ts";
import { toolExecutionMachine } from "./tool-execution.machine.ts";
import type { ToolSettled } from "./tool-execution-types.ts";

/** The `record` action by name (resolved against the provided implementation at run time). */
export const recordAction = (events: NewEvent[]) => ({ type: "record", params: { events } }) as never;

const unprovidedCallback = fromCallback<RunEvent, ModelCallInput>(() => {
  throw new Error('Actor "modelCall" is not provided.');
});

/** The run machine's implementations by name (see the module contract); `runMachine` is its chart. */
export const runSetup = setup({
  types: {
    context: {} as RunContext,
    events: {} as RunEvent,
    input: {} as RunInput,
    output: {} as RunOutput,
  },
  actors: {
    modelCall: unprovidedCallback,
    tool: toolExecutionMachine,
    betweenTurns: fromPromise<AgentMessage[] | undefined, { messages: AgentMessage[]; lastAssistant: AssistantMessage }>(
      async () => undefined,
    ),
    contextOverflow: fromPromise<AgentMessage[] | undefined, { messages: AgentMessage[] }>(async () => undefined),
  },
  actions: {
    /** The writer's inlet: records events in order. Provided by the agent. */
    record: (_, _params: { events: NewEvent[] }) => {},
    settleTool: enqueueActions(({ context, event, enqueue }) => {
      if (!event.type.startsWith("xstate.done.actor.tool:") || !context.batch) return;
      const settled = (event as { output: ToolSettled }).output;
      if (!isUnsettled(context.batch, settled.toolCallId)) return;
      const folded = settled.gate ? markGated(context.batch, settled, scope(context)) : settleInBatch(context.batch, settled, scope(context));
      enqueue.assign({ batch: folded.batch });
      if (folded.events.length) enqueue(recordAction(folded.events));
    }),
    notePrepared: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "TOOL.PREPARED" || !context.batch || context.stopping) return;
      const batch = context.batch;
      const next = markPrepared(batch, event.toolCallId);
      if (next === batch) return;
      if (BATCH_MODES[batch.mode].executeOnPrepared) enqueue.sendTo(`tool:${event.toolCallId}`, { type: "EXECUTE" });
      enqueue.assign({ batch: next });
    }),
    spawnNextTool: enqueueActions(({ context, enqueue }) => {
      const batch = context.batch!;
      const call = batch.calls[batch.spawnedCount];
      // An approved call of a resume run: its tool.started was logged by the run that asked;
      // a replayed call of a continued run: by the run's previous owner.
      const decision = context.input.resume?.decisions[call.id];
      const approved = (decision?.status === "approved" || decision?.status === "replay") && decision.inputDigest ? { inputDigest: decision.inputDigest } : undefined;
      const logged = decision?.status === "approved" || decision?.status === "replay";
      enqueue.assign({ batch: markSpawned(batch) });
      if (!logged) enqueue(recordAction([runEvent(scope(context), "tool.started", { toolCallId: call.id, toolName: call.name })]));
      enqueue.spawnChild("tool", { id: `tool:${call.id}`, input: { toolCall: call, assistantMessage: batch.assistant, ...(approved ? { approved } : {}) } });
    }),
    executePrepared: enqueueActions(({ context, enqueue }) => {
      const batch = context.batch!;
      const ids = readyToExecute(batch);
      if (!ids.length || context.stopping) return;
      for (const id of ids) enqueue.sendTo(`tool:${id}`, { type: "EXECUTE" });
      enqueue.assign({ batch: markExecuting(batch, ids) });
    }),
    skipUnspawned: enqueueActions(({ context, enqueue }) => {
      const skipped = skipUnspawned(context.batch!, scope(context), context.stopping?.reason);
      // An aborted run closes every call that waits for approval with a result.
      const closed = closeGated(skipped.batch, scope(context), context.stopping?.reason);
      const events = [...skipped.events, ...closed.events];
      if (!events.length) return;
      enqueue.assign({ batch: closed.batch });
      enqueue(recordAction(events));
    }),
    refuseLengthToolCalls: enqueueActions(({ context, enqueue }) => {
      const step = onLengthStop(context);
      enqueue.assign(step.update);
      enqueue(recordAction(step.events));
    }),
    persistLastError: enqueueActions(({ context, enqueue }) => {
      const step = onOverflowGiveUp(context);
      enqueue.assign(step.update);
      if (step.events.length) enqueue(recordAction(step.events));
    }),
    /** Applies the pure step of the state being entered (`stepOnEntry` in run-steps.ts). */
    applyStep: enqueueActions(({ context, enqueue }, params: { state: EntryState }) => {
      const step = stepOnEntry(context, params.state);
      if (!step) return;
      enqueue.assign(step.update);
      if (step.events.length) enqueue(recordAction(step.events));
    }),
    /** Marks the run aborted, unless it is already stopping (an interrupt keeps its status). */
    markAborted: assign({
      stopping: ({ context }, params: { reason?: string }) => context.stopping ?? { status: "aborted" as const, reason: params.reason },
    }),
    drain: sendParent(({ context }, params: { queue: "steering" | "followUp"; initial?: boolean }): RunParentEvent => ({
      type: "QUEUE.DRAIN",
      queue: params.queue,
      runId: context.input.runId,
      // Before the first model call, or after a turn whose tool calls need another one.
      continuing: params.initial === true || (params.queue === "steering" && context.hasMoreToolCalls),
    })),
  },
  guards: {
    isAborting: ({ context }) => context.stopping !== undefined,
    isInterrupting: ({ context }) => context.stopping?.status === "interrupted",
    isOverBudget: ({ context }) => context.stopping?.status === "budget_exceeded",
    hasToolCalls: ({ context }) => toolCallsOf(context.assistant).length > 0,
    isLengthStop: ({ context }) => context.assistant?.stopReason === "length",
    shouldContinueTurns: ({ context }) => context.hasMoreToolCalls || context.pending.length > 0,
    hasPending: ({ context }) => context.pending.length > 0,
    hasBetweenTurns: ({ context }) => context.input.hasBetweenTurns === true,
    batchSettled: ({ context }) => context.batch !== undefined && isBatchSettled(context.batch),
    hasGated: ({ context }) => context.batch !== undefined && context.batch.gatedCount > 0,
  },
  delays: {
    retryDelay: ({ context }) => context.retryDelayMs,
  },
});
