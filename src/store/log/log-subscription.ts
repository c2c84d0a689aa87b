/**
 * Catch-up-then-live subscriptions shared by the event logs (ours; Emmett's consumers, KurrentDB's catch-up subscriptions). One cursor and one loop
 * for catch-up and live, so the switch has no gap and no duplicate. A commit of this process's writer hands its events over
 * (`CommitListener.committed`) with the head before it: when that head is the cursor and nothing else is pending they are delivered from memory;
 * anything else reads (cursor, head] from the log. The first page is read inside `subscribe()`, later ones in microtasks (`setImmediate` between
 * catch-up pages); a read failure errors the Observable, closing the log completes it.
 */
import { observable, type Observable } from "../../core/rx.ts";
import type { Subscriber } from "rxjs";
import { InvalidArgumentError } from "../../core/errors.ts";
import type { EventLog, StoredEvent, SubscribeOptions } from "../event-log.ts";
import { checkOptionalInteger, type EventRecord, refuseTenantFilter } from "./log-prepare.ts";
import { toStoredEvent } from "./log-decode.ts";
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
  return catchUpObservable(options, (listener) => source.listen(listener), (loop, subscriber) => {
    const { filter } = loop;
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
      while (handed.length > 0 && !stale && handed[0].before === loop.cursor) {
        const { records } = handed.shift() as CommittedBatch;
        for (const record of records) {
          if (loop.closed) return true;
          loop.cursor = record.globalPosition;
          if (!matches(record)) continue;
          filter.afterVersion = undefined;
          subscriber.next(toStoredEvent(record));
        }
      }
      return handed.length === 0 && !stale;
    };

    const pump = (): void => {
      scheduled = false;
      if (loop.closed) return;
      try {
        if (deliverHanded() || loop.closed) return;
      } catch (error) {
        loop.fail(error);
        return;
      }
      // The read below covers every commit handed over so far.
      handed.length = 0;
      stale = false;
      let page: StoredEvent[];
      let head: number;
      try {
        head = source.head();
        page = head > loop.cursor ? source.read(loop.cursor, head, SUBSCRIPTION_PAGE_SIZE, filter) : [];
      } catch (error) {
        loop.fail(error);
        return;
      }
      if (!loop.deliver(page)) return;
      if (page.length === SUBSCRIPTION_PAGE_SIZE) {
        scheduled = true;
        setImmediate(pump);
        return;
      }
      if (head > loop.cursor) loop.cursor = head;
    };
    const schedule = (): void => {
      if (scheduled) return;
      scheduled = true;
      queueMicrotask(pump);
    };
    return {
      pump,
      wake: () => {
        stale = true;
        schedule();
      },
      committed: (batch) => {
        handed.push(batch);
        schedule();
      },
    };
  });
}

/** What a synchronous log (in-memory, SQLite) gives {@link syncSubscriptionMethods}. */
export interface SyncSubscriptionHost {
  /** The log's listeners, which its writer wakes or hands its commits to. */
  listeners: Set<CommitListener>;
  head: SubscriptionSource["head"];
  read: SubscriptionSource["read"];
  /** Throws `LogClosedError` naming the operation once the log is closed. */
  ensureOpen(operation: string): void;
  isClosed(): boolean;
  /** Runs after a listener is added or removed (SQLite polls for other processes' commits while any is registered). */
  listenersChanged?(): void;
}

/**
 * A synchronous log's `subscribe` and `headPosition`, both refused once the log is closed (and `subscribe` for a tenant filter: these logs keep
 * no tenant index). A listener registered once the log has closed is completed in a microtask instead.
 */
