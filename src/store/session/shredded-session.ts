/**
 * Sessions that do not read (ours; `docs/privacy.md`): half-deleted (a delete stopped between destroying the key and removing the rows) or damaged.
 * {@link deleteShreddedSession} finishes such a delete from the clear part with a normal delete's tenant check; {@link ownerOfUnreadable} names
 * the owner for `open` and the HTTP routes (any other tenant sees a missing session); {@link openRunInClear} serves the busy checks.
 */
import { DataKeyUnavailableError, EventCorruptError, SessionNotFoundError } from "../../core/errors.ts";
import { ignored } from "../../core/ignored.ts";
import type { ClearEvent, EventLog } from "../event-log.ts";
import { isEventOfType } from "../events/catalogue.ts";
import { controlStreamId } from "../events/control-events.ts";
import { elicitationStreamId } from "../events/elicitation-events.ts";
import { sessionStreamId, tombstoneStreamId, type SessionDeletedData } from "../events/session-events.ts";
import type { OpenRun } from "./session-activity.ts";
import { purgeSessionState } from "./session-purge.ts";

/** True for the error of a read whose data key is destroyed (the session was deleted, or half-deleted). */
export function isKeyDestroyed(error: unknown): boolean {
  return DataKeyUnavailableError.isInstance(error) && error.details.reason === "destroyed";
}

/** True for a destroyed key or `EventCorruptError`: only the session's owner may see such an error; to any other tenant it is missing. */
export function isUnreadableSession(error: unknown): boolean {
  return isKeyDestroyed(error) || EventCorruptError.isInstance(error);
}

/** The tenant of `id`'s `session.created`, read (authenticated): `{ tenant }`, undefined tenant for the default; undefined without one. */
export async function createdTenantOf(log: EventLog, id: string): Promise<{ tenant?: string } | undefined> {
  const [first] = await log.readStream(sessionStreamId(id), { fromVersion: 1, limit: 1 });
  if (first?.version !== 1 || !isEventOfType(first, "session.created")) return undefined;
  const { tenant } = first.data;
  return typeof tenant === "string" ? { tenant } : {};
}

/** The owner of session `id` that did not read: {@link createdTenantOf} when that reads, else its clear tenant; undefined when neither names one. */
export async function ownerOfUnreadable(log: EventLog, id: string): Promise<{ tenant?: string } | undefined> {
  try {
    return await createdTenantOf(log, id);
  } catch (error) {
    if (!isUnreadableSession(error)) throw error;
  }
  try {
    return await clearInfoOf(log, id);
  } catch (error) {
    if (!EventCorruptError.isInstance(error)) throw error;
    ignored("a session.created whose clear JSON is corrupt names no owner: the caller answers it as missing", error);
    return undefined;
  }
}

/** The stream of session `id` read without its key (an encrypted log), or undefined on a log without encryption. */
async function clearStream(log: EventLog, id: string): Promise<ClearEvent[] | undefined> {
  return log.encryption?.readClear(sessionStreamId(id));
}

/** The clear tenant of a `session.created` (undefined when it names none: the default tenant). */
function tenantOf(created: ClearEvent): string | undefined {
  const { tenant } = created.data;
  return typeof tenant === "string" ? tenant : undefined;
}

/**
 * What a session's first event says in clear: `{ tenant }` when it is `session.created` (`tenant` undefined for the default tenant), undefined when
 * the stream is missing, starts otherwise, or the log has no encryption (nothing to read without a key).
 */
async function clearInfoOf(log: EventLog, id: string): Promise<{ tenant?: string } | undefined> {
  const [first] = (await clearStream(log, id)) ?? [];
  if (first?.type !== "session.created") return undefined;
  const tenant = tenantOf(first);
  return tenant === undefined ? {} : { tenant };
}

/** Stored names of the end of a run (`run.ended`, and the four types of its version 1). */
const RUN_ENDS = new Set(["run.ended", "run.finished", "run.failed", "run.aborted", "run.interrupted"]);

/** The open last run of clear events (`run.started` without an end after it; its owner that of the last `run.resumed`), as the activity has it. */
export function openRunInClear(events: readonly ClearEvent[]): Pick<OpenRun, "runId" | "owner"> | undefined {
  let owner: unknown;
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index];
    if (RUN_ENDS.has(event.type)) return undefined;
    if (event.type === "run.resumed" && owner === undefined) owner = event.metadata.owner;
    if (event.type === "run.started") return { runId: typeof event.metadata.runId === "string" ? event.metadata.runId : "", owner: owner ?? event.metadata.owner };
  }
  return undefined;
}

/** The events of session `id` read without its key, for the busy check of a half-deleted session (none on a log without encryption). */
export async function clearEventsOf(log: EventLog, id: string): Promise<readonly ClearEvent[]> {
  return (await clearStream(log, id)) ?? [];
}

/**
 * Finishes the delete of session `id` whose data key is destroyed while its rows remain: a normal delete's tenant check (`visible`, given the clear
 * `session.created`), then its streams and a tombstone in one group commit, its memory rows and ledger use as usual. The tombstone holds what is
 * in clear (`createdAt` is `session.created`'s commit time, `messageCount` 0, no `audit`, `keyDestroyed: true`); blobs only it referenced stay.
 * @returns the tombstone written.
 * @throws SessionNotFoundError for a missing session, or one `visible` refuses.
 */
export async function deleteShreddedSession(log: EventLog, id: string, visible: (info: { tenant?: string } | undefined) => boolean): Promise<SessionDeletedData> {
  const streamId = sessionStreamId(id);
  const events = (await clearStream(log, id)) ?? [];
  const first = events[0];
  const created = first?.type === "session.created" ? first : undefined;
  const notFound = () => new SessionNotFoundError(`No session "${id}" to delete.`, { details: { sessionId: id } });
  if (events.length === 0 || !visible(created && { tenant: tenantOf(created) })) throw notFound();
  const last = events[events.length - 1];
  const tombstone: SessionDeletedData = {
    sessionId: id,
    tenant: (created && tenantOf(created)) ?? "default",
    createdAt: first.time,
    lastEventAt: last.time,
    deletedAt: new Date().toISOString(),
    eventCount: events.length,
    entryCount: events.filter((event) => event.type === "entry.appended").length,
    messageCount: 0,
    firstGlobalPosition: first.globalPosition,
    lastGlobalPosition: last.globalPosition,
    keyDestroyed: true,
  };
  // Issued in the same tick: the SQLite and PostgreSQL logs commit them in one group, as a normal delete does.
  const [removed] = await Promise.all([
    log.deleteStream(streamId),
    log.deleteStream(controlStreamId(id)),
    log.deleteStream(elicitationStreamId(id)),
    log.append(tombstoneStreamId(id), [{ type: "session.deleted", data: tombstone, metadata: { sessionId: id } }]),
  ]);
  if (removed === 0) throw notFound();
  await purgeSessionState(log, { sessionId: id, tenant: tombstone.tenant, events: [] });
  return tombstone;
}
