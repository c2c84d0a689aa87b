/**
 * The agent actor, i.e. the session actor: one per session with ONE operation slot (`idle` ⇄ `preparing` → `running` → `awaiting-approval`,
 * `idle` ⇄ `compacting` / `navigating`). It owns the steering, follow-up and passive queues (FIFO, each change logged as `queue.changed`) and the
 * settings; `PROMPT`/`CONTINUE`/`TAKEOVER`/`OPERATE` are accepted only in `idle` (callers check the slot and throw `SessionBusyError`). It holds the
 * run state (`lastError`, `deferred`, `finishing`) and tells `agent.ts` `runSettled`, `runRejected` and `runFinished` through XState `emit`.
 */
import { uuidv7 } from "../core/uuid-v7.ts";
import { assign, emit, enqueueActions, fromPromise, setup, type SnapshotFrom } from "xstate";
import type { AgentMessage } from "../core/messages.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { PreparedPrompt, QueueMode, RunOutcome } from "./agent-types.ts";
import { withSettings, type AgentSettings, type AgentSettingsInput } from "./agent-settings.ts";
import { runEvent } from "./run-records.ts";
import { runMachine, type RunInput, type RunOutput } from "./run.machine.ts";

/** Which queue. */
export type QueueName = "steering" | "followUp" | "passive";

/** Input of the agent actor. */
export interface AgentMachineInput {
  /** The model, tools, active tools and thinking level (`agent-settings.ts`); absent for a standalone slot (no agent). */
  settings?: AgentSettings;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  /** Queues restored from the log. */
  steering?: AgentMessage[];
  followUp?: AgentMessage[];
  passive?: AgentMessage[];
}

/** What a run request asks for: a prompt, a continue, a resume after approval decisions, or the takeover of an unfinished run from the log. */
export type RunRequestKind = RunKind | "takeover";

/** Input of the `prepareRun` actor. */
export interface PrepareRunInput {
  runId: string;
  /** `takeover`: continue the session's open run `runId` from the log (`continuation.ts`). */
  kind: RunRequestKind;
  /** `takeover` only: why (logged in `run.resumed`). */
  reason?: string;
  /** `resume` only: close every waiting call unrun and end the run aborted. */
  abort?: { reason?: string };
  prompts: AgentMessage[];
  /** Builds the prompt messages inside the slot (the harness's expansion and `beforeAgentStart`); replaces `prompts`. */
  prepare?: PrepareFn;
  /** `prompt` only: the messages held for the next prompt (they follow its messages). */
  nextTurn: AgentMessage[];
  steering: AgentMessage[];
  followUp: AgentMessage[];
  steeringMode: QueueMode;
  followUpMode: QueueMode;
}

/** Output of `prepareRun`: the run's input, and the queue messages it took. */
export interface PrepareRunOutput {
  input: RunInput;
  drained?: { queue: QueueName; count: number };
}

/** Events of the agent actor. */
export type AgentEvent =
  | { type: "PROMPT"; runId: string; prompts: AgentMessage[]; prepare?: PrepareFn }
  | { type: "CONTINUE"; runId: string }
  | { type: "TAKEOVER"; runId: string; reason?: string }
  | { type: "STEER"; message: AgentMessage; passive?: boolean; nextTurn?: boolean }
  | { type: "FOLLOW_UP"; message: AgentMessage }
  | { type: "CLEAR"; queue: QueueName | "all" }
  | { type: "SET_MODE"; queue: QueueName; mode: QueueMode }
  | { type: "ABORT"; reason?: string }
  | { type: "INTERRUPT"; reason: string }
  | { type: "WRITER.FAILED"; error: string; code?: string }
  | { type: "QUEUE.DRAIN"; queue: "steering" | "followUp"; runId: string; continuing?: boolean }
  | { type: "SETTINGS.SET"; change: Partial<AgentSettingsInput> }
  | { type: "OPERATE"; kind: SlotWork; operation: OperationInput }
  | { type: "APPROVAL.AWAIT" }
  | { type: "APPROVAL.CLEAR" }
  | { type: "SETTINGS.DEFER"; events: NewEvent[] }
  | { type: "RUN.FINISHED"; outcome: RunOutcome }
  | { type: "ERROR.SET"; error?: string };

/** What the slot's `compaction` / `navigation` actor runs: the work (never rejects; the caller's promise carries the result) and its abort. */
export interface OperationInput {
  controller: AbortController;
  run: (signal: AbortSignal) => Promise<void>;
}

/** What holds the session's operation slot: the agent machine's state. */
export type { SessionOperation } from "./session-slot.ts";
import type { SessionOperation, SlotWork } from "./session-slot.ts";
import type { RunKind } from "../core/vocabulary.ts";

