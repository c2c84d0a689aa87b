/**
 * Message builders of the agent loop: prompt normalization, the synthetic tool results the loop writes (`isError: true`, saying plainly whether the
 * tool ran, `details.arbor` the reason) and the final aborted/error assistant messages. Pure apart from timestamps.
 */
import type { AgentMessage, AssistantMessage, ToolCall, ToolResultMessage, UserMessage } from "../core/messages.ts";
import { unknownUsage } from "../core/messages.ts";
import type { ToolResult } from "../core/tools.ts";
import type { ToolOutcome } from "../core/vocabulary.ts";

/** Normalizes a `prompt()`/`steer()` input to agent messages: a string becomes a user message with one text block (pi's shape). */
export function toAgentMessages(input: string | AgentMessage | AgentMessage[]): AgentMessage[] {
  if (typeof input === "string") return [userText(input)];
  return Array.isArray(input) ? input : [input];
}

/** A user message with one text block. */
export function userText(text: string): UserMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
}

/** The tool calls of an assistant message, in content (source) order. */
export function toolCallsOf(message: AssistantMessage | undefined): ToolCall[] {
  if (!message) return [];
  return message.content.filter((block): block is ToolCall => block.type === "toolCall");
}

/** A tool result message for `call` from a tool's {@link ToolResult}. */
export function toolResultMessage(call: ToolCall, result: ToolResult, isError: boolean): ToolResultMessage {
  const message: ToolResultMessage = {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: result.content,
    isError,
    timestamp: Date.now(),
  };
  if (result.details !== undefined) message.details = result.details;
  return message;
}

/** An error tool result with one text block; `details.arbor` records the reason. */
export function errorToolResult(call: ToolCall, text: string, reason: ToolOutcome, details?: unknown): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text }],
    details: details === undefined ? { arbor: reason } : details,
    isError: true,
    timestamp: Date.now(),
  };
}

/** Text of the result of a call to a tool that does not exist. Source: pi (exact). */
export function notFoundText(name: string): string {
  return `Tool ${name} not found`;
}

/** Text of the default block reason. Source: pi (exact). */
export const BLOCKED_TEXT = "Tool execution was blocked";

/** Text of the result of a tool call the loop did not run because the output hit the token limit (ours). */
export function lengthStopText(call: ToolCall): string {
  return (
    `Tool call "${call.name}" was not executed: the response stopped at the output token limit ` +
    `(stopReason "length"), so its arguments may be truncated. Retry with a shorter call.`
  );
}

/** Text of the result of a tool call whose arguments did not parse as a JSON object (ours): the call was never executed. */
export function unparsableArgumentsText(call: ToolCall): string {
  return (
    `Tool "${call.name}" did not run: its arguments are ${call.argumentsError ?? "not a JSON object"}. ` +
    `Send the call again with the arguments as one complete JSON object.`
  );
}

/** Text of the result of a tool call over the per-response cap (ours): it was not run. */
export function overCapText(call: ToolCall, calls: number, limit: number): string {
  return (
    `Tool "${call.name}" did not run: this response made ${calls} tool calls and at most ${limit} run per response ` +
    `(maxToolCallsPerResponse). It may need to be run again: make fewer calls per response.`
  );
}

/** Text of the result of a running tool that the run's abort stopped (ours). */
export function abortedText(call: ToolCall, reason?: string): string {
  return (
    `Tool "${call.name}" was aborted while running${reason ? ` (${reason})` : ""}, so it may not have finished: ` +
    `some of its effects may have happened. It was not re-run; check its effects, it may need to be run again.`
  );
}

/** Text of the result of a tool call that never started because the run was aborted (ours, pi #8935). */
export function skippedText(call: ToolCall, reason?: string): string {
  return (
    `Tool "${call.name}" did not run: the run was aborted${reason ? ` (${reason})` : ""} before it started. ` +
    `Nothing it would have done has happened; it may need to be run again.`
  );
}

/** Text of the result of a tool that exceeded its `timeoutMs` (ours). */
export function timedOutText(call: ToolCall, timeoutMs: number): string {
  return (
    `Tool "${call.name}" timed out after ${timeoutMs} ms and was stopped, so it may not have finished: ` +
    `some of its effects may have happened. It was not re-run; check its effects, it may need to be run again.`
  );
}

/** Text of the synthetic result written by crash recovery (ours). */
export function interruptedText(call: ToolCall, processNote?: string): string {
  return (
    `Tool "${call.name}" was interrupted: the process running it stopped, so it may not have finished. ` +
    `${processNote ? `${processNote} ` : ""}It was not re-run; check its effects, it may need to be run again.`
  );
}

/** What recovery says about the process group an interrupted tool had started (ours). */
export function processNote(pgid: number, status: "alive" | "gone" | "reused" | "other-host"): string {
  switch (status) {
    case "alive":
      return `Its process group ${pgid} was still running; it was ended (SIGKILL) when this result was recorded.`;
    case "gone":
      return `Its process group ${pgid} had already ended.`;
    case "reused":
      return `Its process group ${pgid} had ended (the id now belongs to another process, which was left alone).`;
    case "other-host":
      return `Its process group ${pgid} runs on another host and was not checked; it may still be running.`;
  }
}

/** Text of the result of a call the user declined at approval (ours): the model learns it was declined, and why. */
export function deniedText(call: ToolCall, reason?: string): string {
  return `The user declined to run tool "${call.name}"${reason ? `: ${reason}` : "."} It did not run; do not retry it unchanged.`;
}

/** Text of the result of a gated call closed because the run was aborted while it waited for approval (ours). */
export function approvalCancelledText(call: ToolCall, reason?: string): string {
  return (
    `Tool "${call.name}" did not run: it was waiting for the user's approval when the run was aborted${reason ? ` (${reason})` : ""}. ` +
    `Nothing it would have done has happened.`
  );
}

/** Text of the result of an approved call whose arguments a `beforeToolCall` hook changed after approval: it is not run. */
export function approvalMismatchText(call: ToolCall): string {
  return `Tool "${call.name}" did not run: its arguments changed after the user approved them, so the approval does not cover them.`;
}

/** The message of an unknown thrown value. */
export function errorMessageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** An empty assistant message for `model` (used when a stream never started). */
export function emptyAssistant(model: { provider: string; modelId: string; api: string }): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.modelId,
    usage: unknownUsage(),
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

/** Closes a (possibly partial) assistant message as aborted, keeping its content. Default errorMessage "Request was aborted" (pi-ai's text). */
export function abortedAssistant(partial: AssistantMessage, reason?: string): AssistantMessage {
  return { ...partial, content: [...partial.content], stopReason: "aborted", errorMessage: reason ?? "Request was aborted" };
}
