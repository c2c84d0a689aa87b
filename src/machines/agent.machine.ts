/**
 * The agent actor: one per session, `idle` ⇄ `preparing` → `running`.
 *
 * Contract (ours; queue semantics pi's, `../shared/reference/pi-behaviour.md` §1.5):
 * - owns the steering and follow-up queues (FIFO), each drained one-at-a-time
 *   (the head) or all at once, and the passive steering queue (ours, pi #5895): passive
 *   messages are all delivered with a poll after which the run goes on anyway (the poll
 *   before a model call, a poll after a turn with tool calls, or one that took other
 *   messages), else held for the next run; every change is recorded as `queue.changed`
 *   (enqueues carry the message); `QUEUE.RESTORE` puts back the queues folded from
 *   the log when the agent is created (not recorded again);
 * - `PROMPT` / `CONTINUE` are accepted only in `idle`; `preparing` invokes the keyed
 *   actor `prepareRun` (waits for recovery, builds the run's input, may refuse a
 *   continue), then `running` spawns exactly one run actor (id `run`);
 * - answers the run's `QUEUE.DRAIN` with `QUEUE.DRAINED`; forwards `ABORT`,
 *   `INTERRUPT` and writer failures (`WRITER.FAILED` → the run's `FAIL`);
 * - tells `agent.ts` through XState `emit`: `runSettled` with the run's output,
 *   `runRejected` when preparation refused the run.
 *
 * @example
 * ```ts
 * const actor = createActor(agentMachine.provide({ actors: { run, prepareRun }, actions: { record } }), { input }).start();
 * actor.send({ type: "PROMPT", runId: "r1", prompts: [userText("hi")] });
 * ```
 */
import { assign, emit, enqueueActions, fromPromise, setup } from "xstate";
import type { AgentMessage } from "../core/messages.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { QueueMode } from "./agent-types.ts";
import { runEvent } from "./run-records.ts";
import { runMachine, type RunInput, type RunOutput } from "./run.machine.ts";

/**
 * Which queue.
 *
 * @example
 * ```ts
 * const queue: QueueName = "steering";
 * ```
 */
export type QueueName = "steering" | "followUp" | "passive";

/**
 * Input of the agent actor.
 *
 * @example
 * ```ts
 * createActor(agentMachine, { input: { steeringMode: "all" } });
 * ```
 */
export interface AgentMachineInput {
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  /** Queues restored from the log. */
  steering?: AgentMessage[];
  followUp?: AgentMessage[];
  passive?: AgentMessage[];
}

/**
 * Input of the `prepareRun` actor.
 *
 * @example
 * ```ts
 * const input: PrepareRunInput = { runId, kind: "continue", prompts: [], steering: [], followUp: [], steeringMode: "all", followUpMode: "all" };
 * ```
 */
export interface PrepareRunInput {
  runId: string;
  kind: "prompt" | "continue";
  prompts: AgentMessage[];
  steering: AgentMessage[];
  followUp: AgentMessage[];
  steeringMode: QueueMode;
  followUpMode: QueueMode;
}

/**
 * Output of `prepareRun`: the run's input, and the queue messages it took.
 *
 * @example
 * ```ts
 * const output: PrepareRunOutput = { input: runInput, drained: { queue: "followUp", count: 1 } };
 * ```
 */
export interface PrepareRunOutput {
  input: RunInput;
  drained?: { queue: QueueName; count: number };
}

/**
 * Events of the agent actor.
 *
 * @example
 * ```ts
 * actor.send({ type: "STEER", message: userText("focus on tests") });
 * ```
 */
export type AgentEvent =
  | { type: "PROMPT"; runId: string; prompts: AgentMessage[] }
  | { type: "CONTINUE"; runId: string }
  | { type: "STEER"; message: AgentMessage; passive?: boolean }
  | { type: "FOLLOW_UP"; message: AgentMessage }
  | { type: "CLEAR"; queue: QueueName | "all" }
  | { type: "SET_MODE"; queue: QueueName; mode: QueueMode }
  | { type: "ABORT"; reason?: string }
  | { type: "INTERRUPT"; reason: string }
  | { type: "WRITER.FAILED"; error: string; code?: string }
  | { type: "QUEUE.DRAIN"; queue: "steering" | "followUp"; runId: string; continuing?: boolean }
  | { type: "QUEUE.RESTORE"; steering: AgentMessage[]; followUp: AgentMessage[]; passive?: AgentMessage[] };

/**
 * Events the agent actor emits to `agent.ts`.
 *
 * @example
 * ```ts
 * actor.on("runSettled", ({ output }) => console.log(output.status));
 * ```
 */
export type AgentEmitted =
  | { type: "runSettled"; output: RunOutput }
  | { type: "runRejected"; runId: string; error: unknown };

interface AgentContext {
  steering: AgentMessage[];
  followUp: AgentMessage[];
  /** Passive steering (ours): delivered only with a poll after which the run goes on anyway. */
  passive: AgentMessage[];
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  request?: { runId: string; kind: "prompt" | "continue"; prompts: AgentMessage[] };
  runInput?: RunInput;
  abortPending?: string | true;
}

