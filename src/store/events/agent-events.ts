/**
 * Typed-agent lifecycle events (`src/agents/`; ours, purista's `agent.started` / `agent.finished`), in the agent's own session stream:
 * `agent.started` after the input was validated, `agent.ended` once per invocation with `done` (the validated `output`), `failed`, `aborted` or
 * `interrupted`, and `usage` summed over the run's model calls. `input` and `output` are content; the audit projection keeps the rest.
 */
import { z } from "zod";

const tokens = z.number().int().nonnegative();

/** Token totals of an agent invocation (tokens) and its cost ($, when prices are known). */
export const agentUsageSchema = z.object({
  input: tokens,
  output: tokens,
  cacheRead: tokens,
  cacheWrite: tokens,
  totalTokens: tokens,
  cost: z.number().nonnegative().optional(),
});

const common = {
  /** The agent's name (`defineAgent({ name })`). */
  agent: z.string().min(1),
  invocationId: z.string().min(1),
};
const ending = {
  ...common,
  /** The agent's run, when it started. */
  runId: z.string().min(1).optional(),
  /** Validation failures sent back to the model. */
  repairs: z.number().int().nonnegative(),
  usage: agentUsageSchema,
};

export const agentStartedSchema = z.object({
  ...common,
  /** How the final answer is produced: `native` structured output, a `tool` (final-answer tool), or plain `text`. */
  mode: z.enum(["native", "tool", "text"]),
  maxRepairs: z.number().int().nonnegative(),
  /** The validated input. */
  input: z.unknown(),
});

export const agentEndedSchema = z.discriminatedUnion("status", [
  z.object({ ...ending, status: z.literal("done"), runId: z.string().min(1), output: z.unknown() }),
  z.object({ ...ending, status: z.literal("failed"), code: z.string(), error: z.string() }),
  z.object({ ...ending, status: z.literal("aborted"), reason: z.string().optional() }),
  z.object({ ...ending, status: z.literal("interrupted"), reason: z.string().optional() }),
]);

/** Agent event types with their current schema version and schema. */
export const AGENT_EVENT_SCHEMAS = {
  "agent.started": { version: 1, schema: agentStartedSchema },
  "agent.ended": { version: 1, schema: agentEndedSchema },
} as const;
