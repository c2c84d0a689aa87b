/**
 * Group commit for the SQLite event log (ours).
 *
 * Contract:
 * - `enqueue` queues a write (append or stream delete); the first write of a tick
 *   schedules a flush in a microtask. A flush commits every queued write in ONE
 *   `BEGIN IMMEDIATE` transaction, in queue order;
 * - each write of a multi-write group runs in its own SAVEPOINT: an expected-version
 *   conflict, a reused eventId or a constraint error rolls back and rejects that
 *   write only. Any other error (I/O, disk full, lock wait past the busy timeout)
 *   rolls back the whole group and rejects every writer of it with one
 *   `LogCommitError` whose `cause` is the SQLite error;
 * - promises settle only after the commit; `onCommitted` runs after them when
 *   anything was written (subscribers are woken there);
 * - the connection runs with `secure_delete` on (set by the log at open); a group with a delete
 *   is followed by a non-waiting `wal_checkpoint(TRUNCATE)` so old page copies leave the WAL;
 * - `beforeCommit` (optional) runs before each commit; if it throws, every write of the group
 *   is rejected with that error and nothing is written;
 * - with `summaries`, an append to a session stream merges its summary row and a delete removes
 *   it, in the write's savepoint (`sqlite-summaries.ts`);
 * - `flush()` may be called directly (on close) to commit what is queued now.
 *
 * @example
 * ```ts
 * const writer = createGroupCommitWriter({ db, statements, busyTimeoutMs: 5000, onCommitted: wake });
 * writer.enqueue({ kind: "delete", streamId: "s-1", resolve, reject });
 * ```
 */
import type Database from "better-sqlite3";
import { ArborError, EventIdReusedError, LogCommitError } from "../core/errors.ts";
import type { AppendResult, ExpectedVersion, StoredEvent } from "./event-log.ts";
import { checkExpectedVersion, type EventRecord, type PreparedEvent, resolveDuplicates, toStoredEvent } from "./log-prepare.ts";
import type { LogStatements } from "./log-statements.ts";
import type { ActiveDeltaRetention, DroppedDeltas } from "./delta-retention.ts";
import { createSqliteDeltaRetention } from "./sqlite-delta-retention.ts";
import type { SqliteSessionIndex } from "./sqlite-session-index.ts";
import { sessionIdOfStream } from "./events/session-events.ts";
import { summarizeEvents } from "./session-summary-index.ts";
import type { SummaryStatements } from "./sqlite-summaries.ts";

/** A queued append: events already validated and serialized. */
export interface AppendOperation {
  kind: "append";
  streamId: string;
  events: PreparedEvent[];
  expected: ExpectedVersion;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
  outcome?: { ok: true; value: AppendResult } | { ok: false; error: unknown };
}

/** A queued physical delete of one stream. */
export interface DeleteOperation {
  kind: "delete";
  streamId: string;
  resolve(count: number): void;
  reject(error: unknown): void;
  outcome?: { ok: true; value: number } | { ok: false; error: unknown };
}

/** Any queued write. */
export type WriteOperation = AppendOperation | DeleteOperation;

/** Options of {@link createGroupCommitWriter}. */
export interface GroupCommitOptions {
  db: Database.Database;
  statements: LogStatements;
  /** Restored after the non-waiting checkpoint, in ms. */
  busyTimeoutMs: number;
  /** Called after a commit that wrote something. */
  onCommitted(): void;
  /**
   * Called before every commit; a throw rejects every write of the group with that error and
   * nothing is written (the SQLite log checks here that its file is still the one it opened).
   */
  beforeCommit?(writes: number, events: number): void;
  /**
   * Retention: when set, a committed `message.ended` whose message was kept (it
   * has an `entryId`) deletes or empties that message's stored `message.delta` events in the same
   * transaction (`sqlite-delta-retention.ts`), and reports what that saved after the commit.
   */
  deltaRetention?: ActiveDeltaRetention;
  /** The session index, kept in each append's and delete's own transaction (`sqlite-session-index.ts`). */
  sessionIndex?: SqliteSessionIndex;
  /**
   * Session summary rows: each append to a session stream merges its summary into
   * the stream's row, and a delete removes the row, inside the write's own transaction.
   */
  summaries?: SummaryStatements;
}

/** The writer of one connection. */
export interface GroupCommitWriter {
  enqueue(operation: WriteOperation): void;
  /** Commits what is queued now (synchronously). */
  flush(): void;
}

