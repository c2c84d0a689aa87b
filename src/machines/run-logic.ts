/**
 * Binds the run machine's keyed actors and its `record` action to real
 * dependencies: the model (read per call, so `setModel` applies at the next call),
 * the request builder, the tool runtime, the hooks and the session writer.
 *
 * Contract (ours):
 * - `modelCall` builds the request (transformContext → convertToLlm →
 *   beforeModelCall), streams it with an AbortSignal that fires when the actor
 *   stops (abort, run end) before the stream gave its terminal event (`done` / `error`: the
 *   loop has left the stream, so the client closed it; the signal then never fires), and turns every failure (a throwing hook, a throwing
 *   client, a stream without a terminal event) into one `error` stream event: the
 *   run never sees an exception;
 * - stream events reach the run machine as `MODEL.EVENT`, except (ours) an event
 *   that carries the partial the machine already holds (the same live object) and is not
 *   `start`/`done`/`error`: it cannot change the machine's context, so `modelCall` records its
 *   `message.delta` (if any, `streamEventRecord`) through `record` itself, in stream order,
 *   without a transition; a client that yields a new partial object per event goes through the
 *   machine for every event;
 * - commit before effect: `modelCall` awaits `commit()` before the request is sent, so the
 *   run start and the prompt are durable first (a refused commit is the call's error);
 * - `betweenTurns` / `contextOverflow` flush the writer before calling the hook, so
 *   the hook reads a session that holds everything the run produced so far.
 *
 * @example
 * ```ts
 * const runLogic = provideRunLogic({ record, getModel: () => model, buildRequest, runtime, hooks, flush: () => writer.flush() });
 * ```
 */
import { fromCallback, fromPromise } from "xstate";
import type { AgentMessage, AssistantMessage } from "../core/messages.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../core/model-stream.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { LoopHooks } from "./agent-types.ts";
import { emptyAssistant, errorMessageOf } from "./loop-messages.ts";
import type { ToolRuntime } from "./loop-tools.ts";
import { runMachine, type ModelCallInput, type RunEvent } from "./run.machine.ts";
import { streamEventRecord } from "./run-steps.ts";
import { provideToolRuntime, toolExecutionMachine } from "./tool-execution.machine.ts";

/**
 * What the run's actors need.
 *
 * @example
 * ```ts
 * provideRunLogic({ record, getModel: () => model, buildRequest, runtime, hooks: {}, flush });
 * ```
 */
export interface RunDependencies {
  record: (events: NewEvent[]) => void;
  getModel: () => ModelClient;
  buildRequest: (messages: AgentMessage[], signal: AbortSignal) => Promise<ModelRequest>;
  runtime: ToolRuntime;
  hooks: LoopHooks;
  flush: () => Promise<void>;
  /** Commit before effect: resolves once everything recorded so far is durable; rejects when the log refused it. */
  commit?: () => Promise<void>;
}

/**
 * The run machine with its actors and `record` bound to `deps` (see the module contract).
 *
 * @example
 * ```ts
 * const run = provideRunLogic({ record: (events) => writer.push(...events), getModel: () => model, buildRequest, runtime, hooks, flush: () => writer.flush() });
 * ```
 */
export function provideRunLogic(deps: RunDependencies): typeof runMachine {
  const failedStream = (model: ModelClient, message: string, aborted: boolean): ModelStreamEvent => ({
    type: "error",
    message: {
      ...emptyAssistant({ provider: model.provider, modelId: model.modelId, api: model.api }),
      stopReason: aborted ? "aborted" : "error",
      errorMessage: message,
    },
    error: { retryable: false },
  });

  const modelCall = fromCallback<RunEvent, ModelCallInput>(({ input, sendBack }) => {
    const controller = new AbortController();
    const model = deps.getModel();
    let live = true;
    // Set once the stream gave its terminal event (the loop left it, so the client closed it).
    let ended = false;
    const recordScope = { runId: input.runId, turnId: input.turnId };
    // The partial the run machine holds: set by the first event that carries one.
    let heldPartial: AssistantMessage | undefined;
    const send = (event: ModelStreamEvent) => {
      if (!live) return;
      // Direct path: once the machine holds this (live, mutated) partial, an event that only
      // records a delta or nothing would leave its context as it is; it skips the transition.
      if (heldPartial !== undefined && "partial" in event && event.partial === heldPartial && event.type !== "start") {
        const record = streamEventRecord(recordScope, input.messageId, event);
        if (record) deps.record([record]);
        return;
      }
      if ("partial" in event) heldPartial = event.partial;
      sendBack({ type: "MODEL.EVENT", event });
    };
    void (async () => {
      try {
        const request = await deps.buildRequest(input.messages, controller.signal);
        // Commit before effect: the run start and the prompt are durable before the request leaves.
        await deps.commit?.();
        if (!live) return;
        let terminal = false;
        for await (const event of model.stream(request, { signal: controller.signal })) {
          if (!live) return;
          send(event);
          if (event.type === "done" || event.type === "error") {
            terminal = true;
            ended = true;
            break;
          }
        }
        if (!terminal) send(failedStream(model, "The model stream ended without a done or error event.", controller.signal.aborted));
      } catch (error) {
        send(failedStream(model, errorMessageOf(error), controller.signal.aborted));
      }
    })();
    return () => {
      live = false;
      // A stream that ended has nothing to stop: aborting it would only wake every listener the
      // client left on the signal (and build an Error) on each model call.
      if (!ended) controller.abort(new Error("Request was aborted"));
    };
  });

  return runMachine.provide({
    actions: { record: (_, params: { events: NewEvent[] }) => deps.record(params.events) },
    actors: {
      modelCall,
      tool: provideToolRuntime(toolExecutionMachine, deps.runtime),
      betweenTurns: fromPromise<AgentMessage[] | undefined, { messages: AgentMessage[]; lastAssistant: AssistantMessage }>(
        async ({ input, signal }) => {
          await deps.flush();
          return deps.hooks.betweenTurns?.({ messages: input.messages, lastAssistant: input.lastAssistant, signal });
        },
      ),
      contextOverflow: fromPromise<AgentMessage[] | undefined, { messages: AgentMessage[] }>(async ({ input, signal }) => {
        await deps.flush();
        return deps.hooks.onContextOverflow?.({ messages: input.messages, signal });
      }),
    },
  });
}
