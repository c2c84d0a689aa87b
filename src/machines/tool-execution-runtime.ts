/**
 * The side-effect actors of the tool-execution machine (`tool-execution.machine.ts`), bound to one run's {@link ToolRuntime}: `prepareToolCall` and
 * `finalizeToolCall` (`loop-tools.ts`), and `executeTool`, which commits the call first (`runtime.commit`: a call whose events are not durable never
 * starts), asks the budget, then calls the tool's `execute` and reports back by events: `TOOL.RUNNING`, `TOOL.PROGRESS`, `TOOL.PROCESS`, then one of
 * `TOOL.RETURNED`, `TOOL.THREW`, `TOOL.TIMED_OUT` (after the tool's `timeoutMs`). Stopping the actor aborts the tool's signal, settles its budget
 * reservation once, and silences it.
 */
import { fromCallback, fromPromise } from "xstate";
import type { ToolResult } from "../core/tools.ts";
import { errorMessageOf } from "./loop-messages.ts";
import {
  finalizeToolResult,
  prepareToolCall,
  type FinalizeInput,
  type FinalizeOutput,
  type PrepareInput,
  type PrepareOutcome,
  type ToolRuntime,
} from "./loop-tools.ts";
import type { ExecuteInput, ToolExecutionEvent } from "./tool-execution-types.ts";
import { ignoreError } from "../core/ignored.ts";

/** The machine's keyed actors bound to `runtime` (see the module contract), for `machine.provide({ actors })`. */
export function toolRuntimeActors(runtime: ToolRuntime) {
  return {
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
        // Budgets: a refused call never starts; the run was told and aborts every call with the reason.
        const admitted = await runtime.budget?.beforeToolCall({ toolCallId: input.toolCall.id, toolName: input.toolCall.name });
        if (admitted === "refused" || !live) {
          if (admitted !== "refused") void admitted?.settle();
          return new Promise<ToolResult>(() => undefined);
        }
        // A settlement the log refuses (closed at dispose) leaves the reservation counting: the safe side.
        if (admitted) settleBudget = () => void admitted.settle().catch(ignoreError("a budget settlement the log refuses (closed at dispose) leaves the reservation counting: the safe side"));
        send({ type: "TOOL.RUNNING" });
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
      // Settles the call's budget reservation once (set when the budget admitted the call).
      let settleBudget: (() => void) | undefined;
      const settle = () => {
        settleBudget?.();
        settleBudget = undefined;
      };
      run().then(
        (result) => {
          settle();
          send({ type: "TOOL.RETURNED", result: normalizeResult(result) });
        },
        (error: unknown) => {
          settle();
          send({ type: "TOOL.THREW", message: errorMessageOf(error) });
        },
      );
      return () => {
        live = false;
        settle();
        if (timer) clearTimeout(timer);
        controller.abort(new Error("Tool execution stopped"));
      };
    }),
  };
}

function normalizeResult(result: ToolResult | undefined): ToolResult {
  if (!result || !Array.isArray(result.content)) {
    return { content: [{ type: "text", text: "" }], ...(result ?? {}) } as ToolResult;
  }
  return result;
}
