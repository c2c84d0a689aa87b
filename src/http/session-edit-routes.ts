/**
 * `DELETE {base}/sessions/:id` (events removed, a content-free `session.deleted` tombstone kept; `409 SESSION_BUSY` while it runs here or elsewhere)
 * and `POST {base}/sessions/:id/fork` (`{ entryId?, id? }` → `201 { id, parentSessionId, parentEntryId? }`; `404`, `409` for a taken id, `400`).
 * The caller checks auth and the tenant first.
 */
import { z } from "zod";
import { EntryNotFoundError, SessionBusyError } from "../core/errors.ts";
import { busyMessage } from "./client-errors.ts";
import { assertNoLiveRun } from "../machines/run-lease.ts";
import type { SessionRepository } from "../store/session-types.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import { isKeyDestroyed } from "../store/session/shredded-session.ts";
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

/** `DELETE {base}/sessions/:id` (see the module contract); the tenant was checked. */
export async function deleteSession(context: SessionEditContext, id: string): Promise<Response> {
  if (!context.writable) return jsonError(501, "NOT_SUPPORTED", "This service is read-only (created with a repository, no harness): it cannot delete sessions.");
  try {
    // Opening claims the session (a live owner elsewhere refuses) and recovers a dead run; closing
    // it here leaves no live actor writing to the stream the delete removes. A half-deleted session (its
    // data key destroyed by a delete that stopped before removing its rows) cannot be opened: the
    // lease check below reads its clear run events, and the delete finishes it.
    const opened = await context.pool.open(id).then(
      () => true,
      (error: unknown) => {
        if (isKeyDestroyed(error)) return false;
        throw error;
      },
    );
    if (opened) await context.pool.release(id);
    // Opening does not refuse a run live in another process (a `continue` durability opens it read-only): the run lease does, as for `arbor rm`.
    await assertNoLiveRun(context.repository.log, sessionStreamId(id));
  } catch (error) {
    // The message may name the owning process: the client gets the session only.
    if (SessionBusyError.isInstance(error)) return jsonError(409, "SESSION_BUSY", busyMessage(id));
    throw error;
  }
  await context.repository.delete(id);
  return jsonResponse(200, { deleted: id });
}

const forkBody = z.strictObject({ entryId: z.string().min(1).optional(), id: z.string().optional() });

/** `POST {base}/sessions/:id/fork` (see the module contract); the tenant was checked. */
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
  if (newId !== undefined && (await context.repository.log.streamVersion(sessionStreamId(newId))) > 0) return jsonError(409, "SESSION_EXISTS", `Session "${newId}" already exists.`);
  try {
    const fork = await context.repository.fork(id, { ...(entryId !== undefined ? { entryId } : {}), ...(newId !== undefined ? { newId } : {}) });
    const info = fork.view.info;
    return jsonResponse(201, { id: fork.id, parentSessionId: id, ...(info.parentEntryId !== undefined ? { parentEntryId: info.parentEntryId } : {}) });
  } catch (error) {
    if (EntryNotFoundError.isInstance(error)) return jsonError(404, error.code, error.message);
    throw error;
  }
}
