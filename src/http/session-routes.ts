/**
 * The read routes over sessions: the list, one session (tree, context, UI messages) and its raw
 * event stream.
 *
 * Contract (ours; the caller checked auth and that the session is the request's tenant's):
 * - `sessionList`: the tenant's sessions (`repository.list({ tenant })`: `SessionSummary` rows,
 *   read from the log's per-session summary rows, never each session's events; `updatedAt`,
 *   ISO: the time of the last event appended to the session's stream, a fork or import
 *   counting), the most recently appended first: the order and time `arbor sessions` shows
 *   (`modified` stays the latest message time, pi's);
 * - `sessionDetail`: `{ id, info, name, leafId, version, tree, context, stats, messages }`, where
 *   `tree` is `SessionView.getTree()`, `context` is `buildContext()` for the leaf and `messages`
 *   the AI SDK UI messages (`ui-messages.ts`), all projected from one read of the log;
 * - `sessionEvents`: `?from=V` (a stream version, default 0) or the `Last-Event-ID` header (wins)
 *   selects the events after V; a bad value is a `400` naming it; the stream then follows live;
 * - `sessionMachines`: server-sent events of the session's live machine states (`MachineStateRecord`,
 *   `src/machines/machine-states.ts`): first the latest record of each kept actor, then every new
 *   one, `id:` being its `seq`; never ends by itself; `404 NOT_ENABLED` when the handler has no
 *   recorder.
 *
 * @example
 * ```ts
 * return sessionDetail(repository, log, id);
 * ```
 */
import type { EventLog } from "../store/event-log.ts";
import type { SessionRepository } from "../store/session-types.ts";
import { jsonError, jsonResponse } from "./responses.ts";
import { sessionStream } from "./run-stream.ts";
import { Observable } from "rxjs";
import type { MachineStateRecord, MachineStates } from "../machines/machine-states.ts";
import { jsonEventStreamResponse, logEventStreamResponse } from "./sse.ts";
import { uiMessagesOf } from "./ui-messages.ts";

/**
 * `GET /api/sessions`.
 *
 * @example
 * ```ts
 * const response = await sessionList(repository, "default");
 * ```
 */
export async function sessionList(repository: SessionRepository, tenant: string): Promise<Response> {
  // Already in the one order of session lists (`SessionRepository.list`).
  return jsonResponse(200, { sessions: await repository.list({ tenant }) });
}

/**
 * `GET /api/sessions/:id`.
 *
 * @example
 * ```ts
 * const { tree, context, messages } = await (await sessionDetail(repository, log, id)).json();
 * ```
 */
export async function sessionDetail(repository: SessionRepository, log: EventLog, id: string): Promise<Response> {
  const handle = await repository.open(id);
  const view = handle.view;
  const events = await log.readStream(sessionStream(id), { fromVersion: 1 });
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

/**
 * `GET /api/sessions/:id/events?from=V`.
 *
 * @example
 * ```ts
 * return sessionEvents(log, id, request);
 * ```
 */
export function sessionEvents(log: EventLog, id: string, request: Request, options: { keepAliveMs?: number } = {}): Response {
  const lastEventId = request.headers.get("last-event-id");
  const raw = lastEventId ?? new URL(request.url).searchParams.get("from") ?? "0";
  const from = /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(from)) {
    return jsonError(400, "INVALID_ARGUMENT", `${lastEventId !== null ? "Last-Event-ID" : '"from"'} must be a stream version (an integer >= 0); got ${JSON.stringify(raw).slice(0, 40)}.`);
  }
  return logEventStreamResponse(log.subscribe({ streamId: sessionStream(id), fromVersion: from }), options);
}

/**
 * `GET /api/sessions/:id/machines`.
 *
 * @example
 * ```ts
 * return sessionMachines(machineStates, id);
 * ```
 */
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
