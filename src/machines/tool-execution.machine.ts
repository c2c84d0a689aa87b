/**
 * The tool-execution actor: one per tool call, spawned by the run actor.
 *
 * States (ours; semantics pi's, `docs/pi-parity.md`):
 * `preparing` (lookup, prepareArguments, validation, beforeToolCall)
 *   → `not_found` | `invalid` | `blocked` (final, error results; final state names are the
 *   `tool.ended` outcomes, one spelling per concept)
 *   → `ready` (waits for `EXECUTE`, so a parallel batch can preflight in source order)
 *   → `executing` (updates; `TIMED_OUT` from the tool's timer) → `finalizing` (afterToolCall)
 *   → `succeeded` | `failed`; `executing` also ends `aborted` | `timed_out`.
 * A call that needs approval (ours) ends in `gated` (final) right after preparation:
 * nothing of it ran; its output carries the `gate` and the run logs `approval.requested`.
 * `ABORT` before execution ends in `skipped` (pi #8935: no prepared call starts after
 * an abort); during execution or finalization it ends in `aborted` at once: the tool's
 * AbortSignal fires (its actor is stopped) and the result says it may not have finished and may need to be run again.
 *
 * Contract:
 * - the actor never fails: every path ends in a final state whose `output` is a
 *   {@link ToolSettled} with a tool result message for the call;
 * - it tells its parent `TOOL.PREPARED` on entering `ready` and `TOOL.UPDATED` per
 *   update; the parent learns the end from the actor's done event (`output`);
 * - side effects live in the actors `prepareToolCall`, `executeTool`, `finalizeToolCall`,
 *   registered by key: {@link provideToolRuntime} binds them to a {@link ToolRuntime}.
 *
 * @example
 * ```ts
 * const logic = provideToolRuntime(toolExecutionMachine, runtime);
 * const actor = createActor(logic, { input: { toolCall, assistantMessage } }).start();
 * actor.send({ type: "EXECUTE" });
 * ```
 */
import { assign, fromCallback, fromPromise, sendParent, setup } from "xstate";
import type { ToolProcess } from "../core/process-group.ts";
import type { AssistantMessage, ToolCall, ToolResultMessage } from "../core/messages.ts";
import type { ToolResult } from "../core/tools.ts";
import { WORKSPACE_CHECKPOINT, type PendingWorkspaceCheckpoint } from "../core/workspace-manifest.ts";
import {
  abortedText,
  errorMessageOf,
  errorToolResult,
  skippedText,
  timedOutText,
  toolResultMessage,
  type ToolOutcome,
} from "./loop-messages.ts";
import {
  finalizeToolResult,
  prepareToolCall,
  type FinalizeInput,
  type FinalizeOutput,
  type PrepareInput,
  type PrepareOutcome,
  type ToolRuntime,
} from "./loop-tools.ts";

/**
 * Input of the tool-execution actor.
 *
 * @example
 * ```ts
 * createActor(logic, { input: { toolCall, assistantMessage } });
 * ```
 */
export interface ToolExecutionInput {
  toolCall: ToolCall;
  assistantMessage: AssistantMessage;
  /** A call approved by the user (a `resume` run): run it without asking again, if its arguments still match. */
  approved?: { inputDigest: string };
}

/**
 * How a tool call ended: its outcome, result message and execution wall time (ms).
 *
 * @example
 * ```ts
 * const { outcome, message }: ToolSettled = toolActor.getSnapshot().output!;
 * ```
 */
export interface ToolSettled {
  toolCallId: string;
  toolName: string;
  outcome: ToolOutcome;
  message: ToolResultMessage;
  terminate: boolean;
  durationMs: number;
  /** Fields a hook changed, and a hook's error message, for `hook.applied` / `hook.failed`. */
  hooks: { hook: "beforeToolCall" | "afterToolCall"; changes: string[]; error?: string }[];
  /** Set when the call needs approval (final state `gated`): it did not run and `message` is not a result. */
  gate?: { inputDigest: string; source: "tool" | "policy" };
  /** The checkpoint of the files the call changed (the harness's workspace recorder), logged before the result. */
  workspace?: PendingWorkspaceCheckpoint;
}