/** Events the agent actor emits to `agent.ts`. */
export type AgentEmitted =
  | { type: "runSettled"; output: RunOutput }
  | { type: "runRejected"; runId: string; error: unknown }
  | { type: "runFinished"; outcome: RunOutcome };

interface AgentContext {
  settings?: AgentSettings;
  steering: AgentMessage[];
  followUp: AgentMessage[];
  /** Passive steering (ours): delivered only with a poll after which the run goes on anyway. */
  passive: AgentMessage[];
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  request?: { runId: string; kind: RunRequestKind; prompts: AgentMessage[]; prepare?: PrepareFn; nextTurn?: AgentMessage[]; abort?: { reason?: string }; reason?: string };
  /** Messages held for the next prompt (`steer(…, { delivery: "nextTurn" })`); not logged. */
  nextTurn: AgentMessage[];
  runInput?: RunInput;
  abortPending?: string | true;
  operation?: OperationInput;
  /** The last failed run's error (`getState().errorMessage`); cleared by a run that did not fail and by a reload. */
  lastError?: string;
  /** Entries (settings, labels, names) made while the slot was busy: recorded when it frees. */
  deferred: NewEvent[];
  /** Runs that ended and whose outcome is not delivered yet (`RUN.FINISHED`). */
  finishing: string[];
}

/** How many messages one poll takes from a queue. Source: pi. */
export function drainCount(queue: readonly AgentMessage[], mode: QueueMode): number {
  return mode === "all" ? queue.length : Math.min(1, queue.length);
}

const recordAction = (events: NewEvent[]) => ({ type: "record", params: { events } }) as never;

const queueChanged = (runId: string | undefined, queue: QueueName, action: "enqueued" | "dequeued" | "cleared", size: number, message?: AgentMessage) =>
  runEvent({ runId: runId ?? "none" }, "queue.changed", { queue, action, size, ...(message ? { message } : {}) });

/** Builds a prompt's messages inside the slot (`PromptOptions.prepare`). */
type PrepareFn = (nextTurn: AgentMessage[]) => Promise<AgentMessage[] | PreparedPrompt>;

/** What holds the operation slot in `snapshot` (the machine's top-level state). */
export function operationOf(snapshot: { value: unknown }): SessionOperation {
  return snapshot.value as SessionOperation;
}

/** The agent machine (see the module contract). */
const runOperation = fromPromise<void, OperationInput>(({ input }) => input.run(input.controller.signal));

