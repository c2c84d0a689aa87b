/**
 * A run's UI chunks from the log: {@link lastRunStart} and {@link lastInterruptedRunStart} find where the current run starts; {@link runChunks$}
 * subscribes after a version (catch-up then live, no gap) and projects that run until its `run.ended`, so replay and live are the same code. A
 * delete of the session (its `session.deleted` tombstone, by this process or another) ends the chunks too: a deleted run never logs its end.
 */
import type { UIMessageChunk } from "ai";
import type { Subscription } from "rxjs";
import { concatMap, from, observable, scan, skipWhile, takeWhile, type Observable } from "../core/rx.ts";
import { isCurrentRunOwner } from "../machines/run-lease.ts";
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { arborEvents, isEventOfType, type ArborEvent } from "../store/events/catalogue.ts";
import { sessionIdOfStream, sessionStreamId, tombstoneStreamId } from "../store/events/session-events.ts";
import { isUnreadableSession, ownerOfUnreadable } from "../store/session/shredded-session.ts";
import { DEFAULT_TENANT } from "./auth.ts";
import { initialRunProjection, projectRunEvent, projectSessionDeleted, type RunProjectionStep } from "./ui-projection.ts";

/**
 * The tenant of a session, or undefined when the session does not exist. A half-deleted session (its data key destroyed, its rows left) or a
 * damaged one (its `session.created` does not read) has the tenant its `session.created` keeps in clear, so that another tenant's routes answer it
 * as a missing session; undefined (missing to every tenant) when not even that reads.
 */
export async function sessionTenant(log: EventLog, sessionId: string): Promise<string | undefined> {
  let first: StoredEvent | undefined;
  try {
    [first] = await log.readStream(sessionStreamId(sessionId), { fromVersion: 1, limit: 1 });
  } catch (error) {
    if (!isUnreadableSession(error)) throw error;
    const info = await ownerOfUnreadable(log, sessionId);
    return info && (info.tenant ?? DEFAULT_TENANT);
  }
  if (!first || !isEventOfType(first, "session.created")) return undefined;
  return first.data.tenant ?? DEFAULT_TENANT;
}

/** The version of the last `run.started` when that run has not ended, else undefined. */
export async function lastRunStart(log: EventLog, streamId: string, pageSize = 256): Promise<number | undefined> {
  let fromVersion = await log.streamVersion(streamId);
  while (fromVersion > 0) {
    const page = await log.readStream(streamId, { fromVersion, limit: pageSize, direction: "backwards" });
    if (page.length === 0) return undefined;
    for (const event of page) {
      if (event.type === "run.ended" || event.type === "run.finished" || event.type === "run.failed" || event.type === "run.aborted" || event.type === "run.interrupted") return undefined;
      if (event.type === "run.started") return event.version;
    }
    fromVersion = page[page.length - 1].version - 1;
  }
  return undefined;
}

/** The version of the last run's `run.started` when that run ended `interrupted` and no run started after it, else undefined. */
export async function lastInterruptedRunStart(log: EventLog, streamId: string, pageSize = 256): Promise<number | undefined> {
  let runId: string | undefined;
  let fromVersion = await log.streamVersion(streamId);
  while (fromVersion > 0) {
    const page = await log.readStream(streamId, { fromVersion, limit: pageSize, direction: "backwards" });
    if (page.length === 0) return undefined;
    for (const event of page) {
      if (runId === undefined) {
        if (isEventOfType(event, "run.started")) return undefined;
        if (isEventOfType(event, "run.ended")) {
          if (event.data.status !== "interrupted") return undefined;
          runId = event.data.runId;
        }
      } else if (isEventOfType(event, "run.started") && event.data.runId === runId) {
        return event.version;
      }
    }
    fromVersion = page[page.length - 1].version - 1;
  }
  return undefined;
}

/** The version of the `run.started` whose message this run continues: itself, or for a `resume` run, the run it resumed (recursively). */
export async function messageStart(log: EventLog, streamId: string, runStartVersion: number): Promise<number> {
  let version = runStartVersion;
  for (;;) {
    const [started] = await log.readStream(streamId, { fromVersion: version, limit: 1 });
    if (!started || !isEventOfType(started, "run.started") || started.data.kind !== "resume") return version;
    const previous = await previousRunStart(log, streamId, version - 1);
    if (previous === undefined) return version;
    version = previous;
  }
}

async function previousRunStart(log: EventLog, streamId: string, fromVersion: number, pageSize = 256): Promise<number | undefined> {
  while (fromVersion > 0) {
    const page = await log.readStream(streamId, { fromVersion, limit: pageSize, direction: "backwards" });
    if (page.length === 0) return undefined;
    const started = page.find((event) => event.type === "run.started");
    if (started) return started.version;
    fromVersion = page[page.length - 1].version - 1;
  }
  return undefined;
}

