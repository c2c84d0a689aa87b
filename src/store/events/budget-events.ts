/**
 * Budget events (ours; `docs/budgets.md`): `budget.reserved` before a model or tool call and `budget.settled` after it, in the tenant's ledger
 * stream `budget-<tenant>`, in dollars, tokens, calls and turns (`estimated` when the provider reported none); `budget.exceeded` is a run event in
 * the session's stream, right before the run ends `budget_exceeded`; `budget.reset` (in the ledger) starts a deleted session's use again from zero.
 * No event holds content.
 */
import { z } from "zod";

const amount = z.number().nonnegative();
/** A budget's limits (`Budget`): also the run policy's `budget` in `run.started`. */
export const budgetLimitsSchema = z.object({
  maxCostUsd: amount.optional(),
  maxTokens: amount.optional(),
  maxToolCalls: amount.optional(),
  maxTurns: amount.optional(),
  maxDurationMs: amount.optional(),
});

const amounts = {
  costUsd: amount,
  tokens: amount,
  toolCalls: amount,
  turns: amount,
};

export const budgetReservedSchema = z.object({
  reservationId: z.string().min(1),
  sessionId: z.string().min(1),
  runId: z.string().min(1),
  kind: z.enum(["model", "tool"]),
  ...amounts,
  /** The run's own limits (per prompt or harness), so a continuation elsewhere keeps them. */
  runBudget: budgetLimitsSchema.optional(),
});

export const budgetSettledSchema = z.object({
  reservationId: z.string().min(1),
  sessionId: z.string().min(1),
  runId: z.string().min(1),
  ...amounts,
  /** True when tokens (and so cost) were estimated from text: the provider reported no usage. */
  estimated: z.boolean(),
});

export const budgetExceededSchema = z.object({
  runId: z.string().min(1),
  scope: z.enum(["run", "session", "tenant"]),
  limit: z.enum(["maxCostUsd", "maxTokens", "maxToolCalls", "maxTurns", "maxDurationMs"]),
  max: amount,
  used: amount,
  reserved: amount,
  requested: amount,
  /** The call that was refused; `deadline`: none, the run's wall time ran out between calls. */
  call: z.enum(["model", "tool", "deadline"]),
});

export const budgetResetSchema = z.object({
  sessionId: z.string().min(1),
  /** Why: the session was deleted (a new session with its id starts with nothing used). */
  reason: z.enum(["session.deleted"]),
});

/**
 * The budget event types with their schema versions and schemas.
 *
 * @example
 * ```ts
 * BUDGET_EVENT_SCHEMAS["budget.exceeded"].schema.parse(data);
 * ```
 */
export const BUDGET_EVENT_SCHEMAS = {
  "budget.reserved": { version: 1, schema: budgetReservedSchema },
  "budget.settled": { version: 1, schema: budgetSettledSchema },
  "budget.exceeded": { version: 1, schema: budgetExceededSchema },
  "budget.reset": { version: 1, schema: budgetResetSchema },
} as const;
