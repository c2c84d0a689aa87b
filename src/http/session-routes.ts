/**
 * The read routes over sessions (the caller checked auth and tenant): the tenant's list, most recently appended first (from summary rows, never
 * events); one session's info, tree, context, stats and UI messages from one read; its raw events after `?from=V` or `Last-Event-ID`, then live;
 * its live machine states (`404 NOT_ENABLED` without a recorder).
 */
import type { EventLog } from "../store/event-log.ts";
import type { SessionRepository } from "../store/session-types.ts";
import { jsonError, jsonResponse } from "./responses.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import { Observable } from "../core/rx.ts";
import type { MachineStateRecord, MachineStates } from "../machines/machine-states.ts";
import { jsonEventStreamResponse, logEventStreamResponse } from "./sse.ts";
import { uiMessagesOf } from "./ui-messages.ts";

/** `GET /api/sessions`. */
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

/** `GET /api/sessions/:id/events?from=V`. */
export function sessionEvents(log: EventLog, id: string, request: Request, options: { keepAliveMs?: number } = {}): Response {
  const lastEventId = request.headers.get("last-event-id");
  const raw = lastEventId ?? new URL(request.url).searchParams.get("from") ?? "0";
  const from = /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(from)) {
    return jsonError(400, "INVALID_ARGUMENT", `${lastEventId !== null ? "Last-Event-ID" : '"from"'} must be a stream version (an integer >= 0); got ${JSON.stringify(raw).slice(0, 40)}.`);
  }
  return logEventStreamResponse(log.subscribe({ streamId: sessionStreamId(id), fromVersion: from }), options);
}

/** `GET /api/sessions/:id/machines`. */
export function sessionMachines(machines: MachineStates | undefined, id: string, options: { keepAliveMs?: number } = {}): Response {
  if (!machines) {
    return jsonError(404, "NOT_ENABLED", "No machine states here: create the harness with `inspect: createMachineStates()` and pass the same recorder as `machineStates` to createChatHandler (arbor serve does).");
  }
  const records$ = new Observable<MachineStateRecord>((subscriber) => {
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
