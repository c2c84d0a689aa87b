/**
 * Typed-agent lifecycle events (`src/agents/`), logged in the agent's own session stream.
 *
 * Contract (ours; the lifecycle grammar of `docs/events.md`, purista's `agent.started` /
 * `agent.finished` renamed to our `.ended` with a `status`):
 * - `agent.started` is written after the input was validated and before the agent's run starts;
 *   `agent.ended` after that run ended, once per invocation, with the same `invocationId`
 *   (a run that stopped for tool approval does not end the invocation; crash recovery writes
 *   `agent.ended` `interrupted` for a standalone invocation whose run it closed);
 * - `agent.ended.status` is `done` (the output was valid; `output` is the validated value),
 *   `failed` (`code`: `AGENT_OUTPUT_INVALID` when repairs ran out, else the run's failure),
 *   `aborted` or `interrupted` (the words of `run.ended`);
 * - `usage` sums the run's model calls, in tokens (0 where the provider reported none);
 * - `input` and `output` are content (the session's messages hold them anyway); an audit
 *   projection without content keeps the other fields.
 *
 * @example
 * ```ts
 * session.events$().pipe(ofType("agent.ended")).subscribe((event) => console.log(event.data.status, event.data.repairs));
 * ```
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
