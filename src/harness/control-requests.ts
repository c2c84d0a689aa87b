/**
 * Writing a control request (stop, steer, follow-up, approve, deny) for a session from any process sharing the log: one validated
 * `control.requested` in the session's control stream, applied by the process running the session (`control-follower.ts`). It never waits for the
 * request to be applied and checks neither the session nor the caller's rights.
 */
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { controlStreamId, type ControlRequest } from "../store/events/control-events.ts";

/**
 * Appends a control request (see the module contract).
 * @throws (rejects) EventSchemaError for a malformed request; the log's errors.
 * @example
 * await requestControl(log, { action: "steer", sessionId: "chat-1", text: "Stop after this file." });
 */
export async function requestControl(log: EventLog, request: ControlRequest): Promise<StoredEvent> {
  const result = await log.append(controlStreamId(request.sessionId), [{ type: "control.requested", data: request }], { expectedVersion: "any" });
  return result.events[0];
}
