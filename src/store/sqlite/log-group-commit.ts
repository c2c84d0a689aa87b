/**
 * Group commit for the SQLite event log (ours): the writes queued in one tick commit in ONE `BEGIN IMMEDIATE` transaction, in queue order, each in
 * its own SAVEPOINT (a conflict, reused eventId or constraint error rejects that write only; any other error rejects the whole group with one
 * `LogCommitError`). Promises settle after the commit, then `onCommitted` runs, with the new events and the head before them when the group only
 * appended; `beforeCommit` may veto a group; a group with a delete is followed by a non-waiting `wal_checkpoint(TRUNCATE)`; summary rows merge in
 * each write's savepoint (`sqlite-summaries.ts`). With `relaxedSync`, a group of `process-crash-safe` appends only commits at `synchronous = NORMAL`
 * (a power loss may drop it and later commits, never an earlier one); every other group at the log's level.
 */
import type Database from "better-sqlite3";
import { ArborError, EventIdReusedError, LogCommitError } from "../../core/errors.ts";
import type { AppendResult, ExpectedVersion, StoredEvent } from "../event-log.ts";
import { checkExpectedVersion, type EventRecord, type PreparedEvent, resolveDuplicates } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-decode.ts";
import type { LogStatements } from "./log-statements.ts";
import type { CommittedBatch } from "../log/log-subscription.ts";
import type { ActiveDeltaRetention, DroppedDeltas } from "../log/delta-retention.ts";
import { createSqliteDeltaRetention } from "./sqlite-delta-retention.ts";
import type { SqliteSessionIndex } from "./sqlite-session-index.ts";
import { sessionIdOfStream } from "../events/session-events.ts";
import { summarizeEvents } from "../session/session-summary-index.ts";
import type { SummaryStatements } from "./sqlite-summaries.ts";
import type { SqliteSealedBatches } from "./sqlite-sealed-batches.ts";
import { ignored } from "../../core/ignored.ts";

/** A queued append: events already validated and serialized. */
export interface AppendOperation {
  kind: "append";
  streamId: string;
  events: PreparedEvent[];
  expected: ExpectedVersion;
  /** Run first, inside the append's transaction: throws when this log no longer owns the stream (`sqlite-ownership.ts`). */
  fence?: () => void;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
  outcome?: { ok: true; value: AppendResult } | { ok: false; error: unknown };
  /** The rows this append wrote, as committed (plaintext), set by the writer. */
  records?: EventRecord[];
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
  /** Called after a commit that wrote something; `batch` when it only appended new events (see the contract). */
  onCommitted(batch: CommittedBatch | undefined): void;
  /**
   * Called before every commit; a throw rejects every write of the group with that error and nothing is written (the SQLite log checks here that its
   * file is still the one it opened).
   */
  beforeCommit?(writes: number, events: number): void;
  /**
   * Retention: when set, a committed `message.ended` whose message was kept (it has an `entryId`) deletes or empties that message's stored
   * `message.delta` events in the same transaction (`sqlite-delta-retention.ts`), and reports what that saved after the commit.
   */
  deltaRetention?: ActiveDeltaRetention;
  /** The session index, kept in each append's and delete's own transaction (`sqlite-session-index.ts`). */
  sessionIndex?: SqliteSessionIndex;
  /**
   * Session summary rows: each append to a session stream merges its summary into the stream's row, and a delete removes the row, inside the write's
   * own transaction.
   */
  summaries?: SummaryStatements;
  /** Decrypts a stored record (an encrypted log, `crypto/log-cipher.ts`) before an idempotency check compares it. */
  openRecord?(record: EventRecord): EventRecord;
  /** An encrypted log's sealed batches (`sqlite-sealed-batches.ts`): a batch head's ciphertext is stored, and a delete removes a stream's. */
  sealedBatches?: Pick<SqliteSealedBatches, "insert" | "deleted">;
  /**
   * The connection's own `synchronous` level when it syncs every commit (`FULL`, `EXTRA`): groups of `process-crash-safe` events only then commit at
   * `NORMAL`. Absent: every group at the connection's level.
   */
  relaxedSync?: "FULL" | "EXTRA";
}

/** The writer of one connection. */
export interface GroupCommitWriter {
  enqueue(operation: WriteOperation): void;
  /** Commits what is queued now (synchronously). */
  flush(): void;
}

