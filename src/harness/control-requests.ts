/**
 * Writing a control request for a session: stop, steer, follow-up, approve or deny, from any
 * process that shares the log. The process that runs the session applies it
 * (`control-follower.ts`); the request is a `control.requested` event in the session's control
 * stream (`src/store/events/control-events.ts`).
 *
 * Contract (ours):
 * - `requestControl(log, request)` appends one `control.requested` (validated by the log's
 *   catalogue: a malformed request is refused with `EventSchemaError`, nothing written) and
 *   returns the stored event (its `eventId` is the request id that `control.ended` answers);
 * - it never waits for the request to be applied: watch the session stream (a stop's
 *   `run.ended`) or the control stream (`control.ended`) for that;
 * - it does not check that the session exists or who may control it: callers (the HTTP
 *   service) check the tenant first.
 *
 * @example
 * ```ts
 * const request = await requestControl(log, { action: "stop", sessionId: "chat-1", runId });
 * ```
 */
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { controlStreamId, type ControlRequest } from "../store/events/control-events.ts";

/**
 * Appends a control request (see the module contract).
 *
 * @throws (rejects) EventSchemaError for a malformed request; the log's errors.
 * @example
 * ```ts
 * await requestControl(log, { action: "steer", sessionId: "chat-1", text: "Stop after this file." });
 * ```
 */
export async function requestControl(log: EventLog, request: ControlRequest): Promise<StoredEvent> {
  const result = await log.append(controlStreamId(request.sessionId), [{ type: "control.requested", data: request }], { expectedVersion: "any" });
  return result.events[0];
}
