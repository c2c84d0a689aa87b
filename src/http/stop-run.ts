/**
 * `POST {base}/chat/:id/stop` from any replica: a `control.requested { action: "stop", runId }` applied by the process running the session.
 * `stopRun` resolves `true` once that run ended (any status), `false` after `timeoutMs` (15 s); it never stops a later run.
 */
import { filter, firstValueFrom, map, observable } from "../core/rx.ts";
import { requestControl } from "../harness/control-requests.ts";
import type { EventLog } from "../store/event-log.ts";
import { isArborEvent } from "../store/events/catalogue.ts";
import { sessionStreamId } from "../store/events/session-events.ts";

/** How long a stop waits for the run to end, in ms. */
export const STOP_TIMEOUT_MS = 15_000;

/** Asks the owner of the run at `start` to stop it and waits for its end (see the module contract). */
export async function stopRun(log: EventLog, sessionId: string, start: number, options: { reason?: string; timeoutMs?: number } = {}): Promise<boolean> {
  const streamId = sessionStreamId(sessionId);
  const [started] = await log.readStream(streamId, { fromVersion: start, limit: 1 });
  if (!started || !isArborEvent(started) || started.type !== "run.started") return false;
  const runId = started.data.runId;
  const ended = firstValueFrom(
    observable<boolean>((subscriber) => {
      const timer = setTimeout(() => subscriber.next(false), options.timeoutMs ?? STOP_TIMEOUT_MS);
      const end = log.subscribe({ streamId, fromVersion: start }).pipe(
        filter((event) => isArborEvent(event) && event.type === "run.ended" && event.data.runId === runId),
        map(() => true),
      );
      const subscription = end.subscribe(subscriber);
      return () => {
        clearTimeout(timer);
        subscription.unsubscribe();
      };
    }),
  );
  await requestControl(log, { action: "stop", sessionId, runId, ...(options.reason !== undefined ? { reason: options.reason } : {}) });
  return ended;
}