/**
 * Events the tool-execution actor accepts.
 *
 * @example
 * ```ts
 * toolActor.send({ type: "EXECUTE" });
 * ```
 */
export type ToolExecutionEvent =
  | { type: "EXECUTE" }
  | { type: "ABORT"; reason?: string }
  | { type: "TOOL.PROGRESS"; partial: ToolResult }
  | { type: "TOOL.PROCESS"; process: ToolProcess }
  | { type: "TOOL.RETURNED"; result: ToolResult }
  | { type: "TOOL.THREW"; message: string }
  | { type: "TOOL.TIMED_OUT"; timeoutMs: number };

/**
 * Events the tool-execution actor sends to its parent.
 *
 * @example
 * ```ts
 * on: { "TOOL.PREPARED": { actions: "notePrepared" } }
 * ```
 */
export type ToolParentEvent =
  | { type: "TOOL.PREPARED"; toolCallId: string }
  | { type: "TOOL.UPDATED"; toolCallId: string; toolName: string; partial?: ToolResult; process?: ToolProcess };

export interface ToolExecutionContext {
  toolCall: ToolCall;
  assistantMessage: AssistantMessage;
  approved?: { inputDigest: string };
  gate?: { inputDigest: string; source: "tool" | "policy" };
  args: Record<string, unknown>;
  timeoutMs?: number;
  startedAt?: number;
  durationMs: number;
  outcome?: ToolOutcome;
  message?: ToolResultMessage;
  raw?: { result: ToolResult; isError: boolean };
  terminate: boolean;
  hooks: ToolSettled["hooks"];
  abortReason?: string;
}

/**
 * Input of the `executeTool` actor.
 *
 * @example
 * ```ts
 * fromCallback<ToolExecutionEvent, ExecuteInput>(({ input, sendBack }) => { … });
 * ```
 */
export interface ExecuteInput {
  toolCall: ToolCall;
  args: Record<string, unknown>;
  timeoutMs?: number;
}

const elapsed = (context: ToolExecutionContext) => (context.startedAt === undefined ? 0 : Date.now() - context.startedAt);

const settledOf = (context: ToolExecutionContext): ToolSettled => ({
  toolCallId: context.toolCall.id,
  toolName: context.toolCall.name,
  outcome: context.outcome ?? "failed",
  message: context.message ?? errorToolResult(context.toolCall, "The tool call ended without a result.", "failed"),
  terminate: context.terminate,
  durationMs: context.durationMs,
  hooks: context.hooks,
  ...(context.gate ? { gate: context.gate } : {}),
  ...workspaceOf(context.raw?.result),
});

/** The workspace checkpoint a tool's result carries (set by the harness's recorder), as a field. */
const workspaceOf = (result: ToolResult | undefined): { workspace?: PendingWorkspaceCheckpoint } => {
  const workspace = (result as { [WORKSPACE_CHECKPOINT]?: PendingWorkspaceCheckpoint } | undefined)?.[WORKSPACE_CHECKPOINT];
  return workspace ? { workspace } : {};
};

/** Throws: the actors must be provided with {@link provideToolRuntime}. */
const unprovided = (name: string) => () => {
  throw new Error(`Actor "${name}" is not provided: use provideToolRuntime(machine, runtime).`);
};

/**
 * The tool-execution machine (see the module contract).
 *
 * @example
 * ```ts
 * createActor(provideToolRuntime(toolExecutionMachine, runtime), { input }).start();
 * ```
 */
