/**
 * `GET {base}/sessions/:id/elicitations` (every request with its answer, in order) and `POST .../elicitations/:elicitationId` (`{ action, content? }`
 * recorded `via: "http"`; `400`, `404`, `409` for a conflicting answer, nothing written then). The caller checked auth and the tenant
 * (`docs/mcp.md`).
 */
import { answerElicitation, ElicitationAnswerInvalidError, ElicitationConflictError, ElicitationNotFoundError, listElicitations, type ElicitationAnswer } from "../harness/elicitations.ts";
import type { EventLog } from "../store/event-log.ts";
import { DEFAULT_MAX_BODY_BYTES, readLimitedJson } from "./body-limit.ts";
import { jsonError, jsonResponse } from "./responses.ts";

/** `GET {base}/sessions/:id/elicitations`. */
export async function elicitationList(log: EventLog, sessionId: string): Promise<Response> {
  return jsonResponse(200, { elicitations: await listElicitations(log, sessionId) });
}

function answerFrom(body: unknown): ElicitationAnswer | string {
  const { action, content } = (body ?? {}) as { action?: unknown; content?: unknown };
  if (action === "decline" || action === "cancel") return { action };
  if (action !== "accept") return `"action" must be "accept", "decline" or "cancel"; got ${JSON.stringify(action) ?? "nothing"}.`;
  if (!content || typeof content !== "object" || Array.isArray(content)) return '"content" must be an object of the fields asked for when "action" is "accept".';
  return { action, content: content as Record<string, string> };
}

/** `POST {base}/sessions/:id/elicitations/:elicitationId`. */
export async function answerElicitationRoute(log: EventLog, sessionId: string, elicitationId: string, request: Request, maxBodyBytes = DEFAULT_MAX_BODY_BYTES): Promise<Response> {
  const read = await readLimitedJson(request, maxBodyBytes, { expected: '{ "action": "accept" | "decline" | "cancel", "content"?: { … } }' });
  if ("error" in read) return read.error;
  const answer = answerFrom(read.value);
  if (typeof answer === "string") return jsonError(400, "INVALID_ARGUMENT", answer);
  try {
    const { changed, record } = await answerElicitation(log, sessionId, elicitationId, answer, "http");
    return jsonResponse(200, { changed, elicitation: record });
  } catch (error) {
    if (ElicitationNotFoundError.isInstance(error)) return jsonError(404, error.code, error.message);
    if (ElicitationConflictError.isInstance(error)) return jsonError(409, error.code, error.message);
    if (ElicitationAnswerInvalidError.isInstance(error)) return jsonError(400, error.code, error.message);
    throw error;
  }
}
