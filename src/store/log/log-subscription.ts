/**
 * Catch-up-then-live subscriptions shared by the event logs (ours; Emmett's consumers, KurrentDB's catch-up subscriptions). One cursor and one loop
 * for catch-up and live, so the switch has no gap and no duplicate. A commit of this process's writer hands its events over
 * (`CommitListener.committed`) with the head before it: when that head is the cursor and nothing else is pending they are delivered from memory;
 * anything else reads (cursor, head] from the log. The first page is read inside `subscribe()`, later ones in microtasks (`setImmediate` between
 * catch-up pages); a read failure errors the Observable, closing the log completes it.
 */
import { Observable } from "../../core/rx.ts";
import { InvalidArgumentError } from "../../core/errors.ts";
import type { StoredEvent, SubscribeOptions } from "../event-log.ts";
import { checkOptionalInteger, type EventRecord, toStoredEvent } from "./log-prepare.ts";
import { storedTypeNames } from "../events/upcast.ts";

/** What a subscription reads: a filter applied by the log's reader. */
export interface SubscriptionFilter {
  streamId?: string;
  types?: readonly string[];
  /** Only events with version strictly greater than this. */
  afterVersion?: number;
  /** Only events of this tenant's streams (logs with a tenant index). */
  tenant?: string;
}

/**
 * The new events of one commit of this process's writer: every event with a global position above `before` and at most the last record's, as
 * committed (plaintext JSON).
 */
export interface CommittedBatch {
  /** The log's head position just before the commit, read inside its transaction. */
  before: number;
  /** The committed events, in global-position order (at least one). */
  records: readonly EventRecord[];
}

/** Receives the log's commit signals. */
export interface CommitListener {
  /** Something was committed (here or, for SQLite, by another process). */
  wake(): void;
  /** This process committed `batch` (a listener without it is woken instead). */
  committed?(batch: CommittedBatch): void;
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
 * Builds the catch-up-then-live Observable over `source`. Throws `InvalidArgumentError` synchronously for bad options (negative positions,
 * `fromVersion` without `streamId`, non-array `types`).
 */
export function createCatchUpObservable(source: SubscriptionSource, options: SubscribeOptions = {}): Observable<StoredEvent> {
  checkSubscribeOptions(options);
  return new Observable<StoredEvent>((subscriber) => {
    let cursor = options.fromPosition ?? 0;
    const filter: SubscriptionFilter = { streamId: options.streamId, types: options.types, afterVersion: options.fromVersion, tenant: options.tenant };
    let closed = false;
    let scheduled = false;
    // Commits handed over since the last pump; `stale`: a wake-up that only a read can serve.
    const handed: CommittedBatch[] = [];
    let stale = false;
    const wanted = filter.types === undefined ? undefined : new Set(storedTypeNames(filter.types));
    const matches = (record: EventRecord): boolean =>
      (filter.streamId === undefined || record.streamId === filter.streamId) &&
      (wanted === undefined || wanted.has(record.type)) &&
      (filter.afterVersion === undefined || record.version > filter.afterVersion);

    /** Delivers handed-over commits that continue the cursor; false when the log must be read (also when nothing was handed over). */
    const deliverHanded = (): boolean => {
      if (handed.length === 0) return false;
      while (handed.length > 0 && !stale && handed[0].before === cursor) {
        const { records } = handed.shift() as CommittedBatch;
        for (const record of records) {
          if (closed) return true;
          cursor = record.globalPosition;
          if (!matches(record)) continue;
          filter.afterVersion = undefined;
          subscriber.next(toStoredEvent(record));
        }
      }
      return handed.length === 0 && !stale;
    };

    const pump = (): void => {
      scheduled = false;
      if (closed) return;
      try {
        if (deliverHanded() || closed) return;
      } catch (error) {
        closed = true;
        subscriber.error(error);
        return;
      }
      // The read below covers every commit handed over so far.
      handed.length = 0;
      stale = false;
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
      wake: () => {
        stale = true;
        schedule();
      },
      committed: (batch) => {
        handed.push(batch);
        schedule();
      },
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
 * The log-side half of a subscription over an asynchronous store (PostgreSQL). One call reads the head and a page in ONE snapshot, so jumping the
 * cursor to the head never skips an event committed between two reads.
 */
export interface AsyncSubscriptionSource {
  /** Up to `limit` matching events with globalPosition > `after`, ascending, and the head of the same snapshot. */
  readPage(after: number, limit: number, filter: SubscriptionFilter): Promise<{ head: number; events: StoredEvent[] }>;
  /** Registers a listener; returns the function that removes it. */
  listen(listener: CommitListener): () => void;
}

/**
 * The catch-up-then-live Observable over an asynchronous source: the same loop as {@link createCatchUpObservable}, but the first page arrives after
 * the first read (not inside `subscribe()`). One read is in flight at a time; a wake-up during a read makes the loop read again when it ends. Throws
 * `InvalidArgumentError` synchronously for bad options.
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