export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentEvent,
    input: {} as AgentMachineInput,
    emitted: {} as AgentEmitted,
    children: {} as { run: "run" },
  },
  actors: {
    run: runMachine,
    /** A manual compaction in the slot (`compact()`; the work is the compaction machine's run). */
    compaction: runOperation,
    /** A navigation in the slot (`moveTo()`, with or without a branch summary; `src/compaction/navigation.ts`). */
    navigation: runOperation,
    prepareRun: fromPromise<PrepareRunOutput, PrepareRunInput>(async () => {
      throw new Error('Actor "prepareRun" is not provided.');
    }),
  },
  actions: {
    /** The writer's inlet (provided by the agent). */
    record: (_, _params: { events: NewEvent[] }) => {},
    enqueue: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "STEER" && event.type !== "FOLLOW_UP") return;
      if (event.type === "STEER" && event.nextTurn) {
        enqueue.assign({ nextTurn: [...context.nextTurn, event.message] });
        return;
      }
      const queue: QueueName = event.type === "STEER" ? (event.passive ? "passive" : "steering") : "followUp";
      const next = [...context[queue], event.message];
      enqueue.assign({ [queue]: next });
      enqueue(recordAction([queueChanged(context.runInput?.runId, queue, "enqueued", next.length, event.message)]));
    }),
    clear: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "CLEAR") return;
      const queues: QueueName[] = event.queue === "all" ? ["steering", "followUp", "passive"] : event.queue === "steering" ? ["steering", "passive"] : [event.queue];
      for (const queue of queues) {
        if (context[queue].length === 0) continue;
        enqueue.assign({ [queue]: [] });
        enqueue(recordAction([queueChanged(context.runInput?.runId, queue, "cleared", 0)]));
      }
    }),
    /** Aborts the compaction or navigation holding the slot; the slot frees when its work settles. */
    abortOperation: ({ context, event }) => {
      const reason = event.type === "ABORT" || event.type === "INTERRUPT" ? event.reason : undefined;
      context.operation?.controller.abort(new Error(reason ?? "aborted"));
    },
    /** Records the entries deferred while the slot was busy (before the run's outcome is built). */
    flushDeferred: enqueueActions(({ context, enqueue }) => {
      if (context.deferred.length === 0) return;
      enqueue(recordAction(context.deferred));
      enqueue.assign({ deferred: [] });
    }),
    /** The run that just ended is finishing until `RUN.FINISHED` (its outcome is being committed). */
    finishing: assign({ finishing: ({ context }) => (context.runInput ? [...context.finishing, context.runInput.runId] : context.finishing) }),
    drain: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "QUEUE.DRAIN") return;
      const queue = event.queue;
      const mode = queue === "steering" ? context.steeringMode : context.followUpMode;
      const count = drainCount(context[queue], mode);
      const messages = context[queue].slice(0, count);
      if (count > 0) {
        const rest = context[queue].slice(count);
        enqueue.assign({ [queue]: rest });
        enqueue(recordAction([queueChanged(event.runId, queue, "dequeued", rest.length)]));
      }
      // Passive messages ride along only when the run goes on anyway (ours, pi #5895).
      if ((event.continuing === true || messages.length > 0) && context.passive.length > 0) {
        messages.push(...context.passive);
        enqueue.assign({ passive: [] });
        enqueue(recordAction([queueChanged(event.runId, "passive", "dequeued", 0)]));
      }
      enqueue.sendTo("run", { type: "QUEUE.DRAINED", queue, messages });
    }),
  },
}).createMachine({
  id: "agent",
  context: ({ input }) => ({
    settings: input.settings,
    steering: input.steering ?? [],
    followUp: input.followUp ?? [],
    passive: input.passive ?? [],
    steeringMode: input.steeringMode ?? "one-at-a-time",
    followUpMode: input.followUpMode ?? "one-at-a-time",
    deferred: [],
    finishing: [],
    nextTurn: [],
  }),
  initial: "idle",
  on: {
    STEER: { actions: "enqueue" },
    FOLLOW_UP: { actions: "enqueue" },
    CLEAR: { actions: "clear" },
    // A settings change in any state: the next model call uses it (a run's current call is unchanged).
    "SETTINGS.SET": { actions: assign(({ context, event }) => (context.settings ? { settings: withSettings(context.settings, event.change) } : {})) },
    SET_MODE: {
      actions: assign(({ event }) => (event.queue === "steering" ? { steeringMode: event.mode } : { followUpMode: event.mode })),
    },
    "SETTINGS.DEFER": { actions: assign({ deferred: ({ context, event }) => [...context.deferred, ...event.events] }) },
    "ERROR.SET": { actions: assign({ lastError: ({ event }) => event.error }) },
    // The agent committed the run's events and released its lease: every caller gets the outcome.
    "RUN.FINISHED": {
      actions: [
        assign({
          lastError: ({ event }) => (event.outcome.status === "failed" ? event.outcome.error : undefined),
          finishing: ({ context, event }) => context.finishing.filter((runId) => runId !== event.outcome.runId),
        }),
        emit(({ event }) => ({ type: "runFinished" as const, outcome: event.outcome })),
      ],
    },
  },
  states: {
    idle: {
      entry: assign({ request: undefined, runInput: undefined, abortPending: undefined, operation: undefined }),
      on: {
        OPERATE: [
          { guard: ({ event }) => event.kind === "compacting", target: "compacting", actions: assign({ operation: ({ event }) => event.operation }) },
          { target: "navigating", actions: assign({ operation: ({ event }) => event.operation }) },
        ],
        PROMPT: {
          target: "preparing",
          actions: assign({
            request: ({ context, event }) => ({ runId: event.runId, kind: "prompt" as const, prompts: event.prompts, nextTurn: context.nextTurn, ...(event.prepare ? { prepare: event.prepare } : {}) }),
          }),
        },
        CONTINUE: {
          target: "preparing",
          actions: assign({ request: ({ event }) => ({ runId: event.runId, kind: "continue" as const, prompts: [] }) }),
        },
        TAKEOVER: {
          target: "preparing",
          actions: assign({ request: ({ event }) => ({ runId: event.runId, kind: "takeover" as const, prompts: [], ...(event.reason !== undefined ? { reason: event.reason } : {}) }) }),
        },
        "APPROVAL.AWAIT": "awaiting-approval",
      },
    },
    "awaiting-approval": {
      entry: assign({ request: undefined, runInput: undefined, abortPending: undefined, operation: undefined }),
      on: {
        CONTINUE: {
          target: "preparing",
          actions: assign({ request: ({ event }) => ({ runId: event.runId, kind: "resume" as const, prompts: [] }) }),
        },
        // An abort while waiting closes every waiting call with a result (a resume run that runs nothing).
        ABORT: {
          target: "preparing",
          actions: assign({
            request: ({ event }) => ({ runId: uuidv7(), kind: "resume" as const, prompts: [], abort: event.reason === undefined ? {} : { reason: event.reason } }),
          }),
        },
        "APPROVAL.CLEAR": "idle",
      },
    },
    preparing: {
      invoke: {
        src: "prepareRun",
        input: ({ context }) => ({
          ...context.request!,
          nextTurn: context.request!.nextTurn ?? [],
          steering: context.steering,
          followUp: context.followUp,
          steeringMode: context.steeringMode,
          followUpMode: context.followUpMode,
        }),
        onDone: {
          target: "running",
          actions: enqueueActions(({ context, event, enqueue }) => {
            const { input, drained } = event.output;
            enqueue.assign({ runInput: input });
            // A prompt took the messages held for it (those held since stay for the next one).
            const taken = context.request?.nextTurn?.length ?? 0;
            if (taken > 0) enqueue.assign({ nextTurn: context.nextTurn.slice(taken) });
            if (drained && drained.count > 0) {
              const rest = context[drained.queue].slice(drained.count);
              enqueue.assign({ [drained.queue]: rest });
              enqueue(recordAction([queueChanged(input.runId, drained.queue, "dequeued", rest.length)]));
            }
          }),
        },
        onError: [
          {
            guard: ({ context }) => context.request?.kind === "resume",
            target: "awaiting-approval",
            actions: emit(({ context, event }) => ({ type: "runRejected" as const, runId: context.request!.runId, error: event.error })),
          },
          {
            target: "idle",
            actions: emit(({ context, event }) => ({ type: "runRejected" as const, runId: context.request!.runId, error: event.error })),
          },
        ],
      },
      on: {
        ABORT: { actions: assign({ abortPending: ({ event }) => event.reason ?? true }) },
        INTERRUPT: { actions: assign({ abortPending: ({ event }) => event.reason }) },
      },
    },
    running: {
      // Invoked (not spawned): `onDone` carries the run's typed output. An abort that arrived while preparing is raised once the run exists.
      entry: enqueueActions(({ context, enqueue }) => {
        if (context.abortPending !== undefined) {
          enqueue.raise({ type: "ABORT", reason: context.abortPending === true ? undefined : context.abortPending });
        }
      }),
      invoke: {
        id: "run",
        src: "run",
        input: ({ context }) => context.runInput!,
        onDone: [
          {
            guard: ({ event }) => event.output.status === "suspended",
            target: "awaiting-approval",
            actions: ["flushDeferred", "finishing", emit(({ event }) => ({ type: "runSettled" as const, output: event.output }))],
          },
          {
            target: "idle",
            actions: ["flushDeferred", "finishing", emit(({ event }) => ({ type: "runSettled" as const, output: event.output }))],
          },
        ],
        onError: {
          target: "idle",
          actions: ["flushDeferred", "finishing", emit(({ context, event }) => ({
            type: "runSettled" as const,
            output: {
              runId: context.runInput!.runId,
              status: "failed" as const,
              messages: [],
              turns: 0,
              error: `The run actor crashed: ${String(event.error)}`,
            },
          }))],
        },
      },
      on: {
        "QUEUE.DRAIN": { actions: "drain" },
        ABORT: { actions: enqueueActions(({ event, enqueue }) => enqueue.sendTo("run", { type: "ABORT", reason: event.reason })) },
        INTERRUPT: { actions: enqueueActions(({ event, enqueue }) => enqueue.sendTo("run", { type: "INTERRUPT", reason: event.reason })) },
        "WRITER.FAILED": {
          actions: enqueueActions(({ event, enqueue }) => enqueue.sendTo("run", { type: "FAIL", error: event.error, code: event.code })),
        },
      },
    },
    compacting: {
      invoke: { src: "compaction", input: ({ context }) => context.operation!, onDone: { target: "idle", actions: "flushDeferred" }, onError: { target: "idle", actions: "flushDeferred" } },
      on: { ABORT: { actions: "abortOperation" }, INTERRUPT: { actions: "abortOperation" } },
    },
    navigating: {
      invoke: { src: "navigation", input: ({ context }) => context.operation!, onDone: { target: "idle", actions: "flushDeferred" }, onError: { target: "idle", actions: "flushDeferred" } },
      on: { ABORT: { actions: "abortOperation" }, INTERRUPT: { actions: "abortOperation" } },
    },
  },
});

/** A snapshot of the agent actor. */
export type AgentMachineSnapshot = SnapshotFrom<typeof agentMachine>;
