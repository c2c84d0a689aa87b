/**
 * The side effects of one tool call for the tool-execution actors: preparation (lookup, prepareArguments, validation, beforeToolCall, the approval
 * gate), execution (updates, abort, timeout) and finalization (afterToolCall, field by field). `prepareToolCall` never throws: failures are
 * `not_found`, `invalid` or `blocked` outcomes. Preparation yields to the event loop every 10 ms so aborts fire during large batches.
 */
import type { AssistantMessage, ToolCall } from "../core/messages.ts";
import type { AgentTool, ToolResult } from "../core/tools.ts";
import type { LoopHooks } from "./agent-types.ts";
import { inputDigest } from "./approval-fold.ts";
import { approvalMismatchText, BLOCKED_TEXT, errorMessageOf, notFoundText, unparsableArgumentsText } from "./loop-messages.ts";
import type { BudgetGate } from "./run-budget.ts";
import type { ApprovalSource } from "../core/vocabulary.ts";

/** What the tool actors need from the agent: the live tool set, hooks and tool context. */
export interface ToolRuntime {
  getTool(name: string): AgentTool<any, any, any> | undefined;
  readonly hooks: LoopHooks;
  toolContext(call: { toolCallId: string; toolName: string }): unknown;
  /** Secrets for each tool's execute context (`ToolExecuteContext.secrets`). */
  readonly secrets?: readonly string[];
  /** Approval policy by tool name (the agent's `requireApproval`): true gates every call of that tool. */
  requiresApproval?(toolName: string): boolean;
  /**
   * Commit before effect (ours): resolves once everything recorded so far (the run start, the prompt, the assistant message holding the call,
   * `tool.started`) is durable; rejects when the log refused it. Awaited before every `execute`.
   */
  commit?(): Promise<void>;
  /** Budgets (`run-budget.ts`): asked before every `execute`; a refused call never starts. */
  readonly budget?: Pick<BudgetGate, "beforeToolCall">;
}

/** Input of one tool call's preparation. */
export interface PrepareInput {
  toolCall: ToolCall;
  assistantMessage: AssistantMessage;
  /** Set in a `resume` run for a call the user approved: the digest its arguments must still have. */
  approved?: { inputDigest: string };
}

/** The outcome of preparation. `hookChanged` lists what beforeToolCall changed (for `hook.applied`). */
export type PrepareOutcome =
  | {
      kind: "ready";
      args: Record<string, unknown>;
      timeoutMs?: number;
      hookChanged: string[];
      /** Set when the call needs approval: it must not run now. */
      gate?: { inputDigest: string; source: ApprovalSource };
    }
  | { kind: "not_found"; message: string }
  | { kind: "invalid"; message: string }
  | { kind: "blocked"; message: string; hookError?: string };

let lastYield = 0;

/**
 * Lets timers and I/O run once tool preparation has held the event loop for 10 ms, so `abort()` and timeouts fire during a large batch.
 */
async function yieldToEventLoop(): Promise<void> {
  if (performance.now() - lastYield < 10) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  lastYield = performance.now();
}

