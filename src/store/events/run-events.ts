/**
 * Run-lifecycle events logged by the session writer from machine transitions (ours; order pi's). Every event carries `metadata.runId`; no message
 * content except `message.delta` and `queue.changed` enqueues (replay needs them); each lifecycle is `<noun>.started` ... `<noun>.ended`, and a run
 * ends with exactly one `run.ended` whose `status` uses `RunOutcome.status`'s words.
 */
import { z } from "zod";
import { agentMessageSchema, usageSchema } from "./message-schemas.ts";
import { budgetLimitsSchema } from "./budget-events.ts";
import { DELTA_KINDS, RUN_KINDS, TOOL_OUTCOMES, APPROVAL_END_STATUSES } from "../../core/vocabulary.ts";

const runId = z.string().min(1);

export const runStartedSchema = z.object({
  runId,
  /** `resume`: the run that carries on after approval decisions (approval.md). */
  kind: z.enum(RUN_KINDS),
  model: z.object({ provider: z.string(), modelId: z.string(), api: z.string().optional() }).optional(),
  /**
   * The run's own policy (`docs/durability.md`): the tools whose calls need approval and the run's budget limits. A process that continues the
   * run applies it combined with its own (the stricter wins). Optional and additive within v1: older runs have none, older readers drop it.
   */
  policy: z
    .object({ requireApproval: z.union([z.literal("all"), z.array(z.string().min(1))]).optional(), budget: budgetLimitsSchema.optional() })
    .optional(),
});
/**
 * `run.resumed` v1: another process continues an unfinished run from the log (durable execution, `docs/durability.md`). `metadata.owner` is the new
 * owner; `previousOwner` is the `metadata.owner` of the run's last `run.started` / `run.resumed`; `reason` says why the run was taken over;
 * `replayToolCallIds` are the in-flight calls of replay-safe tools run again with the same idempotency key, `interruptedToolCallIds` the in-flight
 * calls of replay-unsafe tools that get the `interrupted` result; `closedMessageEntryId` the partial assistant message closed before the model call
 * is issued again.
 */
export const runResumedSchema = z.object({
  runId,
  previousOwner: z.unknown(),
  reason: z.string(),
  replayToolCallIds: z.array(z.string()).optional(),
  interruptedToolCallIds: z.array(z.string()).optional(),
  closedMessageEntryId: z.string().optional(),
});
/** `run.ended` v2 (v1 was four types, `run.finished` / `run.failed` / `run.aborted` / `run.interrupted`): how the run ended (`status`), plus the fields of that ending. */
export const runEndedSchema = z.discriminatedUnion("status", [
  z.object({ runId, status: z.literal("done"), turns: z.number().int() }),
  z.object({
    runId,
    status: z.literal("failed"),
    error: z.string(),
    /** Stable code when the failure is an Arbor error (e.g. `EXPECTED_VERSION_CONFLICT`). */
    code: z.string().optional(),
  }),
  z.object({ runId, status: z.literal("aborted"), reason: z.string().optional() }),
  z.object({
    runId,
    status: z.literal("interrupted"),
    reason: z.string(),
    /** Tool calls that got a synthetic "interrupted" result during recovery. */
    interruptedToolCallIds: z.array(z.string()).optional(),
    /** The entry of the partial assistant message closed as aborted during recovery. */
    closedMessageEntryId: z.string().optional(),
  }),
  z.object({
    runId,
    /** A call was refused by a budget (`budget.exceeded` names the limit; `docs/budgets.md`). */
    status: z.literal("budget_exceeded"),
    /** The refusal's sentence, e.g. "Budget exceeded: the run's maxToolCalls is 3 tool calls (used 3, reserved 0, requested 1)." */
    reason: z.string(),
    scope: z.enum(["run", "session", "tenant"]),
    limit: z.enum(["maxCostUsd", "maxTokens", "maxToolCalls", "maxTurns", "maxDurationMs"]),
  }),
  z.object({
    runId,
    /** Stopped for human approval (ours): the gated calls wait for `approval.ended`, then a `resume` run goes on. */
    status: z.literal("suspended"),
    /** The gated calls that wait (no result yet), in call order. */
    pendingToolCallIds: z.array(z.string()),
    /** Calls that got a synthetic "interrupted" result when recovery closed this run. */
    interruptedToolCallIds: z.array(z.string()).optional(),
  }),
]);

export const turnStartedSchema = z.object({ runId, turnId: z.string(), index: z.number().int() });
export const turnEndedSchema = z.object({
  runId,
  turnId: z.string(),
  index: z.number().int(),
  /** Tool calls whose results this turn produced, in the assistant's call order. */
  toolCallIds: z.array(z.string()),
  /** Stop reason of the turn's assistant message, when there was one. */
  stopReason: z.string().optional(),
});

