/**
 * Claims of fleet tasks: {@link claimTask} takes the task stream's lease where the log has ownership, then appends `task.claimed` at the version it
 * read (resolving `undefined` when another worker won); {@link isClaimLive} tells a live claim from a dead one; {@link linkedRun} finds the run a
 * dead claim started, with its status.
 */
import { ExpectedVersionConflictError, LeaseLostError, SessionBusyError } from "../core/errors.ts";
import { currentRunOwner, isRunOwnerAlive, type RunOwner } from "../machines/run-lease.ts";
import type { EventLog } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import type { StreamLease } from "../store/log/stream-ownership.ts";
import { foldTask, readTask, type TaskClaim, type TaskState } from "../store/task-queue.ts";
import type { RunStatus } from "../core/vocabulary.ts";

/** Task streams whose claim a worker of this process holds (any worker: claims are per process). */
const heldHere = new Set<string>();

/** A task this worker claimed: its state after the claim, the attempt and the stream lock (PostgreSQL). */
export interface ClaimedTask {
  task: TaskState;
  attempt: number;
  /** The claim this attempt follows, when it was not released (its process died): it may have started a run. */
  previous?: TaskClaim;
  lease?: StreamLease;
  /** The lease's heartbeat (renews it every third of its TTL until {@link releaseHold}). */
  heartbeat?: NodeJS.Timeout;
}

function sameOwner(a: unknown, b: unknown): boolean {
  if (!a || !b || typeof a !== "object" || typeof b !== "object") return false;
  const x = a as Partial<RunOwner>;
  const y = b as Partial<RunOwner>;
  return x.pid === y.pid && x.host === y.host && x.processStart === y.processStart;
}

/** True while the task's current claim is held (see the module contract). */
export async function isClaimLive(log: EventLog, task: TaskState): Promise<boolean> {
  if (!task.claim) return false;
  if (heldHere.has(task.streamId)) return true;
  if (log.ownership) return log.ownership.isOwnedElsewhere(task.streamId);
  return isRunOwnerAlive(task.claim.owner);
}

/** Claims `task` for worker `workerId` (see the module contract). */
export async function claimTask(log: EventLog, task: TaskState, workerId: string, options: { ttlMs?: number } = {}): Promise<ClaimedTask | undefined> {
  if (heldHere.has(task.streamId)) return undefined;
  const owner = currentRunOwner();
  let lease: StreamLease | undefined;
  if (log.ownership) {
    try {
      lease = await log.ownership.acquire(task.streamId, { ...owner, worker: workerId }, options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {});
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
    return { task: claimed, attempt, ...(previous ? { previous } : {}), ...(lease ? { lease, heartbeat: heartbeat(lease) } : {}) };
  } catch (error) {
    heldHere.delete(task.streamId);
    await lease?.release();
    if (error instanceof Skip || ExpectedVersionConflictError.isInstance(error) || SessionBusyError.isInstance(error)) return undefined;
    throw error;
  }
}

/**
 * Renews a claim's lease every third of its TTL while the task runs: a claim whose run outlasts the TTL stays live (else another worker would take
 * the task over, and on PostgreSQL end the connection that holds this process's locks). A renewal refused (the lease was taken over, or released)
 * stops the heartbeat; any other failure is retried at the next beat.
 */
function heartbeat(lease: StreamLease): NodeJS.Timeout {
  const timer = setInterval(() => {
    lease.renew().catch((error: unknown) => {
      if (LeaseLostError.isInstance(error)) clearInterval(timer);
    });
  }, Math.max(50, Math.floor(lease.ttlMs / 3)));
  timer.unref();
  return timer;
}

/** Without stream ownership: a claim of another live process, or of this process's other worker. */
function isClaimLiveElsewhere(claim: TaskClaim): boolean {
  return isRunOwnerAlive(claim.owner);
}

/** Not ours to take (ended, or held elsewhere): an internal signal of {@link claimTask}. */
class Skip extends Error {}

/** Gives up this process's hold of a claimed task (after `task.ended` or `task.released`). */
export async function releaseHold(claimed: ClaimedTask): Promise<void> {
  heldHere.delete(claimed.task.streamId);
  if (claimed.heartbeat) clearInterval(claimed.heartbeat);
  await claimed.lease?.release();
}

/** The run a claim started, and how it ended (see the module contract). */
export interface LinkedRun {
  runId: string;
  /** `run.ended`'s status; undefined while the run has no terminal event. */
  status?: RunStatus;
}

/** The run `claim` started in `sessionId`, if any (see the module contract). */
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
