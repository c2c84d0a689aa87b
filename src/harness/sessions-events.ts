/**
 * The harness-wide stream of every session's logged events (`harness.sessions.events$`), scoped
 * to a tenant: what a service shows on a dashboard, feeds to telemetry or to an audit sink,
 * whichever process (or replica) runs the sessions.
 *
 * Contract (ours):
 * - `events(options)` is the log's events of session streams (`session-<id>`: no control,
 *   tombstone or workflow streams), typed by the catalogue (events of user-registered types are
 *   left out), in the log's global order, from `fromPosition` (exclusive; default: the log's head
 *   when subscribed, i.e. live only), then live, with no gap and no duplicate (the log's
 *   subscription: LISTEN/NOTIFY on PostgreSQL, polling across processes on SQLite);
 * - `tenant`: only the sessions of that tenant (a session without one is `default`'s). On a log
 *   with a tenant index (PostgreSQL) the log filters; elsewhere each session's tenant is read
 *   once from its `session.created` and remembered. A harness created with `tenant` sees only
 *   that tenant: asking for another throws `InvalidArgumentError`; without `tenant` (a server
 *   checking tenants per request), `events$` is every tenant's;
 * - cold: each subscription reads the log on its own; unsubscribing stops it.
 *
 * @example
 * ```ts
 * harness.sessions.events$.pipe(ofType("run.ended")).subscribe((event) => console.log(event.streamId, event.data.status));
 * ```
 */
import { concatMap, defer, filter, from, mergeMap, of, type Observable } from "rxjs";
import { InvalidArgumentError } from "../core/errors.ts";
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { isArborEvent, type ArborEvent } from "../store/events/catalogue.ts";
import { sessionIdOfStream } from "../store/events/session-events.ts";

/** The sessions of a harness, all at once (see the module contract). */
export interface HarnessSessions {
  /** Every session's events of the harness's tenant (all tenants for an unscoped harness), live from the subscription on. */
  readonly events$: Observable<ArborEvent>;
  /**
   * Every session's events from `fromPosition` (exclusive global position; default the head at
   * subscription), of `tenant` (default the harness's). Throws InvalidArgumentError for another
   * tenant than a scoped harness's.
   */
  events(options?: { fromPosition?: number; tenant?: string }): Observable<ArborEvent>;
}

const DEFAULT_TENANT = "default";

/**
 * Creates the sessions view of a harness over `log` (see the module contract).
 *
 * @example
 * ```ts
 * const sessions = createHarnessSessions(log, "acme");
 * sessions.events$.subscribe((event) => console.log(event.type));
 * ```
 */
export function createHarnessSessions(log: EventLog, scope: string | undefined): HarnessSessions {
  const tenants = new Map<string, string>();
  const tenantOf = async (streamId: string, event: StoredEvent): Promise<string | undefined> => {
    if (isArborEvent(event) && event.type === "session.created") {
      const tenant = event.data.tenant ?? DEFAULT_TENANT;
      tenants.set(streamId, tenant);
      return tenant;
    }
    const known = tenants.get(streamId);
    if (known !== undefined) return known;
    const [first] = await log.readStream(streamId, { limit: 1 });
    if (!first || !isArborEvent(first) || first.type !== "session.created") return undefined;
    const tenant = first.data.tenant ?? DEFAULT_TENANT;
    tenants.set(streamId, tenant);
    return tenant;
  };

  const events = (options: { fromPosition?: number; tenant?: string } = {}): Observable<ArborEvent> => {
    if (scope !== undefined && options.tenant !== undefined && options.tenant !== scope) {
      throw new InvalidArgumentError(`sessions.events(): tenant "${options.tenant}" differs from the harness's tenant "${scope}".`, { details: { tenant: options.tenant, scope } });
    }
    const tenant = options.tenant ?? scope;
    return defer(() => from(options.fromPosition !== undefined ? Promise.resolve(options.fromPosition) : log.headPosition())).pipe(
      mergeMap((fromPosition) => log.subscribe({ fromPosition, ...(tenant !== undefined && log.tenantIndex ? { tenant } : {}) })),
      filter((event): event is ArborEvent => sessionIdOfStream(event.streamId) !== undefined && isArborEvent(event)),
      tenant === undefined || log.tenantIndex
        ? (source: Observable<ArborEvent>) => source
        : concatMap((event: ArborEvent) => (tenants.get(event.streamId) === tenant && event.type !== "session.created" ? of(event) : from(tenantOf(event.streamId, event)).pipe(concatMap((owner) => (owner === tenant ? of(event) : []))))),
    );
  };

  return {
    get events$() {
      return events();
    },
    events,
  };
}
