/**
 * Task events (ours; the claim-as-event design of `docs/durability.md`, "A fleet"): work that waits for any process of a fleet, in the task's own
 * stream `task-<taskId>`, so queuing and claiming never race a running session. `task.queued` opens it (session, prompt, `startAt`); a worker
 * appends `task.claimed` at the version it read, so one claim wins each round; `task.released` gives a claim back; exactly one `task.ended` closes
 * it with its run's status. A claim whose process died is taken again with the next `attempt`.
 */
import { z } from "zod";
import { agentMessageSchema } from "./message-schemas.ts";
import { RUN_STATUSES } from "../../core/vocabulary.ts";

const taskId = z.string().min(1);

/** Data of `task.queued` (v1). */
export const taskQueuedSchema = z.object({
  taskId,
  sessionId: z.string().min(1),
  /** What the task does: `prompt` runs `input` as a prompt of the session. */
  kind: z.literal("prompt"),
  /** The prompt: text, or messages. */
  input: z.union([z.string().min(1), z.array(agentMessageSchema).min(1)]),
  /** ISO 8601: not run before this time (a scheduled prompt). */
  startAt: z.iso.datetime({ offset: true }).optional(),
  /** The session's tenant, when not `default`. */
  tenant: z.string().min(1).optional(),
});

/** Data of `task.claimed` (v1): a worker took the task (`metadata.owner`: its process). */
export const taskClaimedSchema = z.object({
  taskId,
  attempt: z.number().int().positive(),
  /** The worker's id (`Worker.id`). */
  worker: z.string().min(1),
});

/** Data of `task.released` (v1): the claim of `attempt` is given back; the task waits again. */
export const taskReleasedSchema = z.object({
  taskId,
  attempt: z.number().int().positive(),
  reason: z.string().min(1),
});

/** Data of `task.ended` (v1): the task's one terminal event. */
export const taskEndedSchema = z.object({
  taskId,
  attempt: z.number().int().positive(),
  /** How the run that served it ended (`run.ended`'s words); `failed` also when no run could start. */
  status: z.enum(RUN_STATUSES),
  runId: z.string().optional(),
  code: z.string().optional(),
  error: z.string().optional(),
});

/**
 * The task event types with their schema versions.
 *
 * @example
 * ```ts
 * TASK_EVENT_SCHEMAS["task.claimed"].schema.parse({ taskId: "t1", attempt: 1, worker: "w1" });
 * ```
 */
export const TASK_EVENT_SCHEMAS = {
  "task.queued": { version: 1, schema: taskQueuedSchema },
  "task.claimed": { version: 1, schema: taskClaimedSchema },
  "task.released": { version: 1, schema: taskReleasedSchema },
  "task.ended": { version: 1, schema: taskEndedSchema },
} as const;
