/**
 * The read routes over sessions (the caller checked auth and tenant): the tenant's list, most recently appended first (from summary rows, never
 * events); one session's info, tree, context, stats and UI messages from one read; its raw events after `?from=V` or `Last-Event-ID`, then live;
 * its live machine states (`404 NOT_ENABLED` without a recorder). The events stream ends when the session is deleted (an `error` event,
 * `SESSION_DELETED`): it is read in log order with the session's tombstone stream, so it never carries a later session that reuses the id.
 */
import type { EventLog } from "../store/event-log.ts";
import type { SessionRepository } from "../store/session-types.ts";
import { jsonError, jsonResponse } from "./responses.ts";
import { sessionStreamId, tombstoneStreamId } from "../store/events/session-events.ts";
import { observable, type Observable } from "../core/rx.ts";
import type { Subscription } from "rxjs";
import type { StoredEvent } from "../store/event-log.ts";
import { streamsInLogOrder } from "../store/session/streams-in-log-order.ts";
import { sessionTenant } from "./run-stream.ts";
import { SessionNotFoundError } from "../core/errors.ts";
import type { MachineStateRecord, MachineStates } from "../machines/machine-states.ts";
import { jsonEventStreamResponse, logEventStreamResponse } from "./sse.ts";
import { uiMessagesOf } from "./ui-messages.ts";

/** `GET /api/sessions`: 200 with the tenant's sessions, a damaged one as a row marked `damaged` (`SessionRepository.list`), never another tenant's. */
export async function sessionList(repository: SessionRepository, tenant: string): Promise<Response> {
  // Already in the one order of session lists (`SessionRepository.list`).
  return jsonResponse(200, { sessions: await repository.list({ tenant }) });
}

/** `GET /api/sessions/:id`. */
export async function sessionDetail(repository: SessionRepository, log: EventLog, id: string): Promise<Response> {
  const handle = await repository.open(id);
  const view = handle.view;
  const events = await log.readStream(sessionStreamId(id), { fromVersion: 1 });
  const upTo = events.filter((event) => event.version <= view.version);
  return jsonResponse(200, {
    id,
    info: view.info,
    name: view.name,
    leafId: view.leafId,
    version: view.version,
    tree: view.getTree(),
    context: view.buildContext(),
    stats: view.getStats(),
    messages: await uiMessagesOf(upTo),
  });
}

/** `GET /api/sessions/:id/events?from=V`, for session `id` of `tenant` (the caller checked it). */
export function sessionEvents(log: EventLog, id: string, tenant: string, request: Request, options: { keepAliveMs?: number } = {}): Response {
  const lastEventId = request.headers.get("last-event-id");
  const raw = lastEventId ?? new URL(request.url).searchParams.get("from") ?? "0";
  const from = /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(from)) {
    return jsonError(400, "INVALID_ARGUMENT", `${lastEventId !== null ? "Last-Event-ID" : '"from"'} must be a stream version (an integer >= 0); got ${JSON.stringify(raw).slice(0, 40)}.`);
  }
  return logEventStreamResponse(eventsUntilDeleted(log, id, tenant, from), options);
}

/** What ends the events stream of a deleted session (its message is the SSE `error` event's). */
function sessionDeletedError(id: string): Error {
  return new SessionNotFoundError(`SESSION_DELETED: Session "${id}" was deleted; its events end here, and a new session with this id is another stream.`, { details: { sessionId: id } });
}

/**
 * Session `id`'s events after version `from`, catch-up then live, erroring with `SESSION_DELETED` at its next `session.deleted` tombstone. The
 * tombstone stream's version is read first, then the session's tenant again: a delete (and a new session of the id) before that read is caught by the
 * tenant check, any later one by its tombstone, which comes in log order before any event of a session created after it.
 */
function eventsUntilDeleted(log: EventLog, id: string, tenant: string, from: number): Observable<StoredEvent> {
  return observable<StoredEvent>((subscriber) => {
    let closed = false;
    let events: Subscription | undefined;
    const start = async () => {
      const tombstones = tombstoneStreamId(id);
      const seenTombstones = await log.streamVersion(tombstones);
      if ((await sessionTenant(log, id)) !== tenant) throw sessionDeletedError(id);
      if (closed) return;
      events = streamsInLogOrder(log, [
        { streamId: sessionStreamId(id), afterVersion: from },
        { streamId: tombstones, afterVersion: seenTombstones },
      ]).subscribe({
        next: (event) => {
          if (event.streamId !== tombstones) subscriber.next(event);
          else if (event.type === "session.deleted") subscriber.error(sessionDeletedError(id));
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    };
    start().catch((error: unknown) => subscriber.error(error));
    return () => {
      closed = true;
      events?.unsubscribe();
    };
  });
}

/** `GET /api/sessions/:id/machines`. */
export function sessionMachines(machines: MachineStates | undefined, id: string, options: { keepAliveMs?: number } = {}): Response {
  if (!machines) {
    return jsonError(404, "NOT_ENABLED", "No machine states here: create the harness with `inspect: createMachineStates()` and pass the same recorder as `machineStates` to createChatHandler (arbor serve does).");
  }
  const records$ = observable<MachineStateRecord>((subscriber) => {
    let last = 0;
    const send = (record: MachineStateRecord) => {
      if (record.seq <= last) return;
      last = record.seq;
      subscriber.next(record);
    };
    // Subscribe first, then send the current states: nothing falls between; `seq` drops repeats.
    const pending: MachineStateRecord[] = [];
    let replaying = true;
    const unsubscribe = machines.subscribe(id, (record) => (replaying ? pending.push(record) : send(record)));
    for (const record of machines.current(id)) send(record);
    replaying = false;
    for (const record of pending) send(record);
    return unsubscribe;
  });
  return jsonEventStreamResponse(records$, (record) => record.seq, options);
}
