/**
 * A session's audit source (ours): the events of its own stream and of its elicitation stream (`elicitation-<sessionId>`), catch-up then live, in
 * log order (ascending global position, each event once; `streams-in-log-order.ts`), which `toAuditEvents` projects to the session's audit events.
 */
import type { Observable } from "../../core/rx.ts";
import type { EventLog, StoredEvent } from "../event-log.ts";
import { elicitationStreamId } from "../events/elicitation-events.ts";
import { sessionStreamId } from "../events/session-events.ts";
import { streamsInLogOrder } from "./streams-in-log-order.ts";

/**
 * The stored events of a session and of its elicitations, catch-up then live, in log order (see the module contract). Pipe it through
 * `toAuditEvents()` for the session's audit stream with its elicitations (what `session.auditEvents$` is).
 *
 * @example
 * ```ts
 * sessionAuditSource(log, "chat-1").pipe(toAuditEvents()).subscribe((event) => console.log(event.type, event.stream ?? "session"));
 * ```
 */
export function sessionAuditSource(log: EventLog, sessionId: string): Observable<StoredEvent> {
  return streamsInLogOrder(log, [
    { streamId: sessionStreamId(sessionId), afterVersion: 0 },
    { streamId: elicitationStreamId(sessionId), afterVersion: 0 },
  ]);
}
