/**
 * Catch-up-then-live subscriptions shared by both event logs (ours; the
 * checkpoint-and-poll shape follows Emmett's consumers and KurrentDB's catch-up
 * subscriptions).
 *
 * Contract:
 * - the subscriber keeps one cursor, the global position of the last event it
 *   has passed. Catch-up and live delivery are the SAME loop: read matching events
 *   after the cursor, deliver them in global-position order, advance the cursor.
 *   A commit only sends a wake-up signal; committed batches are never pushed from
 *   memory. So the switch from catch-up to live has no gap and no duplicate;
 * - each read first takes the head position H, then reads matching events with
 *   positions in (cursor, H]. When fewer than a page come back the cursor jumps to
 *   H, so filtered subscriptions do not rescan events they already skipped;
 * - the first page is read synchronously inside `subscribe()`; later pages and
 *   live deliveries run in microtasks (or `setImmediate` between catch-up pages,
 *   so a long catch-up does not starve the event loop);
 * - `fromVersion` (stream subscriptions only) skips events of the stream whose
 *   version is ≤ fromVersion until the first event is delivered;
 * - a read failure ends the Observable with that error; closing the log completes it.
 *
 * @example
 * ```ts
 * const events$ = createCatchUpObservable(source, { fromPosition: 0, streamId: "s-1" });
 * ```
 */
import { Observable } from "rxjs";
import { InvalidArgumentError } from "../core/errors.ts";
import type { StoredEvent, SubscribeOptions } from "./event-log.ts";
import { checkOptionalInteger } from "./log-prepare.ts";

/** What a subscription reads: a filter applied by the log's reader. */
export interface SubscriptionFilter {
  streamId?: string;
  types?: readonly string[];
  /** Only events with version strictly greater than this. */
  afterVersion?: number;
  /** Only events of this tenant's streams (logs with a tenant index). */
  tenant?: string;
}

/** Receives the log's commit signals. */
export interface CommitListener {
  /** Something was committed (here or, for SQLite, by another process). */
  wake(): void;
  /** The log is closing: complete the subscription. */
  close(): void;
}

/** The log-side half of a subscription. All calls are synchronous. */
export interface SubscriptionSource {
  /** The highest committed global position, 0 when empty. */
  head(): number;
  /** Up to `limit` matching events with `after < globalPosition ≤ upTo`, ascending. */
  read(after: number, upTo: number, limit: number, filter: SubscriptionFilter): StoredEvent[];
  /** Registers a listener; returns the function that removes it. */
  listen(listener: CommitListener): () => void;
}

/** Events read per page. */
export const SUBSCRIPTION_PAGE_SIZE = 512;

/**
 * Builds the catch-up-then-live Observable over `source`. Throws
 * `InvalidArgumentError` synchronously for bad options (negative positions,
 * `fromVersion` without `streamId`, non-array `types`).
 */
export function createCatchUpObservable(source: SubscriptionSource, options: SubscribeOptions = {}): Observable<StoredEvent> {
  checkSubscribeOptions(options);
  return new Observable<StoredEvent>((subscriber) => {
    let cursor = options.fromPosition ?? 0;
    const filter: SubscriptionFilter = { streamId: options.streamId, types: options.types, afterVersion: options.fromVersion, tenant: options.tenant };
    let closed = false;
    let scheduled = false;

    const pump = (): void => {
      scheduled = false;
      if (closed) return;
      let page: StoredEvent[];
      let head: number;
      try {
        head = source.head();
        page = head > cursor ? source.read(cursor, head, SUBSCRIPTION_PAGE_SIZE, filter) : [];
      } catch (error) {
        closed = true;
        subscriber.error(error);
        return;
      }
      for (const event of page) {
        if (closed) return;
        cursor = event.globalPosition;
        filter.afterVersion = undefined;
        subscriber.next(event);
      }
      if (closed) return;
      if (page.length === SUBSCRIPTION_PAGE_SIZE) {
        scheduled = true;
        setImmediate(pump);
        return;
      }
      if (head > cursor) cursor = head;
    };
    const schedule = (): void => {
      if (scheduled) return;
      scheduled = true;
      queueMicrotask(pump);
    };
    const unlisten = source.listen({
      wake: schedule,
      close: () => {
        if (closed) return;
        closed = true;
        subscriber.complete();
      },
    });
    pump();
    return () => {
      closed = true;
      unlisten();
    };
  });
}