const role = z.enum(["user", "assistant", "toolResult", "custom", "bashExecution"]);
export const messageStartedSchema = z.object({ messageId: z.string(), role });
export const messageDeltaSchema = z.object({
  messageId: z.string(),
  kind: z.enum(DELTA_KINDS),
  contentIndex: z.number().int(),
  delta: z.string(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
});
export const messageEndedSchema = z.object({
  messageId: z.string(),
  role,
  /** The entry holding the finished message; absent when the message was discarded. */
  entryId: z.string().optional(),
  stopReason: z.string().optional(),
  errorMessage: z.string().optional(),
  /** Usage of this model call (assistant only; counts null when unknown). */
  usage: usageSchema.optional(),
  /**
   * True when the message was NOT appended to the session: a failed attempt that is retried (its deltas stay in the log, the retry's message
   * supersedes it).
   */
  discarded: z.boolean().optional(),
});

export const toolStartedSchema = z.object({ toolCallId: z.string(), toolName: z.string() });
export const toolUpdatedSchema = z.object({
  toolCallId: z.string(),
  toolName: z.string(),
  /** The process group the tool started (bash), recorded right after the spawn so crash recovery can end it. */
  process: z.object({ pgid: z.number().int().positive(), processStart: z.string().optional(), host: z.string() }).optional(),
});
export const toolEndedSchema = z.object({
  toolCallId: z.string(),
  toolName: z.string(),
  isError: z.boolean(),
  outcome: z.enum(TOOL_OUTCOMES),
  /** Wall time of execution in ms. */
  durationMs: z.number().nonnegative(),
  /** The entry holding the tool result. */
  entryId: z.string().optional(),
});

export const queueChangedSchema = z.object({
  queue: z.enum(["steering", "followUp", "passive"]),
  action: z.enum(["enqueued", "dequeued", "cleared"]),
  size: z.number().int().nonnegative(),
  message: agentMessageSchema.optional(),
});

export const retryScheduledSchema = z.object({
  attempt: z.number().int(),
  delayMs: z.number().nonnegative(),
  error: z.string(),
  status: z.number().int().optional(),
});
export const retryStartedSchema = z.object({ attempt: z.number().int() });

export const retryEndedSchema = z.object({ attempt: z.number().int(), success: z.boolean(), error: z.string().optional() });

/**
 * `approval.requested` (ours): a call needs a human decision before it may run. Holds no tool input: `inputDigest` is the SHA-256 (hex) of the
 * prepared arguments as canonical JSON (sorted keys); the arguments themselves live in the assistant entry.
 */
export const approvalRequestedSchema = z.object({
  runId,
  toolCallId: z.string(),
  toolName: z.string(),
  inputDigest: z.string(),
  /**
   * Who asked: the tool's own `needsApproval`, or the agent's / harness's / CLI's policy by tool name; `workflow`: a workflow's approval step (in the
   * workflow's stream: `runId` is the workflow id, `toolCallId` the step id, `toolName` the workflow's name).
   */
  source: z.enum(["tool", "policy", "workflow"]),
});
/** `approval.ended` (ours): the decision (`approved`, `denied`) or `cancelled` (the run was aborted while it waited). */
export const approvalEndedSchema = z.object({
  toolCallId: z.string(),
  toolName: z.string(),
  status: z.enum(APPROVAL_END_STATUSES),
  /** The decider's reason (free text; not in the audit stream). */
  reason: z.string().optional(),
});

export const hookAppliedSchema = z.object({ hook: z.string(), changes: z.array(z.string()) });
export const hookFailedSchema = z.object({ hook: z.string(), error: z.string() });

/** Run event types with their current schema version and schema, and the durability class when not `durable` (`registry.ts`). */
export const RUN_EVENT_SCHEMAS = {
  "run.started": { version: 1, schema: runStartedSchema },
  "run.ended": { version: 2, schema: runEndedSchema },
  "run.resumed": { version: 1, schema: runResumedSchema },
  "turn.started": { version: 1, schema: turnStartedSchema },
  "turn.ended": { version: 1, schema: turnEndedSchema },
  // Streaming progress: nothing acts on it, and the committed entry carries the whole message.
  "message.started": { version: 1, schema: messageStartedSchema, durability: "process-crash-safe" },
  "message.delta": { version: 1, schema: messageDeltaSchema, durability: "process-crash-safe" },
  "message.ended": { version: 1, schema: messageEndedSchema },
  "tool.started": { version: 1, schema: toolStartedSchema },
  "tool.updated": { version: 1, schema: toolUpdatedSchema },
  "tool.ended": { version: 2, schema: toolEndedSchema },
  "queue.changed": { version: 1, schema: queueChangedSchema },
  "retry.scheduled": { version: 1, schema: retryScheduledSchema },
  "retry.started": { version: 1, schema: retryStartedSchema },
  "retry.ended": { version: 2, schema: retryEndedSchema },
  "approval.requested": { version: 1, schema: approvalRequestedSchema },
  "approval.ended": { version: 1, schema: approvalEndedSchema },
  "hook.applied": { version: 1, schema: hookAppliedSchema },
  "hook.failed": { version: 1, schema: hookFailedSchema },
} as const;
