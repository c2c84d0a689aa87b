/**
 * The contract of the tool-execution actor (`tool-execution.machine.ts`) with its parent, the run: its input, the events it accepts and sends, its
 * context, and its output, a {@link ToolSettled} for every final state.
 */
import type { ToolProcess } from "../core/process-group.ts";
import type { AssistantMessage, ToolCall, ToolResultMessage } from "../core/messages.ts";
import type { ToolResult } from "../core/tools.ts";
import type { PendingWorkspaceCheckpoint } from "../core/workspace-manifest.ts";
import type { ApprovalSource, ToolOutcome } from "../core/vocabulary.ts";

/** Input of the tool-execution actor. */
export interface ToolExecutionInput {
  toolCall: ToolCall;
  assistantMessage: AssistantMessage;
  /** A call approved by the user (a `resume` run): run it without asking again, if its arguments still match. */
  approved?: { inputDigest: string };
}

/** How a tool call ended: its outcome, result message and execution wall time (ms). */
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
  gate?: { inputDigest: string; source: ApprovalSource };
  /** The checkpoint of the files the call changed (the harness's workspace recorder), logged before the result. */
  workspace?: PendingWorkspaceCheckpoint;
}

/** Events the tool-execution actor accepts. */
export type ToolExecutionEvent =
  | { type: "EXECUTE" }
  | { type: "ABORT"; reason?: string }
  | { type: "TOOL.RUNNING" }
  | { type: "TOOL.PROGRESS"; partial: ToolResult }
  | { type: "TOOL.PROCESS"; process: ToolProcess }
  | { type: "TOOL.RETURNED"; result: ToolResult }
  | { type: "TOOL.THREW"; message: string }
  | { type: "TOOL.TIMED_OUT"; timeoutMs: number };

/** Events the tool-execution actor sends to its parent. */
export type ToolParentEvent =
  | { type: "TOOL.PREPARED"; toolCallId: string }
  | { type: "TOOL.UPDATED"; toolCallId: string; toolName: string; partial?: ToolResult; process?: ToolProcess };

/** The context of the tool-execution actor. */
export interface ToolExecutionContext {
  toolCall: ToolCall;
  assistantMessage: AssistantMessage;
  approved?: { inputDigest: string };
  gate?: { inputDigest: string; source: ApprovalSource };
  args: Record<string, unknown>;
  timeoutMs?: number;
  startedAt?: number;
  /** Set when the tool's `execute` was called: an abort before it (commit, budget) skips the call. */
  running?: boolean;
  durationMs: number;
  outcome?: ToolOutcome;
  message?: ToolResultMessage;
  raw?: { result: ToolResult; isError: boolean };
  terminate: boolean;
  hooks: ToolSettled["hooks"];
  abortReason?: string;
}

/** Input of the `executeTool` actor. */
export interface ExecuteInput {
  toolCall: ToolCall;
  args: Record<string, unknown>;
  timeoutMs?: number;
}