export const toolExecutionMachine = setup({
  types: {
    context: {} as ToolExecutionContext,
    events: {} as ToolExecutionEvent,
    input: {} as ToolExecutionInput,
    output: {} as ToolSettled,
  },
  actors: {
    prepareToolCall: fromPromise<PrepareOutcome, PrepareInput>(unprovided("prepareToolCall")),
    executeTool: fromCallback<ToolExecutionEvent, ExecuteInput>(unprovided("executeTool")),
    finalizeToolCall: fromPromise<FinalizeOutput, FinalizeInput>(unprovided("finalizeToolCall")),
  },
  guards: {
    isReady: (_, params: { outcome: PrepareOutcome }) => params.outcome.kind === "ready",
    isGated: (_, params: { outcome: PrepareOutcome }) => params.outcome.kind === "ready" && params.outcome.gate !== undefined,
    isNotFound: (_, params: { outcome: PrepareOutcome }) => params.outcome.kind === "not_found",
    isInvalid: (_, params: { outcome: PrepareOutcome }) => params.outcome.kind === "invalid",
  },
  actions: {
    notifyPrepared: sendParent(({ context }): ToolParentEvent => ({ type: "TOOL.PREPARED", toolCallId: context.toolCall.id })),
    rememberAbort: assign({ abortReason: (_, params: { reason?: string }) => params.reason }),
    applyFinalized: assign(({ context }, params: { output: FinalizeOutput }) => {
      const { output } = params;
      const hooks = [...context.hooks];
      if (output.hookChanged.length || output.hookError) {
        hooks.push({ hook: "afterToolCall", changes: output.hookChanged, error: output.hookError });
      }
      return {
        outcome: output.isError ? ("failed" as const) : ("succeeded" as const),
        message: toolResultMessage(context.toolCall, output.result, output.isError),
        terminate: output.result.terminate === true,
        hooks,
      };
    }),
  },
}).createMachine({
  id: "toolExecution",
  context: ({ input }) => ({
    toolCall: input.toolCall,
    assistantMessage: input.assistantMessage,
    ...(input.approved ? { approved: input.approved } : {}),
    args: input.toolCall.arguments,
    durationMs: 0,
    terminate: false,
    hooks: [],
  }),
  initial: "preparing",
  states: {
    preparing: {
      invoke: {
        id: "prepare",
        src: "prepareToolCall",
        input: ({ context }) => ({
          toolCall: context.toolCall,
          assistantMessage: context.assistantMessage,
          ...(context.approved ? { approved: context.approved } : {}),
        }),
        onDone: [
          {
            guard: { type: "isGated", params: ({ event }) => ({ outcome: event.output }) },
            target: "gated",
            actions: assign(({ context, event }) => {
              const outcome = event.output;
              if (outcome.kind !== "ready" || !outcome.gate) return {};
              return {
                args: outcome.args,
                gate: outcome.gate,
                hooks: outcome.hookChanged.length
                  ? [...context.hooks, { hook: "beforeToolCall" as const, changes: outcome.hookChanged }]
                  : context.hooks,
              };
            }),
          },
          {
            guard: { type: "isReady", params: ({ event }) => ({ outcome: event.output }) },
            target: "ready",
            actions: assign(({ context, event }) => {
              const outcome = event.output;
              if (outcome.kind !== "ready") return {};
              return {
                args: outcome.args,
                timeoutMs: outcome.timeoutMs,
                hooks: outcome.hookChanged.length
                  ? [...context.hooks, { hook: "beforeToolCall" as const, changes: outcome.hookChanged }]
                  : context.hooks,
              };
            }),
          },
          {
            guard: { type: "isNotFound", params: ({ event }) => ({ outcome: event.output }) },
            target: "not_found",
            actions: assign({
              outcome: "not_found",
              message: ({ context, event }) =>
                errorToolResult(context.toolCall, (event.output as { message: string }).message, "not_found"),
            }),
          },
          {
            guard: { type: "isInvalid", params: ({ event }) => ({ outcome: event.output }) },
            target: "invalid",
            actions: assign({
              outcome: "invalid",
              message: ({ context, event }) =>
                errorToolResult(context.toolCall, (event.output as { message: string }).message, "invalid"),
            }),
          },
          {
            target: "blocked",
            actions: assign(({ context, event }) => {
              const outcome = event.output as { message: string; hookError?: string };
              return {
                outcome: "blocked" as const,
                message: errorToolResult(context.toolCall, outcome.message, "blocked"),
                hooks: outcome.hookError
                  ? [...context.hooks, { hook: "beforeToolCall" as const, changes: [], error: outcome.hookError }]
                  : context.hooks,
              };
            }),
          },
        ],
        onError: {
          target: "blocked",
          actions: assign({
            outcome: "blocked",
            message: ({ context, event }) => errorToolResult(context.toolCall, errorMessageOf(event.error), "blocked"),
          }),
        },
      },
      on: { ABORT: { target: "skipped", actions: { type: "rememberAbort", params: ({ event }) => ({ reason: event.reason }) } } },
    },
    ready: {
      entry: "notifyPrepared",
      on: {
        EXECUTE: "executing",
        ABORT: { target: "skipped", actions: { type: "rememberAbort", params: ({ event }) => ({ reason: event.reason }) } },
      },
    },
    executing: {
      entry: assign({ startedAt: () => Date.now() }),
      invoke: {
        id: "execute",
        src: "executeTool",
        input: ({ context }) => ({ toolCall: context.toolCall, args: context.args, timeoutMs: context.timeoutMs }),
      },
      on: {
        "TOOL.PROGRESS": {
          actions: sendParent(({ context, event }): ToolParentEvent => ({
            type: "TOOL.UPDATED",
            toolCallId: context.toolCall.id,
            toolName: context.toolCall.name,
            partial: event.partial,
          })),
        },
        // The process group the tool started: recorded at once, so recovery can end it after a crash.
        "TOOL.PROCESS": {
          actions: sendParent(({ context, event }): ToolParentEvent => ({
            type: "TOOL.UPDATED",
            toolCallId: context.toolCall.id,
            toolName: context.toolCall.name,
            process: event.process,
          })),
        },
        "TOOL.RETURNED": {
          target: "finalizing",
          actions: assign({
            durationMs: ({ context }) => elapsed(context),
            raw: ({ event }) => ({ result: event.result, isError: event.result.isError === true }),
          }),
        },
        "TOOL.THREW": {
          target: "finalizing",
          actions: assign({
            durationMs: ({ context }) => elapsed(context),
            raw: ({ event }) => ({ result: { content: [{ type: "text" as const, text: event.message }] }, isError: true }),
          }),
        },
        "TOOL.TIMED_OUT": {
          target: "timed_out",
          actions: assign({
            durationMs: ({ context }) => elapsed(context),
            outcome: "timed_out",
            message: ({ context, event }) =>
              errorToolResult(context.toolCall, timedOutText(context.toolCall, event.timeoutMs), "timed_out"),
          }),
        },
        ABORT: {
          target: "aborted",
          actions: { type: "rememberAbort", params: ({ event }) => ({ reason: event.reason }) },
        },
      },
    },
    finalizing: {
      invoke: {
        id: "finalize",
        src: "finalizeToolCall",
        input: ({ context }) => ({
          toolCall: context.toolCall,
          args: context.args,
          result: context.raw!.result,
          isError: context.raw!.isError,
        }),
        onDone: [
          {
            guard: ({ event }) => !event.output.isError,
            target: "succeeded",
            actions: { type: "applyFinalized", params: ({ event }) => ({ output: event.output }) },
          },
          { target: "failed", actions: { type: "applyFinalized", params: ({ event }) => ({ output: event.output }) } },
        ],
        onError: {
          target: "failed",
          actions: assign({
            outcome: "failed",
            message: ({ context, event }) => errorToolResult(context.toolCall, errorMessageOf(event.error), "failed"),
          }),
        },
      },
      on: {
        ABORT: { target: "aborted", actions: { type: "rememberAbort", params: ({ event }) => ({ reason: event.reason }) } },
      },
    },
    gated: { type: "final" },
    succeeded: { type: "final" },
    failed: { type: "final" },
    aborted: {
      type: "final",
      entry: [
        assign({
          outcome: "aborted",
          durationMs: ({ context }) => elapsed(context),
          message: ({ context }) =>
            errorToolResult(context.toolCall, abortedText(context.toolCall, context.abortReason), "aborted"),
        }),
      ],
    },
    timed_out: { type: "final" },
    blocked: { type: "final" },
    invalid: { type: "final" },
    not_found: { type: "final" },
    skipped: {
      type: "final",
      entry: [
        assign({
          outcome: "skipped",
          message: ({ context }) => errorToolResult(context.toolCall, skippedText(context.toolCall, context.abortReason), "skipped"),
        }),
      ],
    },
  },
  output: ({ context }) => settledOf(context),
});

