/**
 * Binds the run machine's keyed actors and `record` action to real dependencies (model read per call, request builder, tool runtime, hooks,
 * writer). `modelCall` awaits `commit()` before sending (commit before effect) and turns every failure into one `error` stream event; deltas on the
 * partial the machine already holds are recorded here, in stream order, without a transition. `betweenTurns`/`contextOverflow` flush first.
 */
import { fromCallback, fromPromise } from "xstate";
import type { AgentMessage, AssistantMessage } from "../core/messages.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../core/model-stream.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { LoopHooks } from "./agent-types.ts";
import { emptyAssistant, errorMessageOf } from "./loop-messages.ts";
import type { ToolRuntime } from "./loop-tools.ts";
import { runMachine, type ModelCallInput, type RunEvent } from "./run.machine.ts";
import type { BudgetGate } from "./run-budget.ts";
import { streamEventRecord } from "./run-steps.ts";
import { provideToolRuntime, toolExecutionMachine } from "./tool-execution.machine.ts";
import { ignoreError } from "../core/ignored.ts";

/** What the run's actors need. */
export interface RunDependencies {
  record: (events: NewEvent[]) => void;
  getModel: () => ModelClient;
  buildRequest: (messages: AgentMessage[], signal: AbortSignal) => Promise<ModelRequest>;
  runtime: ToolRuntime;
  hooks: LoopHooks;
  flush: () => Promise<void>;
  /** Commit before effect: resolves once everything recorded so far is durable; rejects when the log refused it. */
  commit?: () => Promise<void>;
  /** Budgets (`run-budget.ts`): asked before every model call (after the commit), settled after it. */
  budget?: Pick<BudgetGate, "beforeModelCall">;
}

/** The run machine with its actors and `record` bound to `deps` (see the module contract). */
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
    // Settles the call's budget reservation once (set when the budget admitted the call).
    let settleBudget: ((message: AssistantMessage | undefined) => void) | undefined;
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
        // Budgets: a refused call never starts (the run was told, and ends `budget_exceeded`).
        const admitted = await deps.budget?.beforeModelCall({ runId: input.runId, turnId: input.turnId, request, model });
        if (admitted === "refused" || !live) {
          if (admitted !== "refused") void admitted?.settle(undefined);
          return;
        }
        // A settlement the log refuses (closed at dispose) leaves the reservation counting: the safe side.
        settleBudget = admitted ? (message) => void admitted.settle(message).catch(ignoreError("a budget settlement the log refuses (closed at dispose) leaves the reservation counting: the safe side")) : undefined;
        let terminal = false;
        for await (const event of model.stream(request, { signal: controller.signal })) {
          if (!live) return;
          // Set before the machine sees the terminal event: it stops this actor inside `send`, and the
          // cleanup must not abort a stream that ended (the aborted signal's Error, with its stack, would
          // outlive the call wherever the client keeps the signal).
          if (event.type === "done" || event.type === "error") {
            ended = true;
            // Settled with the final message (its reported usage) before the machine sees it: the machine stops this actor inside `send`, and the
            // cleanup would settle with the held partial, which carries no usage (an estimate where the provider reported the real figure).
            settleBudget?.(event.message);
            settleBudget = undefined;
          }
          send(event);
          if (event.type === "done" || event.type === "error") {
            terminal = true;
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
      // Stopped mid-stream (abort): what it streamed so far is what it used (estimated if unreported).
      settleBudget?.(heldPartial);
      settleBudget = undefined;
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
