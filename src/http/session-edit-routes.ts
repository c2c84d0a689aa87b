/**
 * The HTTP routes that delete and fork a session (the CLI's `arbor rm` and `arbor fork`).
 *
 * Contract (ours):
 * - `DELETE {base}/sessions/:id`: the session's events are physically removed
 *   (`SessionRepository.delete`), and the content-free `session.deleted` tombstone records the
 *   delete (tenant, times, counts, the audit stream); answers `200 { deleted: id }`. A session open
 *   in this service is closed first; `409 SESSION_BUSY` while it runs or waits for approval here,
 *   or while another live process owns it; `404` for an unknown or another tenant's session;
 * - `POST {base}/sessions/:id/fork`, body `{ entryId?, id? }` (both optional; an empty body is
 *   `{}`): a new session of the same tenant holding the path root→`entryId` (default the leaf),
 *   whose `session.created` records the parent session and entry (the audit of a fork); answers
 *   `201 { id, parentSessionId, parentEntryId? }`. `404` for an unknown session or entry, `409`
 *   when `id` is taken, `400` naming a bad field;
 * - both check auth and the tenant before anything is read or written (the caller does).
 *
 * @example
 * ```ts
 * if (method === "DELETE") return deleteSession(context, id);
 * ```
 */
import { z } from "zod";
import { EntryNotFoundError, SessionBusyError } from "../core/errors.ts";
import type { SessionRepository } from "../store/session-types.ts";
import { sessionStream } from "./run-stream.ts";
import { readLimitedJson } from "./body-limit.ts";
import { jsonError, jsonResponse } from "./responses.ts";
import type { SessionPool } from "./session-pool.ts";

/** What the edit routes need of the handler. */
export interface SessionEditContext {
  repository: SessionRepository;
  pool: SessionPool;
  /** False for a read-only service (`501`). */
  writable: boolean;
  maxBodyBytes: number;
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * `DELETE {base}/sessions/:id` (see the module contract); the tenant was checked.
 *
 * @example
 * ```ts
 * return deleteSession(context, "chat-1");
 * ```
 */
export async function deleteSession(context: SessionEditContext, id: string): Promise<Response> {
  if (!context.writable) return jsonError(501, "NOT_SUPPORTED", "This service is read-only (created with a repository, no harness): it cannot delete sessions.");
  try {
    // Opening claims the session (a live owner elsewhere refuses) and recovers a dead run; closing
    // it here leaves no live actor writing to the stream the delete removes.
    await context.pool.open(id);
    await context.pool.release(id);
  } catch (error) {
    if (SessionBusyError.isInstance(error)) return jsonError(409, "SESSION_BUSY", error.message);
    throw error;
  }
  await context.repository.delete(id);
  return jsonResponse(200, { deleted: id });
}

const forkBody = z.strictObject({ entryId: z.string().min(1).optional(), id: z.string().optional() });

/**
 * `POST {base}/sessions/:id/fork` (see the module contract); the tenant was checked.
 *
 * @example
 * ```ts
 * return forkSession(context, "chat-1", request);
 * ```
 */
export async function forkSession(context: SessionEditContext, id: string, request: Request): Promise<Response> {
  if (!context.writable) return jsonError(501, "NOT_SUPPORTED", "This service is read-only (created with a repository, no harness): it cannot fork sessions.");
  const body = await readLimitedJson(request, context.maxBodyBytes, { allowEmpty: true });
  if ("error" in body) return body.error;
  const parsed = forkBody.safeParse(body.value ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return jsonError(400, "INVALID_ARGUMENT", `Invalid body field "${issue.path.join(".") || "(root)"}": ${issue.message}. The body is { entryId?, id? }.`);
  }
  const { entryId, id: newId } = parsed.data;
  if (newId !== undefined && !SESSION_ID.test(newId)) return jsonError(400, "INVALID_ARGUMENT", `"id" must be 1 to 128 letters, digits, ".", "_", ":" or "-" (starting with a letter or digit); got ${JSON.stringify(newId).slice(0, 80)}.`);
  if (newId !== undefined && (await context.repository.log.streamVersion(sessionStream(newId))) > 0) return jsonError(409, "SESSION_EXISTS", `Session "${newId}" already exists.`);
  try {
    const fork = await context.repository.fork(id, { ...(entryId !== undefined ? { entryId } : {}), ...(newId !== undefined ? { newId } : {}) });
    const info = fork.view.info;
    return jsonResponse(201, { id: fork.id, parentSessionId: id, ...(info.parentEntryId !== undefined ? { parentEntryId: info.parentEntryId } : {}) });
  } catch (error) {
    if (EntryNotFoundError.isInstance(error)) return jsonError(404, error.code, error.message);
    throw error;
  }
}
