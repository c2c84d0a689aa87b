/**
 * The one writer of a session: every recorded event goes through it in `push` order, one append in flight, everything pushed in one tick committed
 * in ONE version-checked append (consecutive deltas coalesced). Entries are chained to the current leaf at commit time. Prepared appends wait for
 * what was pushed before them and hold the writer; a new writer for the same session starts once the previous one drained; `fence()` may refuse an
 * append. The first failed append poisons the writer: nothing more is written, `onError` is called once, `flush()` resolves and `failure` is set.
 */
import { randomUUID } from "node:crypto";
import type { SessionEntry } from "../core/entries.ts";
import type { EventMetadata, NewEvent, StoredEvent } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import type { NewEntry, SessionHandle } from "../store/session-types.ts";
import { ignoreError } from "../core/ignored.ts";

/** Options of {@link createSessionWriter}. */
export interface SessionWriterOptions {
  session: SessionHandle;
  /** Called once with the error of the first failed append. */
  onError?: (error: unknown) => void;
  /** Called after each committed batch with the stored events, in order. */
  onCommitted?: (events: StoredEvent[]) => void;
  /** Checked before every append: an error (a lost lease) refuses that append and poisons the writer, like a failed append. */
  fence?: () => unknown;
}

/** The single writer of one session (see the module contract). */
export interface SessionWriter {
  /** Queues events for the next group commit. Ignored once the writer has failed. */
  push(...events: NewEvent[]): void;
  /**
   * Resolves when every event pushed before this call is committed (or dropped after a failure); events pushed later do not delay it. Never rejects.
   */
  flush(): Promise<void>;
  /** Commit before effect: `flush()` that rejects with the writer's failure; awaited before any effect the pushed events explain. */
  commit(): Promise<void>;
  /** One prepared append of entries (`SessionHandle.appendEntries`) in writer order; see the module contract. */
  appendEntries(entries: NewEntry[], options?: { extraEvents?: NewEvent[]; metadata?: EventMetadata }): Promise<SessionEntry[]>;
  /** One prepared append of events (`SessionHandle.appendEvents`) in writer order. */
  appendEvents(events: NewEvent[]): Promise<StoredEvent[]>;
  /** Moves the leaf (`SessionHandle.moveLeaf`) in writer order. */
  moveLeaf(leafId: string | null): Promise<void>;
  /** The error that poisoned the writer, if any. */
  readonly failure: unknown;
  /** Resolves once nothing of this writer is queued or in flight (or it failed). Never rejects. */
  drained(): Promise<void>;
  /** Number of committed appends (group commits) so far. */
  readonly commits: number;
}

/** A fresh entry id: 8 hex characters, like pi's, re-drawn on collision with the view. */
export function newEntryId(session: SessionHandle, taken?: ReadonlySet<string>): string {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const id = randomUUID().replaceAll("-", "").slice(0, 8);
    if (!session.view.getEntry(id) && !taken?.has(id)) return id;
  }
  return randomUUID();
}

function sameDeltaTarget(a: NewEvent, b: NewEvent): boolean {
  if (!isEventOfType(a, "message.delta") || !isEventOfType(b, "message.delta")) return false;
  return a.data.messageId === b.data.messageId && a.data.kind === b.data.kind && a.data.contentIndex === b.data.contentIndex;
}

/** The last writer created for each session handle (the handover, see the module contract). */
const latestWriter = new WeakMap<SessionHandle, SessionWriter>();

