/**
 * Control events (ours): stop, steer, follow-up, approve and deny of a session, asked by any process sharing the log and applied by the one running
 * the session (`control-follower.ts`). They live in `control-<id>`, never in the session stream (which has one fenced writer): `control.requested`
 * is appended with `expectedVersion: "any"` (a `stop` names the `runId` it saw), `control.ended` at most once per request by its handler. A process
 * follows a control stream from its end when it opens the session: requests are orders for a live run, not history.
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
