/**
 * The run actor: one prompt's (or continue's) agent loop, in pi's order: `starting` → `initialSteering` → `streaming` (`retrying`, `overflow`) →
 * `tools` → `turnEnding` → `steering` → `followUp` → `betweenTurns` → `turnStarting` → …; final `done` | `failed` | `aborted` | `interrupted` |
 * `budgetExceeded` | `suspended`. Events are recorded in transition order through `record`; no tool or model call starts after an abort; errors are
 * data (the output is a {@link RunOutput}); queues live in the parent (`QUEUE.DRAIN`). Side effects are provided by `agent.ts`.
 */
import { hostname } from "node:os";
import { assign, enqueueActions, raise } from "xstate";
import { budgetExceededMessage } from "../core/budget.ts";
import type { AgentMessage, AssistantMessage } from "../core/messages.ts";
import type { ModelStreamEvent } from "../core/model-stream.ts";
import { toolCallsOf } from "./loop-messages.ts";
import { canSpawnNext, initialBatch, unsettledCalls } from "./run-batch.ts";
import { refuseOverCap, settleDecided } from "./run-batch-settle.ts";
import { createMessageId, runEvent } from "./run-records.ts";
import { injectMessages, onModelDone, onModelError, onStreamAbort, onStreamEvent, scope } from "./run-steps.ts";
import type { RunOutput } from "./run-types.ts";
import { recordAction, runSetup } from "./run-setup.ts";

export type { ModelCallInput, RunEvent, RunInput, RunOutput } from "./run-types.ts";

/** True when `assistant` is the message a resume run's decisions were made on (same object, or the same calls). */
function isResumedMessage(assistant: AssistantMessage, resumed: AssistantMessage): boolean {
  if (assistant === resumed) return true;
  const ids = toolCallsOf(assistant).map((call) => call.id);
  const resumedIds = toolCallsOf(resumed).map((call) => call.id);
  return ids.length === resumedIds.length && ids.every((id, at) => id === resumedIds[at]);
}