/** Creates the writer of one session. See the module contract for ordering, group commit and failure semantics. */
export function createSessionWriter(options: SessionWriterOptions): SessionWriter {
  const { session } = options;
  // The previous writer of this session drains before this one appends anything.
  let handover: Promise<void> | undefined = latestWriter.get(session)?.drained();
  let buffer: NewEvent[] = [];
  let inFlight: Promise<void> | undefined;
  let scheduled = false;
  let failure: unknown;
  let commits = 0;
  // Sequence numbers: `pushed` counts events pushed, `committed` those durably stored. A flush waits for the count pushed when it was called, so a
  // busy stream of later pushes (deltas, updates of other tools) never delays it.
  let pushed = 0;
  let committed = 0;
  const waiters: { target: number; resolve: () => void }[] = [];

  // Waiters resolve in the order they flushed (tools of a batch start in call order).
  const settleWaiters = () => {
    const ready = waiters.filter((waiter) => failure !== undefined || waiter.target <= committed);
    if (ready.length === 0) return;
    waiters.splice(0, waiters.length, ...waiters.filter((waiter) => !ready.includes(waiter)));
    for (const waiter of ready) waiter.resolve();
  };

  const chainEntries = (events: NewEvent[]): NewEvent[] => {
    let leaf = session.view.leafId;
    const taken = new Set<string>();
    const renamed = new Map<string, string>();
    return events.map((event) => {
      if (!isEventOfType(event, "entry.appended")) {
        if (isEventOfType(event, "message.ended", "tool.ended") && event.data.entryId !== undefined && renamed.has(event.data.entryId)) {
          return { ...event, data: { ...event.data, entryId: renamed.get(event.data.entryId) } };
        }
        return event;
      }
      let id = event.data.entry.id;
      if (session.view.getEntry(id) || taken.has(id)) {
        const fresh = newEntryId(session, taken);
        renamed.set(id, fresh);
        id = fresh;
      }
      taken.add(id);
      const entry: SessionEntry = { ...event.data.entry, id, parentId: leaf };
      leaf = id;
      return { ...event, data: { entry } };
    });
  };

  const afterHandover = async (): Promise<void> => {
    if (!handover) return;
    await handover;
    handover = undefined;
  };

  const commit = async (): Promise<void> => {
    await afterHandover();
    while (buffer.length > 0 && failure === undefined) {
      const batch = chainEntries(buffer);
      const upTo = pushed;
      buffer = [];
      try {
        const fenced = options.fence?.();
        if (fenced !== undefined) throw fenced;
        const stored = await session.appendEvents(batch);
        commits += 1;
        committed = upTo;
        options.onCommitted?.(stored);
      } catch (error) {
        failure = error;
        buffer = [];
        options.onError?.(error);
      }
      settleWaiters();
    }
    buffer = failure === undefined ? buffer : [];
  };

  const schedule = () => {
    if (scheduled || inFlight) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      inFlight = commit().finally(() => {
        inFlight = undefined;
        if (buffer.length > 0 && failure === undefined) schedule();
        else settleWaiters();
      });
    });
  };

  const flush = (): Promise<void> => {
    if (failure !== undefined || committed >= pushed) return Promise.resolve();
    const target = pushed;
    return new Promise<void>((resolve) => waiters.push({ target, resolve }));
  };

  /** A prepared append: after what was pushed before, holding the writer while it runs. */
  const prepared = async <T>(work: () => Promise<T>, storedOf: (result: T) => StoredEvent[]): Promise<T> => {
    await afterHandover();
    await flush();
    while (failure === undefined && (inFlight || scheduled)) await (inFlight ?? new Promise((resolve) => setImmediate(resolve)));
    if (failure !== undefined) throw failure;
    const fenced = options.fence?.();
    if (fenced !== undefined) {
      failure = fenced;
      buffer = [];
      options.onError?.(fenced);
      settleWaiters();
      throw fenced;
    }
    const run = work();
    inFlight = run.then(() => undefined, ignoreError("a failed commit is handled where it is awaited, below"));
    void inFlight.finally(() => {
      inFlight = undefined;
      if (buffer.length > 0 && failure === undefined) schedule();
      else settleWaiters();
    });
    try {
      const result = await run;
      commits += 1;
      const stored = storedOf(result);
      if (stored.length > 0) options.onCommitted?.(stored);
      return result;
    } catch (error) {
      // A refused append poisons the writer (nothing later is written); a refusal before
      // anything was sent (bad input: unknown parent, schema) is the caller's error only.
      if (failure === undefined && isRefusal(error)) {
        failure = error;
        buffer = [];
        options.onError?.(error);
        settleWaiters();
      }
      throw error;
    }
  };

  const writer: SessionWriter = {
    push(...events) {
      if (failure !== undefined) return;
      pushed += events.length;
      for (const event of events) {
        const last = buffer[buffer.length - 1];
        if (last && isEventOfType(last, "message.delta") && isEventOfType(event, "message.delta") && sameDeltaTarget(last, event)) {
          buffer[buffer.length - 1] = { ...last, data: { ...last.data, delta: last.data.delta + event.data.delta } };
        } else {
          buffer.push(event);
        }
      }
      schedule();
    },
    flush,
    async commit() {
      await flush();
      if (failure !== undefined) throw failure;
    },
    appendEntries(entries, appendOptions) {
      return prepared(() => session.appendEntries(entries, appendOptions), () => []);
    },
    appendEvents(events) {
      return prepared(() => session.appendEvents(events), (result) => result);
    },
    moveLeaf(leafId) {
      return prepared(() => session.moveLeaf(leafId), () => []);
    },
    get failure() {
      return failure;
    },
    async drained() {
      await afterHandover();
      await flush();
      while (failure === undefined && (inFlight || scheduled || buffer.length > 0)) await (inFlight ?? new Promise((resolve) => setImmediate(resolve)));
    },
    get commits() {
      return commits;
    },
  };
  latestWriter.set(session, writer);
  return writer;
}

/** Codes of an append the log refused (another writer, a fenced-out owner, the log gone), as opposed to bad input. */
const REFUSALS = new Set(["EXPECTED_VERSION_CONFLICT", "SESSION_BUSY", "LOG_COMMIT_FAILED", "LOG_FILE_REPLACED", "LOG_CLOSED"]);

function isRefusal(error: unknown): boolean {
  return REFUSALS.has(String((error as { code?: unknown } | null)?.code));
}