/** Creates the group-commit writer of one SQLite connection. */
export function createGroupCommitWriter({ db, statements, busyTimeoutMs, onCommitted, beforeCommit, deltaRetention, summaries, sessionIndex }: GroupCommitOptions): GroupCommitWriter {
  let pending: WriteOperation[] = [];
  const dropped: DroppedDeltas[] = [];
  const retain = deltaRetention ? createSqliteDeltaRetention(db, deltaRetention.mode) : undefined;
  let flushScheduled = false;

  const lookupEventId = (eventId: string): EventRecord | undefined => statements.selectByEventId.get(eventId) as EventRecord | undefined;

  const appendOne = (operation: AppendOperation, now: string): AppendResult => {
    const { streamId, events } = operation;
    const duplicates = resolveDuplicates(streamId, events, lookupEventId, reusedError);
    if (duplicates) {
      const stored = duplicates.map(toStoredEvent);
      const last = stored[stored.length - 1];
      return { streamId, nextExpectedVersion: last.version, events: stored, lastGlobalPosition: last.globalPosition, duplicate: true };
    }
    const current = (statements.selectStreamVersion.get(streamId) as number | undefined) ?? 0;
    checkExpectedVersion(streamId, operation.expected, current);
    if (events.length === 0) {
      const last = current === 0 ? 0 : (statements.selectStreamPosition.get(streamId, current) as number);
      return { streamId, nextExpectedVersion: current, events: [], lastGlobalPosition: last, duplicate: false };
    }
    const stored: StoredEvent[] = new Array(events.length);
    // Reported only if this write gets through: a write rolled back in its savepoint deleted nothing.
    const savedHere: DroppedDeltas[] = [];
    let version = current;
    let position = 0;
    for (let index = 0; index < events.length; index++) {
      const event = events[index];
      version++;
      const time = event.time ?? now;
      const info = statements.insertEvent.run(event.eventId, streamId, version, event.type, event.schemaVersion, time, event.dataJson, event.metadataJson);
      position = Number(info.lastInsertRowid);
      const saved = retain?.(streamId, event, version);
      if (saved) savedHere.push(saved);
      stored[index] = {
        eventId: event.eventId,
        streamId,
        version,
        globalPosition: position,
        type: event.type,
        schemaVersion: event.schemaVersion,
        time,
        data: event.data,
        metadata: event.metadata,
      };
    }
    if (current === 0) statements.insertStream.run(streamId, version, stored[0].globalPosition, now, now);
    else statements.updateStream.run(version, now, streamId);
    sessionIndex?.appended(streamId, current, stored);
    if (summaries && sessionIdOfStream(streamId) !== undefined) summaries.merge(summarizeEvents(streamId, stored, current + 1));
    dropped.push(...savedHere);
    return { streamId, nextExpectedVersion: version, events: stored, lastGlobalPosition: position, duplicate: false };
  };

  const deleteOne = (streamId: string): number => {
    const removed = statements.deleteEvents.run(streamId).changes;
    statements.deleteStream.run(streamId);
    sessionIndex?.deleted(streamId);
    summaries?.remove(streamId);
    return removed;
  };

  const runOne = (operation: WriteOperation, now: string): void => {
    operation.outcome =
      operation.kind === "append" ? { ok: true, value: appendOne(operation, now) } : { ok: true, value: deleteOne(operation.streamId) };
  };
  const runOneInSavepoint = db.transaction(runOne);
  /** One BEGIN IMMEDIATE transaction for the whole group; per-operation savepoints. */
  const commitGroup = db.transaction((group: WriteOperation[], now: string) => {
    if (group.length === 1) {
      runOne(group[0], now);
      return;
    }
    for (const operation of group) {
      try {
        runOneInSavepoint(operation, now);
      } catch (error) {
        if (!isOperationError(error)) throw error;
        operation.outcome = { ok: false, error };
      }
    }
  });

  const flush = (): void => {
    flushScheduled = false;
    if (pending.length === 0) return;
    const group = pending;
    pending = [];
    try {
      beforeCommit?.(group.length, group.reduce((sum, operation) => sum + (operation.kind === "append" ? operation.events.length : 0), 0));
    } catch (error) {
      for (const operation of group) operation.reject(error);
      return;
    }
    const hasDelete = group.some((operation) => operation.kind === "delete");
    dropped.length = 0;
    try {
      commitGroup.immediate(group, new Date().toISOString());
    } catch (error) {
      if (group.length === 1 && isOperationError(error)) {
        group[0].reject(error);
        return;
      }
      const failure = new LogCommitError(`The event log could not commit ${group.length} write(s): ${(error as Error).message}. Nothing of them was written.`, {
        cause: error,
        details: { writes: group.length },
      });
      for (const operation of group) operation.reject(failure);
      return;
    }
    let wrote = false;
    for (const operation of group) {
      const outcome = operation.outcome;
      if (outcome?.ok) {
        wrote = true;
        (operation.resolve as (value: unknown) => void)(outcome.value);
      } else {
        operation.reject(outcome?.error ?? new LogCommitError("The write produced no outcome."));
      }
    }
    if (hasDelete) checkpointQuietly();
    for (const saved of dropped.splice(0)) {
      try {
        deltaRetention?.report(saved);
      } catch {
        // An observer's error does not undo a commit.
      }
    }
    if (wrote) onCommitted();
  };

  /** Drops old WAL copies of deleted pages without waiting: with readers or a writer elsewhere it gives up at once. */
  const checkpointQuietly = (): void => {
    try {
      db.pragma("busy_timeout = 0");
      db.pragma("wal_checkpoint(TRUNCATE)");
    } catch {
      // Busy: SQLite's automatic checkpoints overwrite the WAL later; the rows are already gone from the tables.
    } finally {
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    }
  };

  const enqueue = (operation: WriteOperation): void => {
    pending.push(operation);
    if (!flushScheduled) {
      flushScheduled = true;
      queueMicrotask(flush);
    }
  };

  return { enqueue, flush };
}

/** Errors that fail one operation of a group, not the whole commit. */
function isOperationError(error: unknown): boolean {
  if (ArborError.isInstance(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_CONSTRAINT");
}

function reusedError(message: string, details: Record<string, unknown>): Error {
  return new EventIdReusedError(message, { details });
}