/**
 * The log-side half of a subscription over an asynchronous store (PostgreSQL).
 * One call reads the head and a page in ONE snapshot, so jumping the cursor to
 * the head never skips an event committed between two reads.
 */
export interface AsyncSubscriptionSource {
  /** Up to `limit` matching events with globalPosition > `after`, ascending, and the head of the same snapshot. */
  readPage(after: number, limit: number, filter: SubscriptionFilter): Promise<{ head: number; events: StoredEvent[] }>;
  /** Registers a listener; returns the function that removes it. */
  listen(listener: CommitListener): () => void;
}

/**
 * The catch-up-then-live Observable over an asynchronous source: the same loop as
 * {@link createCatchUpObservable}, but the first page arrives after the first read
 * (not inside `subscribe()`). One read is in flight at a time; a wake-up during a
 * read makes the loop read again when it ends. Throws `InvalidArgumentError`
 * synchronously for bad options.
 *
 * @example
 * ```ts
 * const events$ = createAsyncCatchUpObservable(source, { fromPosition: 0 });
 * ```
 */
export function createAsyncCatchUpObservable(source: AsyncSubscriptionSource, options: SubscribeOptions = {}): Observable<StoredEvent> {
  checkSubscribeOptions(options);
  return new Observable<StoredEvent>((subscriber) => {
    let cursor = options.fromPosition ?? 0;
    const filter: SubscriptionFilter = { streamId: options.streamId, types: options.types, afterVersion: options.fromVersion, tenant: options.tenant };
    let closed = false;
    let running = false;
    let again = false;

    const pump = async (): Promise<void> => {
      if (closed) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          const { head, events } = await source.readPage(cursor, SUBSCRIPTION_PAGE_SIZE, filter);
          for (const event of events) {
            if (closed) return;
            cursor = event.globalPosition;
            filter.afterVersion = undefined;
            subscriber.next(event);
          }
          if (closed) return;
          if (events.length === SUBSCRIPTION_PAGE_SIZE) {
            again = true;
            await new Promise((resolve) => setImmediate(resolve));
          } else if (head > cursor) {
            cursor = head;
          }
        } while (again && !closed);
      } catch (error) {
        if (!closed) {
          closed = true;
          subscriber.error(error);
        }
      } finally {
        running = false;
      }
    };
    const unlisten = source.listen({
      wake: () => void pump(),
      close: () => {
        if (closed) return;
        closed = true;
        subscriber.complete();
      },
    });
    void pump();
    return () => {
      closed = true;
      unlisten();
    };
  });
}

function checkSubscribeOptions(options: SubscribeOptions): void {
  checkOptionalInteger("subscribe: fromPosition", options.fromPosition, 0);
  checkOptionalInteger("subscribe: fromVersion", options.fromVersion, 0);
  if (options.fromVersion !== undefined && options.streamId === undefined) {
    throw new InvalidArgumentError("subscribe: fromVersion needs a streamId (versions are per stream); use fromPosition for the whole log.");
  }
  if (options.streamId !== undefined && (typeof options.streamId !== "string" || options.streamId.length === 0)) {
    throw new InvalidArgumentError("subscribe: streamId must be a non-empty string.");
  }
  if (options.types !== undefined && !Array.isArray(options.types)) {
    throw new InvalidArgumentError("subscribe: types must be an array of event type names.");
  }
}