/**
 * How many messages one poll takes from a queue. Source: pi.
 *
 * @example
 * ```ts
 * drainCount([a, b], "one-at-a-time"); // 1
 * ```
 */
export function drainCount(queue: readonly AgentMessage[], mode: QueueMode): number {
  return mode === "all" ? queue.length : Math.min(1, queue.length);
}

const recordAction = (events: NewEvent[]) => ({ type: "record", params: { events } }) as never;

const queueChanged = (runId: string | undefined, queue: QueueName, action: "enqueued" | "dequeued" | "cleared", size: number, message?: AgentMessage) =>
  runEvent({ runId: runId ?? "none" }, "queue.changed", { queue, action, size, ...(message ? { message } : {}) });

/**
 * The agent machine (see the module contract).
 *
 * @example
 * ```ts
 * const actor = createActor(agentMachine.provide({ actors: { run, prepareRun }, actions: { record } }), { input: {} }).start();
 * ```
 */
export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentEvent,
    input: {} as AgentMachineInput,
    emitted: {} as AgentEmitted,
  },
  actors: {
    run: runMachine,
    prepareRun: fromPromise<PrepareRunOutput, PrepareRunInput>(async () => {
      throw new Error('Actor "prepareRun" is not provided.');
    }),
  },
  actions: {
    /** The writer's inlet (provided by the agent). */
    record: (_, _params: { events: NewEvent[] }) => {},
    enqueue: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "STEER" && event.type !== "FOLLOW_UP") return;
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
    steering: input.steering ?? [],
    followUp: input.followUp ?? [],
    passive: input.passive ?? [],
    steeringMode: input.steeringMode ?? "one-at-a-time",
    followUpMode: input.followUpMode ?? "one-at-a-time",
  }),
  initial: "idle",
  on: {
    STEER: { actions: "enqueue" },
    FOLLOW_UP: { actions: "enqueue" },
    CLEAR: { actions: "clear" },
    // Queues restored from the log (not recorded again); messages queued since go after them.
    "QUEUE.RESTORE": {
      actions: assign(({ context, event }) => ({
        steering: [...event.steering, ...context.steering],
        followUp: [...event.followUp, ...context.followUp],
        passive: [...(event.passive ?? []), ...context.passive],
      })),
    },
    SET_MODE: {
      actions: assign(({ event }) => (event.queue === "steering" ? { steeringMode: event.mode } : { followUpMode: event.mode })),
    },
  },
  states: {
    idle: {
      entry: assign({ request: undefined, runInput: undefined, abortPending: undefined }),
      on: {
        PROMPT: {
          target: "preparing",
          actions: assign({ request: ({ event }) => ({ runId: event.runId, kind: "prompt" as const, prompts: event.prompts }) }),
        },
        CONTINUE: {
          target: "preparing",
          actions: assign({ request: ({ event }) => ({ runId: event.runId, kind: "continue" as const, prompts: [] }) }),
        },
      },
    },
    preparing: {
      invoke: {
        src: "prepareRun",
        input: ({ context }) => ({
          ...context.request!,
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
            if (drained && drained.count > 0) {
              const rest = context[drained.queue].slice(drained.count);
              enqueue.assign({ [drained.queue]: rest });
              enqueue(recordAction([queueChanged(input.runId, drained.queue, "dequeued", rest.length)]));
            }
          }),
        },
        onError: {
          target: "idle",
          actions: emit(({ context, event }) => ({ type: "runRejected" as const, runId: context.request!.runId, error: event.error })),
        },
      },
      on: {
        ABORT: { actions: assign({ abortPending: ({ event }) => event.reason ?? true }) },
        INTERRUPT: { actions: assign({ abortPending: ({ event }) => event.reason }) },
      },
    },
    running: {
      entry: enqueueActions(({ context, enqueue }) => {
        enqueue.spawnChild("run", { id: "run", input: context.runInput! });
        if (context.abortPending !== undefined) {
          const reason = context.abortPending === true ? undefined : context.abortPending;
          enqueue.sendTo("run", { type: "ABORT", reason });
        }
      }),
      on: {
        "QUEUE.DRAIN": { actions: "drain" },
        ABORT: { actions: enqueueActions(({ event, enqueue }) => enqueue.sendTo("run", { type: "ABORT", reason: event.reason })) },
        INTERRUPT: { actions: enqueueActions(({ event, enqueue }) => enqueue.sendTo("run", { type: "INTERRUPT", reason: event.reason })) },
        "WRITER.FAILED": {
          actions: enqueueActions(({ event, enqueue }) => enqueue.sendTo("run", { type: "FAIL", error: event.error, code: event.code })),
        },
        "xstate.done.actor.run": {
          target: "idle",
          actions: emit(({ event }) => ({ type: "runSettled" as const, output: (event as unknown as { output: RunOutput }).output })),
        },
        "xstate.error.actor.run": {
          target: "idle",
          actions: emit(({ context, event }) => ({
            type: "runSettled" as const,
            output: {
              runId: context.runInput!.runId,
              status: "failed" as const,
              messages: [],
              turns: 0,
              error: `The run actor crashed: ${String((event as unknown as { error: unknown }).error)}`,
            },
          })),
        },
      },
    },
  },
});