/**
 * Binds the machine's side-effect actors to a {@link ToolRuntime}. The executing
 * actor owns an AbortController aborted when the actor stops (abort, run end) and
 * a timer for the tool's `timeoutMs`.
 *
 * @example
 * ```ts
 * const logic = provideToolRuntime(toolExecutionMachine, { getTool, hooks: {}, toolContext: () => undefined });
 * ```
 */
export function provideToolRuntime(machine: typeof toolExecutionMachine, runtime: ToolRuntime): typeof toolExecutionMachine {
  return machine.provide({
    actors: {
      prepareToolCall: fromPromise<PrepareOutcome, PrepareInput>(({ input, signal }) => prepareToolCall(runtime, input, signal)),
      finalizeToolCall: fromPromise<FinalizeOutput, FinalizeInput>(({ input, signal }) =>
        finalizeToolResult(runtime, input, signal),
      ),
      executeTool: fromCallback<ToolExecutionEvent, ExecuteInput>(({ input, sendBack }) => {
        const controller = new AbortController();
        let live = true;
        const send = (event: ToolExecutionEvent) => {
          if (live) sendBack(event);
        };
        const timer =
          input.timeoutMs === undefined
            ? undefined
            : setTimeout(() => {
                send({ type: "TOOL.TIMED_OUT", timeoutMs: input.timeoutMs! });
              }, input.timeoutMs);
        const tool = runtime.getTool(input.toolCall.name);
        const run = async () => {
          if (!tool) throw new Error(`Tool ${input.toolCall.name} not found`);
          if (runtime.commit) {
            try {
              await runtime.commit();
            } catch (error) {
              throw new Error(`The tool did not run: its call could not be logged first (${errorMessageOf(error)}).`);
            }
            // Stopped (abort, run end) while the call was being committed: never start it.
            if (!live) return new Promise<ToolResult>(() => undefined);
          }
          return tool.execute(input.args, {
            toolCallId: input.toolCall.id,
            idempotencyKey: input.toolCall.id,
            signal: controller.signal,
            onUpdate: (partial) => send({ type: "TOOL.PROGRESS", partial }),
            onProcess: (started) => {
              if (live) send({ type: "TOOL.PROCESS", process: started });
            },
            context: runtime.toolContext({ toolCallId: input.toolCall.id, toolName: input.toolCall.name }),
            ...(runtime.secrets?.length ? { secrets: runtime.secrets } : {}),
          });
        };
        run().then(
          (result) => send({ type: "TOOL.RETURNED", result: normalizeResult(result) }),
          (error: unknown) => send({ type: "TOOL.THREW", message: errorMessageOf(error) }),
        );
        return () => {
          live = false;
          if (timer) clearTimeout(timer);
          controller.abort(new Error("Tool execution stopped"));
        };
      }),
    },
  });
}

function normalizeResult(result: ToolResult | undefined): ToolResult {
  if (!result || !Array.isArray(result.content)) {
    return { content: [{ type: "text", text: "" }], ...(result ?? {}) } as ToolResult;
  }
  return result;
}