/** Where a chunk stream starts and ends. */
export interface RunChunksOptions {
  /** Fold silently up to this version, then send `start` and the chunks of later events (a live continuation of a message the client holds). */
  emitAfterVersion?: number;
  /** Complete at the first end of the message (`run.ended`, also `suspended`) of an event after this version (default: the first end). */
  endAfterVersion?: number;
  /**
   * Skip every event before the first `run.started` this process owns (`metadata.owner`): a prompt follows its own run, never a run another
   * replica started on the same session meanwhile.
   */
  ownRunOnly?: boolean;
}

/** The `errorText` of the `error` chunk that ends a run whose session was deleted before the run ended. */
export function sessionDeletedText(sessionId: string): string {
  return `SESSION_DELETED: Session "${sessionId}" was deleted while this run was going; nothing more of it is kept. A new prompt with this id starts a new chat.`;
}

/**
 * Emits once (then completes) when session `sessionId` is deleted after the caller read its stream at `seenVersion`: a `session.deleted` tombstone
 * written from now on, or a stream already gone or shorter than `seenVersion` (a delete that came first). Read failures error it.
 */
export function sessionDeleted$(log: EventLog, sessionId: string, seenVersion: number): Observable<void> {
  return observable<void>((subscriber) => {
    let tombstones: Subscription | undefined;
    let closed = false;
    const deleted = () => {
      subscriber.next();
      subscriber.complete();
    };
    const watch = async () => {
      const tombstoneStream = tombstoneStreamId(sessionId);
      const before = await log.streamVersion(tombstoneStream);
      if (closed) return;
      tombstones = log.subscribe({ streamId: tombstoneStream, fromVersion: before }).subscribe({
        next: (event) => {
          if (event.type === "session.deleted") deleted();
        },
        error: (error: unknown) => subscriber.error(error),
      });
      // A tombstone of the catch-up read inside subscribe() ended this before `tombstones` was set.
      if (closed) tombstones.unsubscribe();
      const version = await log.streamVersion(sessionStreamId(sessionId));
      if (!closed && (version === 0 || version < seenVersion)) deleted();
    };
    watch().catch((error: unknown) => subscriber.error(error));
    return () => {
      closed = true;
      tombstones?.unsubscribe();
    };
  });
}

/** The session's events after `afterVersion` (catch-up then live), then `"deleted"` once the session is deleted (see {@link sessionDeleted$}). */
function eventsUntilDeleted(log: EventLog, streamId: string, afterVersion: number): Observable<ArborEvent | "deleted"> {
  const sessionId = sessionIdOfStream(streamId);
  const events = log.subscribe({ streamId, fromVersion: afterVersion }).pipe(arborEvents());
  if (sessionId === undefined) return events;
  return observable<ArborEvent | "deleted">((subscriber) => {
    const subscriptions = [events.subscribe(subscriber), sessionDeleted$(log, sessionId, afterVersion).subscribe({ next: () => subscriber.next("deleted"), error: (error: unknown) => subscriber.error(error) })];
    return () => {
      for (const subscription of subscriptions) subscription.unsubscribe();
    };
  });
}

/**
 * The UI chunks of the message whose first run starts after `afterVersion`, live until it ends (see {@link RunChunksOptions}), or until its session
 * is deleted: then its open parts close and an `error` chunk ({@link sessionDeletedText}, code `SESSION_DELETED`) and `finish` end it.
 */
export function runChunks$(log: EventLog, streamId: string, afterVersion: number, options: RunChunksOptions = {}): Observable<UIMessageChunk> {
  const emitAfter = options.emitAfterVersion ?? -1;
  const endAfter = options.endAfterVersion ?? -1;
  let startSent = emitAfter < 0;
  const sessionId = sessionIdOfStream(streamId) ?? streamId;
  return eventsUntilDeleted(log, streamId, afterVersion).pipe(
    skipWhile((event) => options.ownRunOnly === true && event !== "deleted" && !(isEventOfType(event, "run.started") && isCurrentRunOwner(event.metadata.owner))),
    scan((step: RunProjectionStep & { version: number }, event) => {
      // The deleted run never logs its end: it ends here, past any `endAfterVersion`.
      const deleted = event === "deleted";
      const next = deleted ? projectSessionDeleted(step.state, sessionDeletedText(sessionId)) : projectRunEvent(step.state, event);
      const version = deleted ? Number.POSITIVE_INFINITY : event.version;
      if (version <= emitAfter) return { ...next, chunks: [], version };
      if (!startSent && next.state.messageId !== undefined) {
        startSent = true;
        return { ...next, chunks: [{ type: "start", messageId: next.state.messageId } as UIMessageChunk, ...next.chunks], version };
      }
      return { ...next, version };
    }, { state: initialRunProjection(), chunks: [], version: 0 }),
    takeWhile((step) => !(step.state.ended && step.version > endAfter), true),
    concatMap((step) => from(step.chunks)),
  );
}
