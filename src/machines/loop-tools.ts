/**
 * The side effects of one tool call, used by the tool-execution machine's actors:
 * preparation (lookup, prepareArguments, validation, beforeToolCall), execution
 * (with updates, abort and timeout) and finalization (afterToolCall).
 *
 * Contract (pi's semantics, `docs/pi-parity.md`; ours where marked):
 * - `prepareToolCall` never throws: every failure is a {@link PrepareOutcome} of kind
 *   `not_found` (pi text "Tool <name> not found"), `invalid` (arguments that did not parse
 *   as JSON, ours: never validated, so never run with `{}`; the validator's message,
 *   or a throw in `prepareArguments`), or `blocked` (the hook's reason, default
 *   "Tool execution was blocked"; a throw in the hook blocks with its message);
 *   arguments replaced by `beforeToolCall` are NOT re-validated (pi);
 * - `finalizeToolResult` applies `afterToolCall` field by field (each present field
 *   replaces the original); a throw makes the result an error carrying the message (pi 0.73);
 * - approval (ours): after `beforeToolCall`, a call of a tool whose `needsApproval`
 *   says so (a throw fails closed), or that the runtime's policy names (`requiresApproval`),
 *   is `ready` with a `gate` (its input digest): it must not run until approved; a call
 *   prepared as `approved` skips the check, and is `blocked` when its final arguments no
 *   longer match the approved digest;
 * - every hook receives the AbortSignal of the call;
 * - preparation yields to the event loop (`setImmediate`) when it has held it for 10 ms, so
 *   abort and timeouts fire during a large batch.
 *
 * @example
 * ```ts
 * const prepared = await prepareToolCall(runtime, { toolCall, assistantMessage }, signal);
 * if (prepared.kind === "ready") await tool.execute(prepared.args, context);
 * ```
 */
import type { AssistantMessage, ToolCall } from "../core/messages.ts";
import type { AgentTool, ToolResult } from "../core/tools.ts";
import type { LoopHooks } from "./agent-types.ts";
import { inputDigest } from "./approval-fold.ts";
import { approvalMismatchText, BLOCKED_TEXT, errorMessageOf, notFoundText, unparsableArgumentsText } from "./loop-messages.ts";

/**
 * What the tool actors need from the agent: the live tool set, hooks and tool context.
 *
 * @example
 * ```ts
 * const runtime: ToolRuntime = { getTool: (name) => tools.get(name), hooks: {}, toolContext: () => undefined };
 * ```
 */
export interface ToolRuntime {
  getTool(name: string): AgentTool<any, any, any> | undefined;
  readonly hooks: LoopHooks;
  toolContext(call: { toolCallId: string; toolName: string }): unknown;
  /** Secrets for each tool's execute context (`ToolExecuteContext.secrets`). */
  readonly secrets?: readonly string[];
  /** Approval policy by tool name (the agent's `requireApproval`): true gates every call of that tool. */
  requiresApproval?(toolName: string): boolean;
  /**
   * Commit before effect (ours): resolves once everything recorded so far (the run start,
   * the prompt, the assistant message holding the call, `tool.started`) is durable; rejects
   * when the log refused it. Awaited before every `execute`.
   */
  commit?(): Promise<void>;
}

/**
 * Input of one tool call's preparation.
 *
 * @example
 * ```ts
 * await prepareToolCall(runtime, { toolCall, assistantMessage }, signal);
 * ```
 */
export interface PrepareInput {
  toolCall: ToolCall;
  assistantMessage: AssistantMessage;
  /** Set in a `resume` run for a call the user approved: the digest its arguments must still have. */
  approved?: { inputDigest: string };
}

/**
 * The outcome of preparation. `hookChanged` lists what beforeToolCall changed (for `hook.applied`).
 *
 * @example
 * ```ts
 * if (outcome.kind === "ready") console.log(outcome.args);
 * ```
 */
export type PrepareOutcome =
  | {
      kind: "ready";
      args: Record<string, unknown>;
      timeoutMs?: number;
      hookChanged: string[];
      /** Set when the call needs approval: it must not run now. */
      gate?: { inputDigest: string; source: "tool" | "policy" };
    }
  | { kind: "not_found"; message: string }
  | { kind: "invalid"; message: string }
  | { kind: "blocked"; message: string; hookError?: string };

let lastYield = 0;

/**
 * Lets timers and I/O run once tool preparation has held the event loop for 10 ms (ours): a
 * large batch is prepared in promise callbacks only, which would otherwise starve `abort()`
 * and timeouts until the whole batch was prepared. Only yields; never changes an order.
 */
async function yieldToEventLoop(): Promise<void> {
  if (performance.now() - lastYield < 10) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  lastYield = performance.now();
}

/**
 * Prepares one call (see the module contract). Never throws.
 *
 * @example
 * ```ts
 * const outcome = await prepareToolCall(runtime, { toolCall, assistantMessage }, signal);
 * ```
 */
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
async function approvalSource(runtime: ToolRuntime, tool: AgentTool<any, any, any>, args: Record<string, unknown>, call: ToolCall): Promise<"tool" | "policy" | undefined> {
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

/**
 * Input of finalization: the raw result of execute (or of a throw).
 *
 * @example
 * ```ts
 * await finalizeToolResult(runtime, { toolCall, args, result, isError: false }, signal);
 * ```
 */
export interface FinalizeInput {
  toolCall: ToolCall;
  args: Record<string, unknown>;
  result: ToolResult;
  isError: boolean;
}

/**
 * A finalized result, with the fields afterToolCall changed (for `hook.applied`) or its error.
 *
 * @example
 * ```ts
 * const { result, isError } = await finalizeToolResult(runtime, input, signal);
 * ```
 */
export interface FinalizeOutput {
  result: ToolResult;
  isError: boolean;
  hookChanged: string[];
  hookError?: string;
}

/**
 * Applies afterToolCall (see the module contract). Never throws.
 *
 * @example
 * ```ts
 * const { result, isError } = await finalizeToolResult(runtime, { toolCall, args, result: raw, isError: false }, signal);
 * ```
 */
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
