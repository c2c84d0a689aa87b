/**
 * The task queue of a fleet (ours): background and scheduled prompts as task streams `task-<taskId>` (`events/task-events.ts`); the log is the
 * queue and a claim is the event `task.claimed`. {@link queueTask} opens a new task stream (a used taskId is `InvalidArgumentError`),
 * {@link foldTask} folds one stored task event purely, {@link readTask} reads and folds one task.
 */
import { randomUUID } from "node:crypto";
import type { AgentMessage } from "../core/messages.ts";
import { ExpectedVersionConflictError, InvalidArgumentError } from "../core/errors.ts";
import type { EventLog, StoredEvent } from "./event-log.ts";
import { isEventOfType, type ArborEventData } from "./events/catalogue.ts";

/**
 * The stream of one task.
 *
 * @example
 * ```ts
 * await log.readStream(taskStreamId("t1"));
 * ```
 */
export function taskStreamId(taskId: string): string {
  return `task-${taskId}`;
}

/**
 * The logged types of the task queue.
 *
 * @example
 * ```ts
 * log.subscribe({ types: TASK_EVENT_TYPES }).subscribe((event) => console.log(event.streamId, event.type));
 * ```
 */
export const TASK_EVENT_TYPES = ["task.queued", "task.claimed", "task.released", "task.ended"] as const;

/** A claim of a task: its attempt, the worker, its process (`metadata.owner`) and the claim's global position. */
export interface TaskClaim {
  attempt: number;
  worker: string;
  owner: unknown;
  position: number;
}

/** One task folded from its stream. */
export interface TaskState {
  taskId: string;
  streamId: string;
  /** Stream version of the last folded event. */
  version: number;
  sessionId: string;
  input: string | AgentMessage[];
  /** Epoch ms before which no worker runs it (0: at once). */
  startAt: number;
  tenant?: string;
  /** The current claim (none before the first, and after `task.released`). */
  claim?: TaskClaim;
  /** Every claim, in order. */
  claims: TaskClaim[];
  ended?: ArborEventData<"task.ended">;
}

/** Folds one stored event of a task stream into its state (events of other types leave it as is). */
export function foldTask(state: TaskState | undefined, event: StoredEvent): TaskState | undefined {
  if (isEventOfType(event, "task.queued")) {
    const { taskId, sessionId, input, startAt, tenant } = event.data;
    return {
      taskId,
      streamId: event.streamId,
      version: event.version,
      sessionId,
      input: input as string | AgentMessage[],
      startAt: startAt === undefined ? 0 : Date.parse(startAt),
      ...(tenant !== undefined ? { tenant } : {}),
      claims: [],
    };
  }
  if (!state) return state;
  if (isEventOfType(event, "task.claimed")) {
    const claim: TaskClaim = { attempt: event.data.attempt, worker: event.data.worker, owner: event.metadata.owner, position: event.globalPosition };
    return { ...state, version: event.version, claim, claims: [...state.claims, claim] };
  }
  if (isEventOfType(event, "task.released")) {
    const { claim: _released, ...rest } = state;
    return { ...rest, version: event.version };
  }
  if (isEventOfType(event, "task.ended")) return { ...state, version: event.version, ended: event.data };
  return { ...state, version: event.version };
}

/**
 * Reads and folds one task (undefined when there is no such task).
 *
 * @example
 * ```ts
 * const state = await readTask(log, "t1");
 * ```
 */
export async function readTask(log: EventLog, taskId: string): Promise<TaskState | undefined> {
  let state: TaskState | undefined;
  for (const event of await log.readStream(taskStreamId(taskId))) state = foldTask(state, event);
  return state;
}

/** What {@link queueTask} queues. */
export interface QueueTaskInput {
  /** Default: a random UUID. */
  taskId?: string;
  sessionId: string;
  input: string | AgentMessage[];
  /** Not run before this time. */
  startAt?: Date;
  tenant?: string;
}

/**
 * Appends `task.queued` as the first event of a new task stream; resolves once committed.
 *
 * @throws (rejects) InvalidArgumentError when `taskId` was used before; EventSchemaError for bad input.
 */
export async function queueTask(log: EventLog, input: QueueTaskInput): Promise<{ taskId: string; streamId: string; startAt?: string }> {
  const taskId = input.taskId ?? randomUUID();
  const streamId = taskStreamId(taskId);
  const startAt = input.startAt?.toISOString();
  const data = {
    taskId,
    sessionId: input.sessionId,
    kind: "prompt" as const,
    input: input.input,
    ...(startAt !== undefined ? { startAt } : {}),
    ...(input.tenant !== undefined && input.tenant !== "default" ? { tenant: input.tenant } : {}),
  };
  try {
    await log.append(streamId, [{ type: "task.queued", data, metadata: { sessionId: input.sessionId } }], { expectedVersion: "no_stream" });
  } catch (error) {
    if (!ExpectedVersionConflictError.isInstance(error)) throw error;
    throw new InvalidArgumentError(`Task "${taskId}" exists already; give each task its own id.`, { cause: error, details: { taskId } });
  }
  return { taskId, streamId, ...(startAt !== undefined ? { startAt } : {}) };
}
