/**
 * The run actor's types: its input (`RunInput`, a continuation's `RunContinuation`), output (`RunOutput`), context (`RunContext`), the events it
 * accepts and sends its parent, and the `modelCall` actor's input. Types only; the pure steps over them are `run-steps.ts`.
 */
import type { BudgetExceeded } from "../core/budget.ts";
import type { RunPolicy } from "../core/run-policy.ts";
import type { AgentMessage, AssistantMessage } from "../core/messages.ts";
import type { ModelStreamEvent } from "../core/model-stream.ts";
import type { ToolExecutionMode } from "../core/tools.ts";
import type { RetrySettings } from "./agent-types.ts";
import type { ToolBatch } from "./run-batch.ts";
import type { ResumeDecision } from "./run-batch-settle.ts";
import type { ToolParentEvent, ToolSettled } from "./tool-execution-types.ts";
import type { RunStatus, RunKind } from "../core/vocabulary.ts";

/** Input of the run actor. */
export interface RunInput {
  runId: string;
  kind: RunKind;
  /**
   * A `resume` run (ours): goes straight to the tool batch of `assistant` (the message whose gated calls were decided), holding only `callIds` (its
   * calls still without a result); `abort` closes them all unrun and ends the run aborted.
   */
  resume?: { assistant: AssistantMessage; callIds: string[]; decisions: Record<string, ResumeDecision>; abort?: { reason?: string } };
  /**
   * A continued run (durable execution, `continuation.ts`): the run is already open in the log (its `run.started`, and the `run.resumed` of this
   * takeover, are logged), so `starting` writes nothing and the machine enters `at`, inside turn `turnIndex` / `turnId` (an open turn goes on; else
   * the next one starts). At `tools` the batch is `resume`'s (in-flight calls decided `replay` or `interrupted`).
   */
  continuation?: RunContinuation;
  /**
   * The run's own policy (gated tools, run budget), written in its `run.started` so a continuation elsewhere applies it (`docs/durability.md`). For
   * a continued run it is the recorded policy combined with the continuing process's.
   */
  policy?: RunPolicy;
  /** The context before this run (from the session). */
  messages: AgentMessage[];
  /** Messages this run appends first (the prompt, or drained queue messages on continue). */
  prompts: AgentMessage[];
  /** This run's system prompt, replacing the agent's: held in the run input in the machine's context, not logged. */
  systemPrompt?: string;
  /** True when the prompts came from the steering queue (pi: then no initial steering poll). */
  skipInitialSteering?: boolean;
  toolExecution: ToolExecutionMode;
  /** Names of tools that declare `executionMode: "sequential"`. */
  sequentialTools: string[];
  /** Cap on the calls run per assistant message (default 128, `run-batch.ts`). */
  maxToolCallsPerResponse?: number;
  retry: RetrySettings;
  model: { provider: string; modelId: string; api: string };
  /** Whether `betweenTurns` / `onContextOverflow` hooks exist. */
  hasBetweenTurns?: boolean;
  hasOverflowHook?: boolean;
}

/** Where a continued run re-enters the loop (see {@link RunInput.continuation}). */
export interface RunContinuation {
  /** `tools`: in-flight calls; `streaming`: the model call again; `turnEnding`: the turn's results are in; `steering`: between turns; `turnStarting`: the next turn. */
  at: "tools" | "streaming" | "turnEnding" | "steering" | "turnStarting";
  turnIndex: number;
  turnId: string;
  /** The last assistant message of the run (the one holding the in-flight calls at `tools`). */
  assistant?: AssistantMessage;
  /** Whether the loop goes on to another model call after this turn (the last turn had tool calls). */
  hasMoreToolCalls: boolean;
}

/** How a run ended. */
export interface RunOutput {
  runId: string;
  status: RunStatus;
  messages: AgentMessage[];
  lastAssistant?: AssistantMessage;
  error?: string;
  code?: string;
  turns: number;
  /** `suspended`: the gated calls waiting for approval, in call order. */
  pendingApprovals?: string[];
  /** `budget_exceeded`: the limit that refused a call (`docs/budgets.md`). */
  budget?: BudgetExceeded;
}

/** Events the run actor accepts. */
export type RunEvent =
  | { type: "MODEL.EVENT"; event: ModelStreamEvent }
  | { type: "QUEUE.DRAINED"; queue: "steering" | "followUp"; messages: AgentMessage[] }
  | { type: "ABORT"; reason?: string }
  | { type: "INTERRUPT"; reason: string }
  | { type: "FAIL"; error: string; code?: string }
  | { type: "BUDGET.EXCEEDED"; exceeded: BudgetExceeded; call: "model" | "tool" | "deadline" }
  | ToolParentEvent
  | { type: `xstate.done.actor.tool:${string}`; output: ToolSettled };

/** Events the run actor sends to its parent. */
export type RunParentEvent = {
  type: "QUEUE.DRAIN";
  queue: "steering" | "followUp";
  runId: string;
  /** True when the run goes on after this poll whatever it returns: passive messages may ride along. */
  continuing: boolean;
};

/** Input of the `modelCall` actor. */
export interface ModelCallInput {
  runId: string;
  messages: AgentMessage[];
  /** The message id and turn of this call's assistant message (the records of its stream events). */
  messageId: string;
  turnId: string;
}

/** The run actor's context. */
export interface RunContext {
  input: RunInput;
  /** The loop's own copy of the context (what the next model call sees). */
  messages: AgentMessage[];
  /** Messages this run appended, in order. */
  newMessages: AgentMessage[];
  /** Steering or follow-up messages to inject at the next turn start. */
  pending: AgentMessage[];
  turnIndex: number;
  turnId: string;
  /** Id of the assistant message being streamed (`message.*` events). */
  messageId: string;
  started: boolean;
  partial?: AssistantMessage;
  assistant?: AssistantMessage;
  lastAssistant?: AssistantMessage;
  /** Retries made for the current model call. */
  attempt: number;
  /** Next backoff in ms; -1 = go to overflow recovery, -2 = stop. */
  retryDelayMs: number;
  lastError?: { message: AssistantMessage; error: string };
  overflowTried: boolean;
  batch?: ToolBatch;
  hasMoreToolCalls: boolean;
  stopping?: { status: "aborted" | "interrupted" | "failed" | "budget_exceeded"; reason?: string; code?: string; budget?: BudgetExceeded };
  /** Set when the run stops for approval: the gated calls. */
  suspended?: string[];
}
