/**
 * A run's UI chunks from the log: where the current run starts, and its chunks from there
 * (catch-up from the log, then live) through the one projection (`ui-projection.ts`).
 *
 * Contract (ours):
 * - {@link lastRunStart} reads the stream backwards to the last `run.started` or `run.ended`:
 *   the version of a `run.started` with no `run.ended` after it, else undefined;
 * - {@link runChunks$} subscribes to the stream after `afterVersion` (the log's catch-up-then-live
 *   subscription: no gap, no duplicate), projects the first run that starts there, and completes
 *   after that run's `run.ended`; a replay (resume) and the live POST stream are the same code;
 * - {@link sessionTenant} reads the first event only: undefined when the session does not exist.
 *
 * @example
 * ```ts
 * const start = await lastRunStart(log, "session-abc");
 * if (start !== undefined) runChunks$(log, "session-abc", start - 1).subscribe(write);
 * ```
 */
import type { UIMessageChunk } from "ai";
import { concatMap, from, Observable, scan, takeWhile } from "rxjs";
import type { EventLog } from "../store/event-log.ts";
import { arborEvents, isEventOfType } from "../store/events/catalogue.ts";
import { DEFAULT_TENANT } from "./auth.ts";
import { initialRunProjection, projectRunEvent, type RunProjectionStep } from "./ui-projection.ts";

/** The stream id of a session (as the repository names it). */
export const sessionStream = (sessionId: string) => `session-${sessionId}`;

/**
 * The tenant of a session, or undefined when the session does not exist.
 *
 * @example
 * ```ts
 * if ((await sessionTenant(log, id)) !== tenant) return notFound();
 * ```
 */
export async function sessionTenant(log: EventLog, sessionId: string): Promise<string | undefined> {
  const [first] = await log.readStream(sessionStream(sessionId), { fromVersion: 1, limit: 1 });
  if (!first || !isEventOfType(first, "session.created")) return undefined;
  return first.data.tenant ?? DEFAULT_TENANT;
}

/**
 * The version of the last `run.started` when that run has not ended, else undefined.
 *
 * @example
 * ```ts
 * const active = (await lastRunStart(log, streamId)) !== undefined;
 * ```
 */
export async function lastRunStart(log: EventLog, streamId: string, pageSize = 256): Promise<number | undefined> {
  let fromVersion = await log.streamVersion(streamId);
  while (fromVersion > 0) {
    const page = await log.readStream(streamId, { fromVersion, limit: pageSize, direction: "backwards" });
    if (page.length === 0) return undefined;
    for (const event of page) {
      if (event.type === "run.ended" || event.type === "run.finished" || event.type === "run.failed" || event.type === "run.aborted" || event.type === "run.interrupted") return undefined;
      if (event.type === "run.started") return event.version;
    }
    fromVersion = page[page.length - 1].version - 1;
  }
  return undefined;
}

/**
 * The UI chunks of the first run starting after `afterVersion`, live until it ends.
 *
 * @example
 * ```ts
 * runChunks$(log, streamId, versionBeforePrompt).subscribe((chunk) => send(chunk));
 * ```
 */
export function runChunks$(log: EventLog, streamId: string, afterVersion: number): Observable<UIMessageChunk> {
  return log.subscribe({ streamId, fromVersion: afterVersion }).pipe(
    arborEvents(),
    scan((step: RunProjectionStep, event) => projectRunEvent(step.state, event), { state: initialRunProjection(), chunks: [] }),
    takeWhile((step) => !step.state.ended, true),
    concatMap((step) => from(step.chunks)),
  );
}
