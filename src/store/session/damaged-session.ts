/**
 * A damaged session in a session list (ours): a session whose stored data does not read (`EventCorruptError`: altered or lost JSON, sealed data that
 * does not authenticate) is one row marked `damaged`, never an error of the whole list. It is listed to its own tenant only. The caller passes over
 * another tenant's streams by the tenant the log stores in clear (`StreamInfo.tenant`) before reading anything; here the owner is confirmed by
 * reading the session's first event alone, `session.created`, whose tenant is authenticated with it on an encrypted log. When that event does not
 * read either, the owner cannot be trusted: the row goes to lists without a tenant filter only (an admin's view; `arbor doctor` names it).
 */
import { EventCorruptError } from "../../core/errors.ts";
import type { EventLog, StreamInfo } from "../event-log.ts";
import { createdTenantOf } from "./shredded-session.ts";
import type { SessionSummary } from "../session-types.ts";

/** What a list does with a session whose fold failed with `error`: a damaged row, nothing (another tenant's, or unverifiable), or rethrow. */
export async function damagedSessionRow(
  log: EventLog,
  stream: StreamInfo,
  id: string,
  error: unknown,
  only: string | undefined,
  defaultTenant: string,
): Promise<SessionSummary | undefined> {
  if (!EventCorruptError.isInstance(error)) throw error;
  let owner: string | undefined;
  try {
    const created = await createdTenantOf(log, id);
    if (created !== undefined) owner = created.tenant ?? defaultTenant;
  } catch (firstError) {
    if (!EventCorruptError.isInstance(firstError)) throw firstError;
  }
  if (only !== undefined && owner !== only) return undefined;
  return {
    id,
    cwd: "",
    created: stream.createdAt,
    modified: stream.updatedAt,
    messageCount: 0,
    firstMessage: "(damaged)",
    tenant: owner ?? stream.tenant ?? defaultTenant,
    updatedAt: stream.updatedAt,
    damaged: { code: error.code, message: error.message },
  };
}