/** The run machine (see the module contract); its named actions, guards and default actors are `runSetup`'s (`run-setup.ts`). */
export const runMachine = runSetup.createMachine({
  id: "run",
  context: ({ input }) => ({
    input,
    messages: [...input.messages],
    newMessages: [],
    pending: [],
    turnIndex: input.continuation?.turnIndex ?? 0,
    turnId: input.continuation?.turnId ?? `${input.runId}:0`,
    messageId: "",
    started: false,
    attempt: 0,
    retryDelayMs: 0,
    overflowTried: false,
    hasMoreToolCalls: false,
    ...(input.resume?.abort ? { stopping: { status: "aborted" as const, ...(input.resume.abort.reason ? { reason: input.resume.abort.reason } : {}) } } : {}),
  }),
  initial: "starting",
  on: {
    FAIL: {
      target: ".failed",
      actions: assign({ stopping: ({ event }) => ({ status: "failed" as const, reason: event.error, code: event.code }) }),
    },
    // An interrupt (a host shutting down) closes the run like an abort (every call gets a result, no model call follows) but ends it `interrupted`.
    INTERRUPT: {
      actions: [
        assign({ stopping: ({ context, event }) => context.stopping ?? { status: "interrupted" as const, reason: event.reason } }),
        raise(({ event }) => ({ type: "ABORT" as const, reason: event.reason })),
      ],
    },
    // A budget refused a call (`run-budget.ts`): logged, then closed like an abort (every call gets
    // a result, no model call follows), ending `budget_exceeded`. The first refusal wins.
    "BUDGET.EXCEEDED": {
      guard: ({ context }) => context.stopping === undefined,
      actions: enqueueActions(({ context, event, enqueue }) => {
        const reason = budgetExceededMessage(event.exceeded);
        enqueue.assign({ stopping: { status: "budget_exceeded", reason, budget: event.exceeded } });
        enqueue(recordAction([runEvent(scope(context), "budget.exceeded", { runId: context.input.runId, ...event.exceeded, call: event.call })]));
        enqueue.raise({ type: "ABORT", reason });
      }),
    },
  },
  states: {
    starting: {
      entry: { type: "applyStep", params: { state: "starting" } },
      always: [
        // A continued run re-enters where the log says it stopped (`continuation.ts`).
        { guard: ({ context }) => context.input.continuation?.at === "tools", target: "tools" },
        { guard: ({ context }) => context.input.continuation?.at === "streaming", target: "streaming" },
        { guard: ({ context }) => context.input.continuation?.at === "turnEnding", target: "turnEnding" },
        { guard: ({ context }) => context.input.continuation?.at === "steering", target: "steering" },
        { guard: ({ context }) => context.input.continuation?.at === "turnStarting", target: "turnStarting" },
        { guard: ({ context }) => context.input.resume !== undefined, target: "tools" },
        { guard: ({ context }) => context.input.skipInitialSteering === true, target: "streaming" },
        { target: "initialSteering" },
      ],
    },
    initialSteering: {
      entry: { type: "drain", params: { queue: "steering", initial: true } },
      on: {
        "QUEUE.DRAINED": {
          target: "streaming",
          actions: enqueueActions(({ context, event, enqueue }) => {
            const injected = injectMessages(context, event.messages);
            enqueue.assign(injected.update);
            enqueue({ type: "record", params: { events: injected.events } });
          }),
        },
        ABORT: { target: "turnEnding", actions: { type: "markAborted", params: ({ event }) => ({ reason: event.reason }) } },
      },
    },
    streaming: {
      entry: assign({ messageId: () => createMessageId(), started: false, partial: undefined, assistant: undefined }),
      invoke: {
        id: "model",
        src: "modelCall",
        input: ({ context }) => ({ runId: context.input.runId, messages: context.messages, messageId: context.messageId, turnId: context.turnId }),
      },
      on: {
        "MODEL.EVENT": [
          {
            guard: ({ event }) => event.event.type === "done",
            target: "assistantDone",
            actions: enqueueActions(({ context, event, enqueue }) => {
              const step = onModelDone(context, (event.event as { message: AssistantMessage }).message);
              enqueue.assign(step.update);
              enqueue(recordAction(step.events));
            }),
          },
          {
            guard: ({ event }) => event.event.type === "error",
            target: "modelFailed",
            actions: enqueueActions(({ context, event, enqueue }) => {
              const step = onModelError(context, event.event as Extract<ModelStreamEvent, { type: "error" }>);
              enqueue.assign(step.update);
              enqueue(recordAction(step.events));
            }),
          },
          {
            actions: enqueueActions(({ context, event, enqueue }) => {
              const step = onStreamEvent(context, event.event);
              if (!step) return;
              enqueue.assign(step.update);
              if (step.events.length) enqueue(recordAction(step.events));
            }),
          },
        ],
        ABORT: {
          target: "turnEnding",
          actions: enqueueActions(({ context, event, enqueue }) => {
            const step = onStreamAbort(context, event.reason);
            enqueue.assign(step.update);
            enqueue(recordAction(step.events));
          }),
        },
      },
    },
    modelFailed: {
      always: [
        { guard: ({ context }) => context.retryDelayMs >= 0 && context.stopping === undefined, target: "retrying" },
        { guard: ({ context }) => context.retryDelayMs === -1, target: "overflow" },
        { target: "turnEnding" },
      ],
    },
    retrying: {
      after: {
        retryDelay: {
          target: "streaming",
          actions: enqueueActions(({ context, enqueue }) => {
            enqueue({ type: "record", params: { events: [runEvent(scope(context), "retry.started", { attempt: context.attempt })] } });
          }),
        },
      },
      on: {
        ABORT: {
          target: "turnEnding",
          actions: enqueueActions(({ context, event, enqueue }) => {
            enqueue.assign({ stopping: context.stopping ?? { status: "aborted", reason: event.reason } });
            enqueue({
              type: "record",
              params: { events: [runEvent(scope(context), "retry.ended", { attempt: context.attempt, success: false, error: "Retry cancelled" })] },
            });
          }),
        },
      },
    },
    overflow: {
      invoke: {
        src: "contextOverflow",
        input: ({ context }) => ({ messages: context.messages }),
        onDone: [
          {
            guard: ({ event }) => Array.isArray(event.output),
            target: "streaming",
            actions: assign({ messages: ({ event }) => event.output as AgentMessage[] }),
          },
          { target: "turnEnding", actions: "persistLastError" },
        ],
        onError: { target: "turnEnding", actions: "persistLastError" },
      },
      on: {
        ABORT: { target: "turnEnding", actions: { type: "markAborted", params: ({ event }) => ({ reason: event.reason }) } },
      },
    },
    assistantDone: {
      always: [
        { guard: "isLengthStop", target: "turnEnding", actions: "refuseLengthToolCalls" },
        { guard: "hasToolCalls", target: "tools" },
        { target: "turnEnding", actions: assign({ hasMoreToolCalls: false }) },
      ],
    },
    tools: {
      entry: enqueueActions(({ context, enqueue }) => {
        // A resume run's decisions belong to the batch of the message they were made on (its first
        // batch); a later assistant message of the same run is a batch like any other.
        const resume = context.input.resume && isResumedMessage(context.assistant!, context.input.resume.assistant) ? context.input.resume : undefined;
        const refused = refuseOverCap(initialBatch(context.assistant!, context.input, resume?.callIds), scope(context));
        const decided = resume ? settleDecided(refused.batch, resume.decisions, scope(context)) : { batch: refused.batch, events: [] };
        enqueue.assign({ batch: decided.batch });
        const events = [...refused.events, ...decided.events];
        if (events.length) enqueue(recordAction(events));
      }),
      initial: "next",
      on: {
        "TOOL.UPDATED": {
          actions: enqueueActions(({ context, event, enqueue }) => {
            enqueue({
              type: "record",
              params: {
                events: [
                  runEvent(scope(context), "tool.updated", {
                    toolCallId: event.toolCallId,
                    toolName: event.toolName,
                    ...(event.process ? { process: { ...event.process, host: event.process.host ?? hostname() } } : {}),
                  }),
                ],
              },
            });
          }),
        },
        ABORT: {
          target: ".next",
          actions: enqueueActions(({ context, event, enqueue }) => {
            const batch = context.batch!;
            enqueue.assign({ stopping: context.stopping ?? { status: "aborted", reason: event.reason } });
            for (const id of unsettledCalls(batch)) enqueue.sendTo(`tool:${id}`, { type: "ABORT", reason: event.reason });
          }),
        },
      },
      states: {
        next: {
          always: [
            { guard: "batchSettled", target: "#run.toolsDone" },
            { guard: "isAborting", target: "waiting", actions: "skipUnspawned" },
            { guard: ({ context }) => canSpawnNext(context.batch!), target: "waiting", actions: "spawnNextTool" },
            { target: "waiting", actions: "executePrepared" },
          ],
        },
        waiting: {
          always: [{ guard: "batchSettled", target: "#run.toolsDone" }],
          on: {
            "TOOL.PREPARED": { target: "next", actions: "notePrepared" },
            "xstate.done.actor.*": { target: "next", actions: "settleTool" },
          },
        },
      },
    },
    toolsDone: {
      entry: { type: "applyStep", params: { state: "toolsDone" } },
      always: "turnEnding",
    },
    turnEnding: {
      entry: { type: "applyStep", params: { state: "turnEnding" } },
      always: [
        { guard: "isInterrupting", target: "interrupted" },
        { guard: "isOverBudget", target: "budgetExceeded" },
        { guard: ({ context }) => context.stopping?.status === "aborted", target: "aborted" },
        { guard: ({ context }) => context.stopping?.status === "failed", target: "failed" },
        { guard: "hasGated", target: "suspended" },
        { target: "steering" },
      ],
    },
    steering: {
      entry: { type: "drain", params: { queue: "steering" } },
      on: {
        "QUEUE.DRAINED": [
          { guard: ({ event }) => event.messages.length > 0, target: "betweenTurns", actions: assign({ pending: ({ event }) => event.messages }) },
          { guard: ({ context }) => context.hasMoreToolCalls, target: "betweenTurns", actions: assign({ pending: [] }) },
          { target: "followUp" },
        ],
        ABORT: [{ guard: "isInterrupting", target: "interrupted" }, { guard: "isOverBudget", target: "budgetExceeded" }, { target: "aborted", actions: { type: "markAborted", params: ({ event }) => ({ reason: event.reason }) } }],
      },
    },
    followUp: {
      entry: { type: "drain", params: { queue: "followUp" } },
      on: {
        "QUEUE.DRAINED": [
          { guard: ({ event }) => event.messages.length > 0, target: "betweenTurns", actions: assign({ pending: ({ event }) => event.messages }) },
          { target: "done" },
        ],
        ABORT: [{ guard: "isInterrupting", target: "interrupted" }, { guard: "isOverBudget", target: "budgetExceeded" }, { target: "aborted", actions: { type: "markAborted", params: ({ event }) => ({ reason: event.reason }) } }],
      },
    },
    betweenTurns: {
      initial: "deciding",
      states: {
        deciding: { always: [{ guard: "hasBetweenTurns", target: "hook" }, { target: "#run.turnStarting" }] },
        hook: {
          invoke: {
            src: "betweenTurns",
            input: ({ context }) => ({ messages: context.messages, lastAssistant: context.lastAssistant! }),
            onDone: {
              target: "#run.turnStarting",
              actions: assign({ messages: ({ context, event }) => event.output ?? context.messages }),
            },
            onError: {
              target: "#run.failed",
              actions: assign({ stopping: ({ event }) => ({ status: "failed" as const, reason: `betweenTurns hook failed: ${String((event.error as Error)?.message ?? event.error)}` }) }),
            },
          },
        },
      },
      on: {
        ABORT: [{ guard: "isInterrupting", target: "interrupted" }, { guard: "isOverBudget", target: "budgetExceeded" }, { target: "aborted", actions: { type: "markAborted", params: ({ event }) => ({ reason: event.reason }) } }],
      },
    },
    turnStarting: {
      entry: { type: "applyStep", params: { state: "turnStarting" } },
      always: "streaming",
    },
    done: { type: "final", entry: { type: "applyStep", params: { state: "done" } } },
    failed: { type: "final", entry: { type: "applyStep", params: { state: "failed" } } },
    aborted: { type: "final", entry: { type: "applyStep", params: { state: "aborted" } } },
    interrupted: { type: "final", entry: { type: "applyStep", params: { state: "interrupted" } } },
    budgetExceeded: { type: "final", entry: { type: "applyStep", params: { state: "budget_exceeded" } } },
    suspended: { type: "final", entry: { type: "applyStep", params: { state: "suspended" } } },
  },
  output: ({ context }) => {
    const status = context.stopping?.status ?? (context.suspended ? "suspended" : "done");
    const output: RunOutput = { runId: context.input.runId, status, messages: context.newMessages, turns: context.turnIndex + 1 };
    if (context.suspended) output.pendingApprovals = context.suspended;
    if (context.lastAssistant) output.lastAssistant = context.lastAssistant;
    if (context.stopping?.reason && status !== "done") output.error = context.stopping.reason;
    if (context.stopping?.code) output.code = context.stopping.code;
    if (context.stopping?.budget) output.budget = context.stopping.budget;
    return output;
  },
});

