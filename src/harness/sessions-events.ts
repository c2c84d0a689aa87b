/**
 * The harness-wide stream of every session's logged events (`harness.sessions.events$`), scoped to a tenant: session streams only, typed by the
 * catalogue, in global order from `fromPosition` (default: live only) with no gap or duplicate. A harness created with `tenant` refuses another
 * tenant (`InvalidArgumentError`). Cold: each subscription reads the log on its own.
 */
import type { Observable } from "rxjs";
import { concatMap, defer, filter, from, mergeMap, of } from "../core/rx.ts";
import { InvalidArgumentError } from "../core/errors.ts";
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { isArborEvent, type ArborEvent } from "../store/events/catalogue.ts";
import { sessionIdOfStream } from "../store/events/session-events.ts";

/** The sessions of a harness, all at once (see the module contract). */
export interface HarnessSessions {
  /** Every session's events of the harness's tenant (all tenants for an unscoped harness), live from the subscription on. */
  readonly events$: Observable<ArborEvent>;
  /**
   * Every session's events after `fromPosition` (default: the head at subscription), of `tenant` (default the harness's). Throws
   * InvalidArgumentError for another tenant than a scoped harness's.
   */
  events(options?: { fromPosition?: number; tenant?: string }): Observable<ArborEvent>;
}

const DEFAULT_TENANT = "default";

/** Creates the sessions view of a harness over `log` (see the module contract). */
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
