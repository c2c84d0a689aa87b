/**
 * Run ownership by pid: every `run.started` carries `metadata.owner = { pid, host, processStart }`; `isRunOwnerAlive` is true only for ANOTHER
 * living process on THIS host with that start time (another host counts as alive); `findLiveRun` finds an open last run whose owner lives, which
 * recovery must leave alone (`assertNoLiveRun` throws `SessionBusyError`).
 */
import { hostname } from "node:os";
import { SessionBusyError } from "../core/errors.ts";
import { isOtherLiveProcess, processStartOf } from "../core/process-group.ts";
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { foldActivityAll, type OpenRun, type SessionActivity } from "../store/session/session-activity.ts";
import { sessionIdOfStream } from "../store/events/session-events.ts";
import { clearEventsOf, isKeyDestroyed, openRunInClear } from "../store/session/shredded-session.ts";

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
 * @example
 * const { pid, host } = currentRunOwner();
 */
export function currentRunOwner(): RunOwner {
  self ??= { pid: process.pid, host: hostname(), ...(processStartOf(process.pid) ? { processStart: processStartOf(process.pid) } : {}) };
  return self;
}

/** True when `owner` (a `run.started`'s `metadata.owner`) is this process. */
export function isCurrentRunOwner(owner: unknown): boolean {
  if (!owner || typeof owner !== "object") return false;
  const { pid, host, processStart } = owner as Partial<RunOwner>;
  const self = currentRunOwner();
  return pid === self.pid && host === self.host && processStart === self.processStart;
}

/**
 * True when `owner` is another live process (see the module contract).
 * @example
 * if (!isRunOwnerAlive(runStarted.metadata.owner)) await recoverSession(session);
 */
export function isRunOwnerAlive(owner: unknown): boolean {
  return isOtherLiveProcess(owner);
}

/** What the liveness checks read of a session's activity projection: its open last run. */
type LiveRunSource = { openRun?: Pick<OpenRun, "runId" | "owner"> };

/** The last run, when it is unfinished and owned by a live other process, read from an activity projection (`view.activity`). */
function liveRunOf(activity: LiveRunSource): { runId: string; owner: RunOwner } | undefined {
  const open = activity.openRun;
  return open && isRunOwnerAlive(open.owner) ? { runId: open.runId, owner: open.owner as RunOwner } : undefined;
}

/**
 * The last run, when it is unfinished and owned by a live other process. Folds `events` with the activity reducer (`session-activity.ts`); a caller
 * holding a view reads {@link findLiveStreamRun} with `view.activity` instead.
 * @example
 * const live = findLiveRun(await log.readStream(sessionStreamId(id)));
 * if (live) console.log(`run ${live.runId} is running in pid ${live.owner.pid}`);
 */
export function findLiveRun(events: readonly StoredEvent[]): { runId: string; owner: RunOwner } | undefined {
  return liveRunOf(foldActivityAll(events));
}

/**
 * The live run of a session's activity projection: the open last run while another process holds the stream's lease (or, without ownership, while
 * its pid lives, {@link isRunOwnerAlive}).
 */
export async function findLiveStreamRun(
  ownership: { isOwnedElsewhere(): Promise<boolean> } | undefined,
  activity: LiveRunSource,
): Promise<{ runId: string; owner: RunOwner } | undefined> {
  if (!ownership) return liveRunOf(activity);
  const open = activity.openRun;
  return open && (await ownership.isOwnedElsewhere()) ? { runId: open.runId, owner: (open.owner ?? {}) as RunOwner } : undefined;
}

/**
 * Throws `SessionBusyError` when another live process is running this stream's session.
 * Reads and folds the stream unless `activity` (the open session's `view.activity`) is given; a half-deleted session (its data key destroyed, its rows
 * left) from the run events' clear types and metadata.
 * @example
 * await assertNoLiveRun(log, sessionStreamId(id)); // throws SessionBusyError while another process runs it
 */
export async function assertNoLiveRun(log: EventLog, streamId: string, activity?: SessionActivity): Promise<void> {
  const ownership = log.ownership;
  const folded = activity ?? (await activityOf(log, streamId));
  const live = await findLiveStreamRun(ownership && { isOwnedElsewhere: () => ownership.isOwnedElsewhere(streamId) }, folded);
  if (live) {
    throw new SessionBusyError(
      `Session ${streamId.replace(/^session-/, "")} has a run in progress in process ${live.owner.pid} on ${live.owner.host}; wait for it to finish or stop that process, then retry.`,
      { details: { runId: live.runId, owner: live.owner } },
    );
  }
}

/** The stream's open run: folded from its events, or, when its data key is destroyed (a half-deleted session), from what is in clear. */
async function activityOf(log: EventLog, streamId: string): Promise<LiveRunSource> {
  try {
    return foldActivityAll(await log.readStream(streamId));
  } catch (error) {
    const id = sessionIdOfStream(streamId);
    if (!isKeyDestroyed(error) || id === undefined) throw error;
    const openRun = openRunInClear(await clearEventsOf(log, id));
    return openRun ? { openRun } : {};
  }
}
