/**
 * The tool-execution actor, one per tool call: `preparing` → `not_found` | `invalid` | `blocked` | `gated` (final) or `ready` (waits for `EXECUTE`)
 * → `executing` → `finalizing` → `succeeded` | `failed`; also `aborted` | `timed_out`, and `skipped` for an abort before `execute` was called.
 * It never fails: every final state's `output` is a {@link ToolSettled} with a result message. Side effects are the keyed actors bound by
 * {@link provideToolRuntime}.
 */
import { assign, fromCallback, fromPromise, sendParent, setup } from "xstate";
import type { ToolResult } from "../core/tools.ts";
import { WORKSPACE_CHECKPOINT, type PendingWorkspaceCheckpoint } from "../core/workspace-manifest.ts";
import {
  abortedText,
  errorMessageOf,
  errorToolResult,
  skippedText,
  timedOutText,
  toolResultMessage,
} from "./loop-messages.ts";
import type { FinalizeInput, FinalizeOutput, PrepareInput, PrepareOutcome, ToolRuntime } from "./loop-tools.ts";
import { toolRuntimeActors } from "./tool-execution-runtime.ts";
import type {
  ExecuteInput,
  ToolExecutionContext,
  ToolExecutionEvent,
  ToolExecutionInput,
  ToolParentEvent,
  ToolSettled,
} from "./tool-execution-types.ts";

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

/** The hook records with a `beforeToolCall` record added when that hook changed the arguments (the gated and the ready call alike). */
const withBeforeToolCall = (hooks: ToolSettled["hooks"], changes: string[]): ToolSettled["hooks"] =>
  changes.length ? [...hooks, { hook: "beforeToolCall", changes }] : hooks;

/** Throws: the actors must be provided with {@link provideToolRuntime}. */
const unprovided = (name: string) => () => {
  throw new Error(`Actor "${name}" is not provided: use provideToolRuntime(machine, runtime).`);
};

/** The tool-execution machine (see the module contract). */
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
                hooks: withBeforeToolCall(context.hooks, outcome.hookChanged),
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
                hooks: withBeforeToolCall(context.hooks, outcome.hookChanged),
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
        "TOOL.RUNNING": { actions: assign({ running: true }) },
        ABORT: [
          // Not started yet (a budget refusal aborts the run from within the admission): nothing ran.
          {
            guard: ({ context }) => context.running !== true,
            target: "skipped",
            actions: { type: "rememberAbort", params: ({ event }) => ({ reason: event.reason }) },
          },
          { target: "aborted", actions: { type: "rememberAbort", params: ({ event }) => ({ reason: event.reason }) } },
        ],
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

/** Binds the machine's side-effect actors to a {@link ToolRuntime}; execution aborts when the actor stops or the tool's `timeoutMs` passes. */
export function provideToolRuntime(machine: typeof toolExecutionMachine, runtime: ToolRuntime): typeof toolExecutionMachine {
  return machine.provide({ actors: toolRuntimeActors(runtime) });
}
