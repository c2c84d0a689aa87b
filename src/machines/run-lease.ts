/**
 * Run ownership: which process is running a session's unfinished run, and is it alive?
 *
 * Contract (ours):
 * - every `run.started` carries `metadata.owner = { pid, host, processStart }` of the
 *   process running it (`processStart` is the kernel's start time of that pid where
 *   `/proc` has it, so a reused pid is not mistaken for the owner);
 * - `isRunOwnerAlive(owner)` is true only for ANOTHER process on THIS host that still
 *   exists with the same start time; an owner on another host cannot be checked and
 *   counts as alive (SQLite WAL files are only shared on one host anyway);
 * - `findLiveRun(events)` returns the last run when it has no terminal event and its
 *   owner is alive: crash recovery must then leave it alone, and writers must refuse
 *   to touch the session (`assertNoLiveRun` throws `SessionBusyError`).
 * Why: without it a second process "recovers" a run that is still going and both
 * write the same session (found by adversarial review).
 *
 * @example
 * ```ts
 * await assertNoLiveRun(log, sessionStreamId(id)); // throws SessionBusyError while another process runs it
 * ```
 */
import { hostname } from "node:os";
import { SessionBusyError } from "../core/errors.ts";
import { processStartOf } from "../core/process-group.ts";
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";

/** The process that owns a run. */
export interface RunOwner {
  pid: number;
  host: string;
  /** Kernel start time of the pid (Linux `/proc/<pid>/stat` field 22), when known. */
  processStart?: string;
}

let self: RunOwner | undefined;

/**
 * This process as a run owner.
 *
 * @example
 * ```ts
 * const { pid, host } = currentRunOwner();
 * ```
 */
export function currentRunOwner(): RunOwner {
  self ??= { pid: process.pid, host: hostname(), ...(processStartOf(process.pid) ? { processStart: processStartOf(process.pid) } : {}) };
  return self;
}

/**
 * True when `owner` is another live process (see the module contract).
 *
 * @example
 * ```ts
 * if (!isRunOwnerAlive(runStarted.metadata.owner)) await recoverSession(session);
 * ```
 */
export function isRunOwnerAlive(owner: unknown): boolean {
  if (!owner || typeof owner !== "object") return false;
  const { pid, host, processStart } = owner as Partial<RunOwner>;
  if (typeof pid !== "number" || typeof host !== "string") return false;
  if (host !== hostname()) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (processStart === undefined) return true;
  return processStartOf(pid) === processStart;
}

/**
 * The last run, when it is unfinished and owned by a live other process.
 *
 * @example
 * ```ts
 * const live = findLiveRun(await log.readStream(sessionStreamId(id)));
 * if (live) console.log(`run ${live.runId} is running in pid ${live.owner.pid}`);
 * ```
 */
export function findLiveRun(events: readonly StoredEvent[]): { runId: string; owner: RunOwner } | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index];
    if (isEventOfType(event, "run.ended")) return undefined;
    if (isEventOfType(event, "run.started")) {
      const owner = event.metadata.owner;
      return isRunOwnerAlive(owner) ? { runId: event.data.runId, owner: owner as RunOwner } : undefined;
    }
  }
  return undefined;
}

/** The last run, when it has no terminal event (whoever owns it). */
function lastUnfinishedRun(events: readonly StoredEvent[]): { runId: string; owner: RunOwner } | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index];
    if (isEventOfType(event, "run.ended")) return undefined;
    if (isEventOfType(event, "run.started")) return { runId: event.data.runId, owner: (event.metadata.owner ?? {}) as RunOwner };
  }
  return undefined;
}

/**
 * {@link findLiveRun} through the log's stream ownership when it has one (PostgreSQL,
 * any host): the unfinished last run is live while another process holds the
 * stream. Without ownership it is the pid check of {@link findLiveRun}.
 *
 * @example
 * ```ts
 * const live = await findLiveStreamRun(log.ownership, "session-abc", events);
 * ```
 */
export async function findLiveStreamRun(
  ownership: { isOwnedElsewhere(): Promise<boolean> } | undefined,
  events: readonly StoredEvent[],
): Promise<{ runId: string; owner: RunOwner } | undefined> {
  if (!ownership) return findLiveRun(events);
  const last = lastUnfinishedRun(events);
  return last && (await ownership.isOwnedElsewhere()) ? last : undefined;
}

/**
 * Throws `SessionBusyError` when another live process is running this stream's session.
 *
 * @example
 * ```ts
 * await assertNoLiveRun(log, sessionStreamId(id)); // throws SessionBusyError while another process runs it
 * ```
 */
export async function assertNoLiveRun(log: EventLog, streamId: string): Promise<void> {
  const ownership = log.ownership;
  const events = await log.readStream(streamId);
  const live = await findLiveStreamRun(ownership && { isOwnedElsewhere: () => ownership.isOwnedElsewhere(streamId) }, events);
  if (live) {
    throw new SessionBusyError(
      `Session ${streamId.replace(/^session-/, "")} has a run in progress in process ${live.owner.pid} on ${live.owner.host}; wait for it to finish or stop that process, then retry.`,
      { details: { runId: live.runId, owner: live.owner } },
    );
  }
}