/** Creates the group-commit writer of one SQLite connection. */
export function createGroupCommitWriter({ db, statements, busyTimeoutMs, onCommitted, beforeCommit, deltaRetention, summaries, sessionIndex, openRecord, sealedBatches, relaxedSync }: GroupCommitOptions): GroupCommitWriter {
  let pending: WriteOperation[] = [];
  const syncLevels = relaxedSync && { relaxed: db.prepare("PRAGMA synchronous = NORMAL"), durable: db.prepare(`PRAGMA synchronous = ${relaxedSync}`) };
  const dropped: DroppedDeltas[] = [];
  const retain = deltaRetention ? createSqliteDeltaRetention(db, deltaRetention.mode) : undefined;
  let flushScheduled = false;

  const lookupEventId = (eventId: string): EventRecord | undefined => {
    const record = statements.selectByEventId.get(eventId) as EventRecord | undefined;
    return record && openRecord ? openRecord(record) : record;
  };

  const appendOne = (operation: AppendOperation, now: string): AppendResult => {
    const { streamId, events } = operation;
    operation.fence?.();
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
    const records: EventRecord[] = new Array(events.length);
    // Reported only if this write gets through: a write rolled back in its savepoint deleted nothing.
    const savedHere: DroppedDeltas[] = [];
    let version = current;
    let position = 0;
    for (let index = 0; index < events.length; index++) {
      const event = events[index];
      version++;
      const time = event.time ?? now;
      const info = statements.insertEvent.run(event.eventId, streamId, version, event.type, event.schemaVersion, time, event.storedDataJson ?? event.dataJson, event.metadataJson);
      position = Number(info.lastInsertRowid);
      if (event.sealedBlob) sealedBatches!.insert(position, event.sealedBlob);
      const saved = retain?.(streamId, event, version);
      if (saved) savedHere.push(saved);
      records[index] = {
        globalPosition: position,
        eventId: event.eventId,
        streamId,
        version,
        type: event.type,
        schemaVersion: event.schemaVersion,
        time,
        dataJson: event.dataJson,
        metadataJson: event.metadataJson,
      };
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
    operation.records = records;
    return { streamId, nextExpectedVersion: version, events: stored, lastGlobalPosition: position, duplicate: false };
  };

  const deleteOne = (streamId: string): number => {
    // The batches first: they are found by their heads' positions.
    sealedBatches?.deleted(streamId);
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
  let headBefore = 0;
  const commitGroup = db.transaction((group: WriteOperation[], now: string) => {
    headBefore = (statements.headPosition.get() as number | null) ?? 0;
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
    const relaxed = syncLevels !== undefined && !hasDelete && group.every((operation) => operation.kind === "append" && operation.events.every((event) => !event.durable));
    dropped.length = 0;
    try {
      if (relaxed) syncLevels.relaxed.run();
      try {
        commitGroup.immediate(group, new Date().toISOString());
      } finally {
        if (relaxed) syncLevels.durable.run();
      }
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
    const batch = hasDelete || dropped.length > 0 ? undefined : committedBatch(group, headBefore);
    if (hasDelete) checkpointQuietly();
    for (const saved of dropped.splice(0)) {
      try {
        deltaRetention?.report(saved);
      } catch (error) {
        ignored("a delta-retention observer threw; it cannot undo a commit", error);
      }
    }
    if (wrote) onCommitted(batch);
  };

  /** Drops old WAL copies of deleted pages without waiting: with readers or a writer elsewhere it gives up at once. */
  const checkpointQuietly = (): void => {
    try {
      db.pragma("busy_timeout = 0");
      db.pragma("wal_checkpoint(TRUNCATE)");
    } catch (error) {
      ignored("a busy WAL checkpoint after a delete: SQLite's automatic checkpoints overwrite the WAL later", error);
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

/** The new rows of a committed group of appends (those that got through, in queue order, so in position order). */
function committedBatch(group: WriteOperation[], before: number): CommittedBatch | undefined {
  const records: EventRecord[] = [];
  for (const operation of group) {
    if (operation.kind === "append" && operation.outcome?.ok === true && operation.records) records.push(...operation.records);
  }
  return records.length > 0 ? { before, records } : undefined;
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
