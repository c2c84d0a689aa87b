/**
 * Control events: stop, steer, follow-up, approve and deny of a session, asked by any process
 * that shares the log, and applied by the process that runs the session (`control-follower.ts`).
 *
 * Contract (ours):
 * - a session's control requests live in their own stream, `controlStreamId(sessionId)`
 *   (`control-<id>`), never in the session stream: the session stream has one writer (the
 *   run's owner, fenced), and a request from another replica must not break its expected
 *   version;
 * - `control.requested` (v1) is appended by the asking process with `expectedVersion: "any"`;
 *   `action` says what: `stop` (with the `runId` the asker saw running, so a late request never
 *   stops a later run), `steer` / `followUp` (a text), `approve` / `deny` (a `toolCallId`,
 *   `reason?`); no process, host or connection detail;
 * - `control.ended` (v1) is appended by the process that handled the request, at most once per
 *   request (its event id is the request's event id + `:ended`): `applied`, or `failed` with the
 *   error's `code` and message. A request that no process runs gets none (the session was idle,
 *   or its run had ended);
 * - requests are orders for a live run, not history: a process starts following a session's
 *   control stream at its current end when it opens the session.
 *
 * @example
 * ```ts
 * await log.append(controlStreamId("chat-1"), [{ type: "control.requested", data: { action: "stop", sessionId: "chat-1", runId } }], { expectedVersion: "any" });
 * ```
 */
import { z } from "zod";

/**
 * The stream id of a session's control requests.
 *
 * @example
 * ```ts
 * controlStreamId("abc"); // "control-abc"
 * ```
 */
export function controlStreamId(sessionId: string): string {
  return `control-${sessionId}`;
}

const sessionId = z.string().min(1);
const reason = z.string().optional();

/**
 * Data of `control.requested` (v1), discriminated by `action`.
 *
 * @example
 * ```ts
 * controlRequestedSchema.parse({ action: "steer", sessionId: "chat-1", text: "Use the staging database." });
 * ```
 */
export const controlRequestedSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("stop"), sessionId, runId: z.string().min(1).optional(), reason }),
  z.object({ action: z.literal("steer"), sessionId, text: z.string().min(1) }),
  z.object({ action: z.literal("followUp"), sessionId, text: z.string().min(1) }),
  z.object({ action: z.literal("approve"), sessionId, toolCallId: z.string().min(1), reason }),
  z.object({ action: z.literal("deny"), sessionId, toolCallId: z.string().min(1), reason }),
]);

/** A control request (the data of `control.requested`). */
export type ControlRequest = z.output<typeof controlRequestedSchema>;

/** What a control request asks for. */
export type ControlAction = ControlRequest["action"];

/**
 * Data of `control.ended` (v1): how the process that runs the session handled a request.
 *
 * @example
 * ```ts
 * controlEndedSchema.parse({ requestId: "0193…", action: "stop", sessionId: "chat-1", status: "applied" });
 * ```
 */
export const controlEndedSchema = z.object({
  /** The event id of the `control.requested` it answers. */
  requestId: z.string().min(1),
  action: z.enum(["stop", "steer", "followUp", "approve", "deny"]),
  sessionId,
  status: z.enum(["applied", "failed"]),
  /** `failed`: the error's stable code, when it has one. */
  code: z.string().optional(),
  /** `failed`: why, in words (no process or connection detail). */
  error: z.string().optional(),
});

/**
 * Control event types with their current schema version and schema.
 *
 * @example
 * ```ts
 * CONTROL_EVENT_SCHEMAS["control.requested"].version; // 1
 * ```
 */
export const CONTROL_EVENT_SCHEMAS = {
  "control.requested": { version: 1, schema: controlRequestedSchema },
  "control.ended": { version: 1, schema: controlEndedSchema },
} as const;
