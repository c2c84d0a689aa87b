/**
 * `POST {base}/chat/:id/stop` from any replica: the stop is a control request in the log
 * (`control.requested { action: "stop", runId }`, `src/harness/control-requests.ts`), applied by
 * the process that runs the session, wherever it runs (`src/harness/control-follower.ts`).
 *
 * Contract (ours):
 * - `stopRun(log, sessionId, start)` reads the run that starts at version `start` (the active
 *   run), starts watching the session stream for that run's `run.ended`, writes the request
 *   naming that run, and resolves `true` once the run ended (any status: it was stopped, or it
 *   ended by itself meanwhile), or `false` when it did not end within `timeoutMs` (default
 *   15 000; the owner is gone or stuck: crash recovery ends such a run);
 * - a request never stops a later run of the session (it names its `runId`).
 *
 * @example
 * ```ts
 * const stopped = await stopRun(log, "chat-1", start, { reason: "stopped by the client" });
 * ```
 */
import { filter, firstValueFrom, map, of, timeout } from "rxjs";
import { requestControl } from "../harness/control-requests.ts";
import type { EventLog } from "../store/event-log.ts";
import { isArborEvent } from "../store/events/catalogue.ts";
import { sessionStreamId } from "../store/events/session-events.ts";

/** How long a stop waits for the run to end, in ms. */
export const STOP_TIMEOUT_MS = 15_000;

/**
 * Asks the owner of the run at `start` to stop it and waits for its end (see the module contract).
 *
 * @example
 * ```ts
 * if (await stopRun(log, id, start)) console.log("stopped");
 * ```
 */
export async function stopRun(log: EventLog, sessionId: string, start: number, options: { reason?: string; timeoutMs?: number } = {}): Promise<boolean> {
  const streamId = sessionStreamId(sessionId);
  const [started] = await log.readStream(streamId, { fromVersion: start, limit: 1 });
  if (!started || !isArborEvent(started) || started.type !== "run.started") return false;
  const runId = started.data.runId;
  const ended = firstValueFrom(
    log.subscribe({ streamId, fromVersion: start }).pipe(
      filter((event) => isArborEvent(event) && event.type === "run.ended" && event.data.runId === runId),
      map(() => true),
      timeout({ first: options.timeoutMs ?? STOP_TIMEOUT_MS, with: () => of(false) }),
    ),
  );
  await requestControl(log, { action: "stop", sessionId, runId, ...(options.reason !== undefined ? { reason: options.reason } : {}) });
  return ended;
}
