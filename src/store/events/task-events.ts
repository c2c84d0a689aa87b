/**
 * Task events: work that waits for any process of a fleet (a background or scheduled prompt),
 * logged in the task's own stream `task-<taskId>` (not the session's, whose writer is the run's
 * owner), so queuing and claiming never race a running session.
 *
 * Contract (ours; the claim-as-event design of `docs/durability.md`, "A fleet"):
 * - `task.queued` is the stream's first event: the session, the prompt (content, redacted like
 *   every append when the harness has secrets) and `startAt`, the time before which no worker
 *   runs it (a durable timer: absent means now);
 * - a worker takes the task with `task.claimed` (`attempt` from 1, `metadata.owner`: the
 *   process), appended at the version it read (and, on a log with stream ownership, while it
 *   holds the task stream's lock), so exactly one claim wins each round;
 * - `task.released` gives a claim back without a terminal result (the session was busy in
 *   another process, or the worker closed first): any worker may claim again;
 * - exactly one `task.ended` closes the task, with the status of the run that served it
 *   (the words of `run.ended`) and its `runId`, or `failed` with `code` and `error` when no
 *   run could start (the session was deleted);
 * - a claim whose process died (its lock gone on PostgreSQL, its pid gone on one host) is
 *   taken again by another worker with the next `attempt`.
 *
 * @example
 * ```ts
 * for (const event of await log.readStream(taskStreamId(id))) if (isEventOfType(event, "task.ended")) console.log(event.data.status);
 * ```
 */
import { z } from "zod";
import { agentMessageSchema } from "./message-schemas.ts";

const taskId = z.string().min(1);

/**
 * Data of `task.queued` (v1).
 *
 * @example
 * ```ts
 * taskQueuedSchema.parse({ taskId: "t1", sessionId: "s1", kind: "prompt", input: "summarize the log" });
 * ```
 */
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
  status: z.enum(["done", "failed", "aborted", "interrupted", "suspended"]),
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