export function syncSubscriptionMethods(host: SyncSubscriptionHost): Pick<EventLog, "subscribe" | "headPosition"> {
  const { listeners } = host;
  const source: SubscriptionSource = {
    head: () => host.head(),
    read: (after, upTo, limit, filter) => host.read(after, upTo, limit, filter),
    listen(listener) {
      if (host.isClosed()) {
        queueMicrotask(() => listener.close());
        return () => {};
      }
      listeners.add(listener);
      host.listenersChanged?.();
      return () => {
        listeners.delete(listener);
        host.listenersChanged?.();
      };
    },
  };
  return {
    subscribe(subscribeOptions?: SubscribeOptions): Observable<StoredEvent> {
      host.ensureOpen("subscribe");
      refuseTenantFilter("subscribe", subscribeOptions);
      return createCatchUpObservable(source, subscribeOptions);
    },
    async headPosition(): Promise<number> {
      host.ensureOpen("headPosition");
      return host.head();
    },
  };
}

/** Completes the subscription of every listener and forgets them all: the log is closing. */
export function closeListeners(listeners: Set<CommitListener>): void {
  for (const listener of [...listeners]) listener.close();
  listeners.clear();
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
  return catchUpObservable(options, (listener) => source.listen(listener), (loop) => {
    let running = false;
    let again = false;

    const pump = async (): Promise<void> => {
      if (loop.closed) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          const { head, events } = await source.readPage(loop.cursor, SUBSCRIPTION_PAGE_SIZE, loop.filter);
          if (!loop.deliver(events)) return;
          if (events.length === SUBSCRIPTION_PAGE_SIZE) {
            again = true;
            await new Promise((resolve) => setImmediate(resolve));
          } else if (head > loop.cursor) {
            loop.cursor = head;
          }
        } while (again && !loop.closed);
      } catch (error) {
        loop.fail(error);
      } finally {
        running = false;
      }
    };
    return { pump: () => void pump(), wake: () => void pump() };
  });
}

/** One subscription's position and its delivery of events read from the log, the same for the synchronous and the asynchronous loop. */
interface SubscriptionLoop {
  /** The global position delivered up to (events at or below it are never delivered again). */
  cursor: number;
  readonly filter: SubscriptionFilter;
  /** Set once the subscription has ended: completed, errored or unsubscribed. */
  closed: boolean;
  /** Delivers `events` (read from the log, ascending), moving the cursor past each; false when the subscription ended meanwhile. */
  deliver(events: readonly StoredEvent[]): boolean;
  /** Ends the subscription with `error`, unless it has already ended. */
  fail(error: unknown): void;
}

/** What a loop gives the shared Observable: its pump (run once at subscription) and the commit signals it handles. */
type LoopHandlers = Omit<CommitListener, "close"> & { pump(): void };

/**
 * The Observable both loops share: checks `options`, opens the cursor at `fromPosition` with the filter, registers the loop's listener with
 * `listen` (closing the log completes the subscription), runs the first pump, and on unsubscribe ends the loop and removes the listener.
 */
function catchUpObservable(
  options: SubscribeOptions,
  listen: (listener: CommitListener) => () => void,
  startLoop: (loop: SubscriptionLoop, subscriber: Subscriber<StoredEvent>) => LoopHandlers,
): Observable<StoredEvent> {
  checkSubscribeOptions(options);
  return observable<StoredEvent>((subscriber) => {
    const loop: SubscriptionLoop = {
      cursor: options.fromPosition ?? 0,
      filter: { streamId: options.streamId, types: options.types, afterVersion: options.fromVersion, tenant: options.tenant },
      closed: false,
      deliver(events) {
        for (const event of events) {
          if (loop.closed) return false;
          loop.cursor = event.globalPosition;
          loop.filter.afterVersion = undefined;
          subscriber.next(event);
        }
        return !loop.closed;
      },
      fail(error) {
        if (loop.closed) return;
        loop.closed = true;
        subscriber.error(error);
      },
    };
    const { pump, ...handlers } = startLoop(loop, subscriber);
    const unlisten = listen({
      ...handlers,
      close: () => {
        if (loop.closed) return;
        loop.closed = true;
        subscriber.complete();
      },
    });
    pump();
    return () => {
      loop.closed = true;
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
