/**
 * `harness.start(sessionId, input, options)`: a background or scheduled prompt, committed as a task (`task.queued`) that any worker of the fleet
 * claims when `startAt` is due. Unknown sessions (`SessionNotFoundError`), empty prompts, bad `startAt` or a used `taskId` (`InvalidArgumentError`)
 * write nothing; it resolves once the task is durable.
 */
import { InvalidArgumentError, SessionNotFoundError } from "../core/errors.ts";
import type { AgentMessage } from "../core/messages.ts";
import type { EventLog } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import { queueTask } from "../store/task-queue.ts";

/** Options of `harness.start`. */
export interface StartOptions {
  /** Not run before this time (a `Date`, an ISO 8601 string or epoch ms): a scheduled prompt. Default: now. */
  startAt?: Date | string | number;
  /** The task's id (default: a random UUID); one id is one task. */
  taskId?: string;
}

/** What `harness.start` committed. */
export interface StartedTask {
  taskId: string;
  sessionId: string;
  /** ISO 8601, when given. */
  startAt?: string;
}

function dateOf(value: StartOptions["startAt"]): Date | undefined {
  if (value === undefined) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) throw new InvalidArgumentError(`start(): startAt ${JSON.stringify(String(value))} is not a date or time.`, { details: { field: "startAt" } });
  return date;
}

function promptOf(input: string | AgentMessage | AgentMessage[]): string | AgentMessage[] {
  if (typeof input === "string") {
    if (input.trim() === "") throw new InvalidArgumentError("start(): the prompt is empty.", { details: { field: "input" } });
    return input;
  }
  const messages = Array.isArray(input) ? input : [input];
  if (messages.length === 0) throw new InvalidArgumentError("start(): the prompt has no message.", { details: { field: "input" } });
  return messages;
}

/**
 * Queues a background prompt of `sessionId`.
 * @throws (rejects) SessionNotFoundError; InvalidArgumentError for an empty prompt, a bad `startAt` or a used `taskId`.
 */
export async function startBackground(
  log: EventLog,
  tenant: string | undefined,
  sessionId: string,
  input: string | AgentMessage | AgentMessage[],
  options: StartOptions = {},
): Promise<StartedTask> {
  const prompt = promptOf(input);
  const startAt = dateOf(options.startAt);
  if (options.taskId !== undefined && (typeof options.taskId !== "string" || options.taskId === "")) {
    throw new InvalidArgumentError("start(): taskId must be a non-empty string.", { details: { field: "taskId" } });
  }
  const [first] = typeof sessionId === "string" && sessionId !== "" ? await log.readStream(sessionStreamId(sessionId), { fromVersion: 1, limit: 1 }) : [];
  const owner = first && isEventOfType(first, "session.created") ? (first.data.tenant ?? "default") : undefined;
  if (owner === undefined || (tenant !== undefined && owner !== tenant)) {
    throw new SessionNotFoundError(`start(): no session "${String(sessionId)}".`, { details: { sessionId } });
  }
  const queued = await queueTask(log, {
    sessionId,
    input: prompt,
    tenant: owner,
    ...(startAt ? { startAt } : {}),
    ...(options.taskId !== undefined ? { taskId: options.taskId } : {}),
  });
  return { taskId: queued.taskId, sessionId, ...(queued.startAt !== undefined ? { startAt: queued.startAt } : {}) };
}