/** Prepares one call (see the module contract). Never throws. */
export async function prepareToolCall(runtime: ToolRuntime, input: PrepareInput, signal: AbortSignal): Promise<PrepareOutcome> {
  await yieldToEventLoop();
  const { toolCall } = input;
  const tool = runtime.getTool(toolCall.name);
  if (!tool) return { kind: "not_found", message: notFoundText(toolCall.name) };
  if (toolCall.argumentsError !== undefined) return { kind: "invalid", message: unparsableArgumentsText(toolCall) };
  let args: unknown = toolCall.arguments;
  try {
    if (tool.prepareArguments) args = tool.prepareArguments(args);
    const validation = tool.validate(args);
    if (!validation.ok) return { kind: "invalid", message: validation.message };
    args = validation.value;
  } catch (error) {
    return { kind: "invalid", message: errorMessageOf(error) };
  }
  const hookChanged: string[] = [];
  if (runtime.hooks.beforeToolCall) {
    try {
      const decision = await runtime.hooks.beforeToolCall(
        {
          toolCallId: toolCall.id,
          toolName: toolCall.name,
          args: args as Record<string, unknown>,
          assistantMessage: input.assistantMessage,
        },
        signal,
      );
      if (decision?.block) return { kind: "blocked", message: decision.reason ?? BLOCKED_TEXT };
      if (decision?.args) {
        args = decision.args;
        hookChanged.push("args");
      }
    } catch (error) {
      const message = errorMessageOf(error);
      return { kind: "blocked", message, hookError: message };
    }
  }
  const ready = { kind: "ready" as const, args: args as Record<string, unknown>, timeoutMs: tool.timeoutMs, hookChanged };
  // A call that can neither be gated nor carry an approval needs no digest (a sha256 of its arguments).
  if (!input.approved && (tool.needsApproval === undefined || tool.needsApproval === false) && runtime.requiresApproval?.(toolCall.name) !== true) return ready;
  const digest = inputDigest(args);
  if (input.approved) {
    return input.approved.inputDigest === digest ? ready : { kind: "blocked", message: approvalMismatchText(toolCall) };
  }
  const source = await approvalSource(runtime, tool, ready.args, toolCall);
  return source ? { ...ready, gate: { inputDigest: digest, source } } : ready;
}

/** Who requires approval of this call (the tool, or the policy by name), or undefined. A throwing `needsApproval` requires it (fails closed). */
async function approvalSource(runtime: ToolRuntime, tool: AgentTool<any, any, any>, args: Record<string, unknown>, call: ToolCall): Promise<ApprovalSource | undefined> {
  const { needsApproval } = tool;
  if (needsApproval === true) return "tool";
  if (typeof needsApproval === "function") {
    try {
      const context = runtime.toolContext({ toolCallId: call.id, toolName: call.name });
      if (await needsApproval(args, { toolCallId: call.id, toolName: call.name, context })) return "tool";
    } catch {
      return "tool";
    }
  }
  return runtime.requiresApproval?.(call.name) === true ? "policy" : undefined;
}

/** Input of finalization: the raw result of execute (or of a throw). */
export interface FinalizeInput {
  toolCall: ToolCall;
  args: Record<string, unknown>;
  result: ToolResult;
  isError: boolean;
}

/** A finalized result, with the fields afterToolCall changed (for `hook.applied`) or its error. */
export interface FinalizeOutput {
  result: ToolResult;
  isError: boolean;
  hookChanged: string[];
  hookError?: string;
}

/** Applies afterToolCall (see the module contract). Never throws. */
export async function finalizeToolResult(runtime: ToolRuntime, input: FinalizeInput, signal: AbortSignal): Promise<FinalizeOutput> {
  const hook = runtime.hooks.afterToolCall;
  if (!hook) return { result: input.result, isError: input.isError, hookChanged: [] };
  try {
    const patch = await hook(
      {
        toolCallId: input.toolCall.id,
        toolName: input.toolCall.name,
        args: input.args,
        result: input.result,
        isError: input.isError,
      },
      signal,
    );
    if (!patch) return { result: input.result, isError: input.isError, hookChanged: [] };
    const result: ToolResult = { ...input.result };
    const hookChanged: string[] = [];
    if (patch.content !== undefined) {
      result.content = patch.content;
      hookChanged.push("content");
    }
    if (patch.details !== undefined) {
      result.details = patch.details;
      hookChanged.push("details");
    }
    if (patch.terminate !== undefined) {
      result.terminate = patch.terminate;
      hookChanged.push("terminate");
    }
    let isError = input.isError;
    if (patch.isError !== undefined) {
      isError = patch.isError;
      hookChanged.push("isError");
    }
    return { result, isError, hookChanged };
  } catch (error) {
    const message = errorMessageOf(error);
    return {
      result: { content: [{ type: "text", text: message }], details: input.result.details },
      isError: true,
      hookChanged: [],
      hookError: message,
    };
  }
}
