/**
 * Claims of fleet tasks (ours): how a worker takes a task from the log, tells a live claim from a
 * dead one, and finds the run an earlier, dead claim started. Used by `task-worker.ts`.
 *
 * Contract:
 * - {@link claimTask}: on a log with stream ownership (PostgreSQL) the worker first takes the
 *   task stream's lock (`ownership.acquire`: one holder at a time, gone with its process), then
 *   appends `task.claimed` at the version it read; without ownership (SQLite, one host) it
 *   appends at the version it read when the current claim's process is gone, and a concurrent
 *   claim loses on the version check. Resolves `undefined` when another worker has the task or
 *   it ended; the claim's `metadata.owner` is this process (`currentRunOwner`);
 * - {@link isClaimLive}: a claim is live while this process holds it, while another process holds
 *   the task stream's lock (PostgreSQL), or while its pid lives with the same start time (one
 *   host, `isRunOwnerAlive`);
 * - {@link linkedRun}: the run a dead claim started: the first `run.started` of the session after
 *   the claim's position whose `metadata.owner` is the claim's process, with its `run.ended`
 *   status when it has one. A released claim started no run (the worker releases before a run,
 *   or after the log refused it).
 *
 * @example
 * ```ts
 * const claimed = await claimTask(log, task, "worker-1");
 * if (claimed) try { await run(claimed.task); } finally { await releaseHold(claimed); }
 * ```
 */
import { ExpectedVersionConflictError, SessionBusyError } from "../core/errors.ts";
import { currentRunOwner, isRunOwnerAlive, type RunOwner } from "../machines/run-lease.ts";
import type { EventLog } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import type { StreamLease } from "../store/stream-ownership.ts";
import { foldTask, readTask, type TaskClaim, type TaskState } from "../store/task-queue.ts";

/** Task streams whose claim a worker of this process holds (any worker: claims are per process). */
const heldHere = new Set<string>();

/** A task this worker claimed: its state after the claim, the attempt and the stream lock (PostgreSQL). */
export interface ClaimedTask {
  task: TaskState;
  attempt: number;
  /** The claim this attempt follows, when it was not released (its process died): it may have started a run. */
  previous?: TaskClaim;
  lease?: StreamLease;
}

function sameOwner(a: unknown, b: unknown): boolean {
  if (!a || !b || typeof a !== "object" || typeof b !== "object") return false;
  const x = a as Partial<RunOwner>;
  const y = b as Partial<RunOwner>;
  return x.pid === y.pid && x.host === y.host && x.processStart === y.processStart;
}

/**
 * True while the task's current claim is held (see the module contract).
 *
 * @example
 * ```ts
 * if (task.claim && !(await isClaimLive(log, task))) await claimTask(log, task, id);
 * ```
 */
export async function isClaimLive(log: EventLog, task: TaskState): Promise<boolean> {
  if (!task.claim) return false;
  if (heldHere.has(task.streamId)) return true;
  if (log.ownership) return log.ownership.isOwnedElsewhere(task.streamId);
  return isRunOwnerAlive(task.claim.owner);
}

/**
 * Claims `task` for worker `workerId` (see the module contract).
 *
 * @example
 * ```ts
 * const claimed = await claimTask(log, task, "worker-1");
 * ```
 */
export async function claimTask(log: EventLog, task: TaskState, workerId: string): Promise<ClaimedTask | undefined> {
  if (heldHere.has(task.streamId)) return undefined;
  const owner = currentRunOwner();
  let lease: StreamLease | undefined;
  if (log.ownership) {
    try {
      lease = await log.ownership.acquire(task.streamId, { ...owner, worker: workerId });
    } catch (error) {
      if (SessionBusyError.isInstance(error)) return undefined;
      throw error;
    }
  }
  heldHere.add(task.streamId);
  try {
    const fresh = await readTask(log, task.taskId);
    if (!fresh || fresh.ended) throw new Skip();
    if (!lease && fresh.claim && (await isClaimLiveElsewhere(fresh.claim))) throw new Skip();
    const attempt = (fresh.claims.at(-1)?.attempt ?? 0) + 1;
    const previous = fresh.claim;
    const appended = await log.append(
      fresh.streamId,
      [{ type: "task.claimed", data: { taskId: fresh.taskId, attempt, worker: workerId }, metadata: { sessionId: fresh.sessionId, owner } }],
      { expectedVersion: fresh.version },
    );
    const claimed = foldTask(fresh, appended.events[0])!;
    return { task: claimed, attempt, ...(previous ? { previous } : {}), ...(lease ? { lease } : {}) };
  } catch (error) {
    heldHere.delete(task.streamId);
    await lease?.release();
    if (error instanceof Skip || ExpectedVersionConflictError.isInstance(error) || SessionBusyError.isInstance(error)) return undefined;
    throw error;
  }
}

/** Without stream ownership: a claim of another live process, or of this process's other worker. */
function isClaimLiveElsewhere(claim: TaskClaim): boolean {
  return isRunOwnerAlive(claim.owner);
}

/** Not ours to take (ended, or held elsewhere): an internal signal of {@link claimTask}. */
class Skip extends Error {}

/**
 * Gives up this process's hold of a claimed task (after `task.ended` or `task.released`).
 *
 * @example
 * ```ts
 * await releaseHold(claimed);
 * ```
 */
export async function releaseHold(claimed: ClaimedTask): Promise<void> {
  heldHere.delete(claimed.task.streamId);
  await claimed.lease?.release();
}

/** The run a claim started, and how it ended (see the module contract). */
export interface LinkedRun {
  runId: string;
  /** `run.ended`'s status; undefined while the run has no terminal event. */
  status?: "done" | "failed" | "aborted" | "interrupted" | "suspended";
}

/**
 * The run `claim` started in `sessionId`, if any (see the module contract).
 *
 * @example
 * ```ts
 * const linked = claimed.previous ? await linkedRun(log, task.sessionId, claimed.previous) : undefined;
 * ```
 */
export async function linkedRun(log: EventLog, sessionId: string, claim: TaskClaim): Promise<LinkedRun | undefined> {
  let found: LinkedRun | undefined;
  for (const event of await log.readStream(sessionStreamId(sessionId))) {
    if (!found) {
      if (event.globalPosition > claim.position && isEventOfType(event, "run.started") && sameOwner(event.metadata.owner, claim.owner)) found = { runId: event.data.runId };
    } else if (isEventOfType(event, "run.ended") && event.data.runId === found.runId) {
      return { runId: found.runId, status: event.data.status };
    }
  }
  return found;
}
