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
 * - `findLiveRun(events)` returns the last run when it has no terminal event (the activity
 *   projection's `openRun`, `src/store/session-activity.ts`) and its owner is alive: crash recovery must then leave it alone, and writers must refuse
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
import { isOtherLiveProcess, processStartOf } from "../core/process-group.ts";
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { foldActivityAll, type SessionActivity } from "../store/session-activity.ts";

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
  return isOtherLiveProcess(owner);
}

/**
 * The last run, when it is unfinished and owned by a live other process, read from an
 * activity projection (`view.activity`).
 *
 * @example
 * ```ts
 * const live = liveRunOf(session.view.activity);
 * ```
 */
function liveRunOf(activity: SessionActivity): { runId: string; owner: RunOwner } | undefined {
  const open = activity.openRun;
  return open && isRunOwnerAlive(open.owner) ? { runId: open.runId, owner: open.owner as RunOwner } : undefined;
}

/**
 * The last run, when it is unfinished and owned by a live other process. Folds `events` with
 * the activity reducer (`session-activity.ts`); a caller holding a view reads
 * {@link findLiveStreamRun} with `view.activity` instead.
 *
 * @example
 * ```ts
 * const live = findLiveRun(await log.readStream(sessionStreamId(id)));
 * if (live) console.log(`run ${live.runId} is running in pid ${live.owner.pid}`);
 * ```
 */
export function findLiveRun(events: readonly StoredEvent[]): { runId: string; owner: RunOwner } | undefined {
  return liveRunOf(foldActivityAll(events));
}

/**
 * The live run of a session's activity projection, through the log's stream ownership when it
 * has one (PostgreSQL, any host): the unfinished last run is live while another process holds
 * the stream. Without ownership it is the pid check of {@link isRunOwnerAlive}.
 *
 * @example
 * ```ts
 * const live = await findLiveStreamRun(session.ownership, session.view.activity);
 * ```
 */
export async function findLiveStreamRun(
  ownership: { isOwnedElsewhere(): Promise<boolean> } | undefined,
  activity: SessionActivity,
): Promise<{ runId: string; owner: RunOwner } | undefined> {
  if (!ownership) return liveRunOf(activity);
  const open = activity.openRun;
  return open && (await ownership.isOwnedElsewhere()) ? { runId: open.runId, owner: (open.owner ?? {}) as RunOwner } : undefined;
}

/**
 * Throws `SessionBusyError` when another live process is running this stream's session.
 * Reads and folds the stream unless `activity` (the open session's `view.activity`) is given.
 *
 * @example
 * ```ts
 * await assertNoLiveRun(log, sessionStreamId(id)); // throws SessionBusyError while another process runs it
 * ```
 */
export async function assertNoLiveRun(log: EventLog, streamId: string, activity?: SessionActivity): Promise<void> {
  const ownership = log.ownership;
  const folded = activity ?? foldActivityAll(await log.readStream(streamId));
  const live = await findLiveStreamRun(ownership && { isOwnedElsewhere: () => ownership.isOwnedElsewhere(streamId) }, folded);
  if (live) {
    throw new SessionBusyError(
      `Session ${streamId.replace(/^session-/, "")} has a run in progress in process ${live.owner.pid} on ${live.owner.host}; wait for it to finish or stop that process, then retry.`,
      { details: { runId: live.runId, owner: live.owner } },
    );
  }
}
