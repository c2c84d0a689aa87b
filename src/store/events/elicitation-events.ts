/**
 * Elicitation events (ours; shapes MCP's `elicitation/create`): an MCP server asked the user for input while its tool ran, and the answer; the wait
 * is durable (`src/harness/elicitations.ts`, `docs/mcp.md`). They live in `elicitation-<id>`, never in the session stream: `elicitation.requested`
 * with `expectedVersion: "any"` and a `requestDigest` of the question, `elicitation.answered` with the event id `<elicitationId>:answered`, so
 * there is at most one answer (the same again is a no-op, another `EventIdReusedError`).
 */
import { z } from "zod";

const ELICITATION_STREAM_PREFIX = "elicitation-";

/** The stream id of a session's elicitations. */
export function elicitationStreamId(sessionId: string): string {
  return `${ELICITATION_STREAM_PREFIX}${sessionId}`;
}

/** The session id of an elicitation stream id (the inverse of {@link elicitationStreamId}), or undefined if it is not one. */
export function sessionIdOfElicitationStream(streamId: string): string | undefined {
  return streamId.startsWith(ELICITATION_STREAM_PREFIX) ? streamId.slice(ELICITATION_STREAM_PREFIX.length) : undefined;
}

/** A value of an accepted answer: MCP allows strings, numbers, booleans and lists of strings. */
const answerValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]);

/** Data of `elicitation.requested` (v1). */
export const elicitationRequestedSchema = z.object({
  elicitationId: z.string().min(1),
  sessionId: z.string().min(1),
  /** The run whose tool call got the request. */
  runId: z.string().min(1).optional(),
  /** The tool call that got the request; absent when the server had several calls in flight. */
  toolCallId: z.string().min(1).optional(),
  /** The configured MCP server name. */
  server: z.string().min(1),
  /** The server's own name of the tool whose call got the request, when known. */
  toolName: z.string().min(1).optional(),
  /** What the server asks, for a person. */
  message: z.string(),
  /** The JSON Schema (flat object of primitives) the answer's `content` must match. */
  requestedSchema: z.record(z.string(), z.unknown()),
  /** SHA-256 of the canonical JSON of `{ server, message, requestedSchema }`. */
  requestDigest: z.string().min(1),
});

/** Data of `elicitation.answered` (v1). */
export const elicitationAnsweredSchema = z.object({
  elicitationId: z.string().min(1),
  sessionId: z.string().min(1),
  action: z.enum(["accept", "decline", "cancel"]),
  /** `accept`: the values, matching the request's `requestedSchema`. */
  content: z.record(z.string(), answerValue).optional(),
  /**
   * Where the answer came from: `cli`, `http`, `inspector`, `api` (a library call), `terminal` (the asking process's own prompt), or `ended`: nobody
   * answered before the server cancelled its request or the tool call ended (aborted, failed); the action is then `cancel`.
   */
  via: z.enum(["cli", "http", "inspector", "api", "terminal", "ended"]),
});

/** The elicitation event types with their schema versions (see the module contract). */
export const ELICITATION_EVENT_SCHEMAS = {
  "elicitation.requested": { version: 1, schema: elicitationRequestedSchema },
  "elicitation.answered": { version: 1, schema: elicitationAnsweredSchema },
} as const;
