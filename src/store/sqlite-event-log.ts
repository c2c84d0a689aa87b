/**
 * The SQLite event log (ours; the default log), on better-sqlite3.
 *
 * Contract (see `event-log.ts` for the shared guarantees):
 * - WAL journal (file logs), `BEGIN IMMEDIATE` for every write, a busy timeout
 *   (default 5000 ms) so concurrent writers from other processes wait for the lock;
 * - **group commit**: appends (and deletes) issued in the same tick are queued and
 *   committed in ONE transaction in a microtask, in call order. Each append runs in
 *   its own SAVEPOINT and keeps its own expected-version check and outcome, so a
 *   conflicting append fails alone. If the commit itself fails (I/O error, disk
 *   full, lock wait past the busy timeout) every writer of the group rejects with
 *   `LogCommitError` and nothing of the group is written (`log-group-commit.ts`);
 * - before every commit the file at `path` must still be the one opened (device and inode):
 *   deleted or replaced, every writer of the group rejects with `LogFileReplacedError` and
 *   nothing is written, now or later (SQLite would write on into the deleted inode);
 * - better-sqlite3 is synchronous: a commit waiting for another process's write
 *   lock blocks this event loop for up to `busyTimeoutMs`. Keep other-process
 *   writes short (one writer process per file is the intended shape);
 * - `synchronous` (default `"FULL"`; see {@link SqliteSynchronous} for what each
 *   level keeps after a crash);
 * - **tail latency**: in-process subscribers are woken right after the commit, in
 *   the same tick (a microtask). Appends by other processes on the same file are
 *   noticed by polling `PRAGMA data_version` every `pollIntervalMs` (default 50 ms,
 *   only while a subscription is open; the timer keeps the process alive like an
 *   open socket until the subscription ends or the log closes): latency ≤
 *   pollIntervalMs + one read;
 * - `deleteStream` physically removes the events: `secure_delete` (on for every write of the
 *   connection, so cells moved by page balancing leave no copy in free space either) overwrites
 *   the freed space, and a non-waiting WAL checkpoint (TRUNCATE) drops the old page copies; if
 *   another connection is busy, the WAL copies go at a later checkpoint. Text written to a file
 *   by an older Arbor (secure_delete only around deletes) may survive in free pages until a
 *   `VACUUM`;
 * - opening refuses foreign, non-SQLite or newer-schema files with `LogSchemaError`
 *   without writing them (see `sqlite-schema.ts`);
 * - `readOnly: true` opens an existing log without writing anything (no WAL switch, no
 *   migration; a log that would need one is refused with `LogSchemaError` saying so; a schema-1
 *   file is read as it is, without session summary rows), for
 *   read-only files, folders and mounts (`sqlite-read-only.ts`); `append` and `deleteStream`
 *   then reject with `InvalidStateError`;
 * - each append to a session stream merges its summary row, and a delete removes it, in the
 *   same transaction (`sqlite-summaries.ts`); `sessionSummaries` reads the rows.
 *
 * @example
 * ```ts
 * const log = createSqliteEventLog({ path: "data/arbor.db" });
 * const result = await log.append("s-1", [{ type: "leaf.moved", data: { leafId: null, fromLeafId: null } }], { expectedVersion: "no_stream" });
 * console.log(result.lastGlobalPosition);
 * ```
 */
import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { Observable } from "rxjs";
import { ArborError, InvalidArgumentError, InvalidStateError, LogClosedError, LogFileReplacedError, LogSchemaError } from "../core/errors.ts";
import type { AppendOptions, AppendResult, EventLog, ListStreamsOptions, NewEvent, ReadAllOptions, ReadStreamOptions, StoredEvent, StreamInfo, SubscribeOptions } from "./event-log.ts";
import { createDefaultEventRegistry } from "./events/index.ts";
import type { EventRegistry } from "./events/registry.ts";
import { createGroupCommitWriter } from "./log-group-commit.ts";
import { resolveDeltaRetention, type ActiveDeltaRetention, type DeltaRetention } from "./delta-retention.ts";
import { createLogStatements } from "./log-statements.ts";
import {
  checkExpectedVersionArgument,
  checkReadAllOptions,
  checkReadStreamOptions,
  checkStreamId,
  type EventRecord,
  prepareEvents,
  toStoredEvent,
  refuseTenantFilter,
} from "./log-prepare.ts";
import { type CommitListener, createCatchUpObservable } from "./log-subscription.ts";
import { openReadOnlyDatabase } from "./sqlite-read-only.ts";
import { createSqliteSessionIndex } from "./sqlite-session-index.ts";
import type { SessionIndex } from "./session-index.ts";
import { inspectLogFile, migrate } from "./sqlite-schema.ts";
import { createBlobStore } from "./workspace/blob-store.ts";
import { createSqliteBlobRows } from "./workspace/sqlite-blob-rows.ts";
import { createSqliteMemoryIndex } from "./memory/sqlite-memory-index.ts";
import type { SessionSummaryIndex } from "./session-summary-index.ts";
import { createSummaryStatements, hasSummaryTable, readSummaryRows } from "./sqlite-summaries.ts";

/**
 * SQLite's `synchronous` level, in WAL mode (sqlite.org pragma.html#pragma_synchronous):
 * - `"OFF"`: no fsync. Survives a process crash; after power loss or an OS crash
 *   recent commits may be lost AND the file may be corrupt;
 * - `"NORMAL"`: fsync at checkpoints only. Survives a process crash; after power loss
 *   the last commits may roll back, the file stays consistent;
 * - `"FULL"` (default): the WAL is fsynced on every commit. Committed appends survive
 *   process crashes and power loss (if the disk honours flushes);
 * - `"EXTRA"`: as FULL. Its extra directory fsync applies to rollback-journal
 *   (DELETE) mode; with WAL it adds nothing. :memory: logs ignore the level.
 *
 * @example
 * ```ts
 * const scratch = createSqliteEventLog({ path: "scratch.db", synchronous: "NORMAL" }); // faster, may lose the last commits on power loss
 * ```
 */
export type SqliteSynchronous = "OFF" | "NORMAL" | "FULL" | "EXTRA";

/**
 * Options of {@link createSqliteEventLog}. Times are in ms.
 *
 * @example
 * ```ts
 * const options: SqliteEventLogOptions = { path: ".arbor/log.db", synchronous: "FULL", busyTimeoutMs: 5000, pollIntervalMs: 50 };
 * ```
 */
export interface SqliteEventLogOptions {
  /** A file path, or `":memory:"` for a private in-memory database. */
  path: string;
  /** Default `"FULL"`. */
  synchronous?: SqliteSynchronous;
  /** How long a write waits for another connection's lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /** How often open subscriptions poll for other processes' appends, in ms. Default 50. */
  pollIntervalMs?: number;
  /** Event schemas; default `createDefaultEventRegistry()`. */
  registry?: EventRegistry;
  /**
   * Open an existing log without writing to it (default false): reads and subscriptions work,
   * `append` and `deleteStream` reject with `InvalidStateError`. A missing file or folder is
   * refused (`InvalidArgumentError`), as is a log that would need a migration (`LogSchemaError`).
   */
  readOnly?: boolean;
  /**
   * Retention (ours; contract in `delta-retention.ts`), applied once a
   * message's `message.ended` (with an `entryId`: the message was kept) commits, in the same
   * transaction: `endedMessageDeltas: "delete"` deletes that message's `message.delta` events
   * (the stream's versions then have a gap inside the message), `"drop"` empties their `delta`
   * (versions stay contiguous); the entry keeps the full text and `secure_delete` zeroes the old
   * bytes. Deltas of messages still streaming, and of discarded attempts, are kept. `onDropped`
   * receives what each message's pass saved (events, UTF-8 bytes of text). Default `"keep"`.
   */
  retention?: DeltaRetention;
}


const SYNCHRONOUS_LEVELS: readonly SqliteSynchronous[] = ["OFF", "NORMAL", "FULL", "EXTRA"];

/**
 * Opens (creating and migrating if needed) a SQLite event log.
 *
 * Throws `InvalidArgumentError` for bad options and `LogSchemaError` for a file
 * that is not an Arbor log or is from a newer schema version (left untouched).
 * Its methods reject as documented on {@link EventLog}, plus `LogCommitError`.
 *
 * @example
 * ```ts
 * const log = createSqliteEventLog({ path: ":memory:", synchronous: "NORMAL" });
 * ```
 */
export function createSqliteEventLog(options: SqliteEventLogOptions): EventLog {
  const { path } = options;
  if (typeof path !== "string" || path.length === 0) throw new InvalidArgumentError('path must be a file path or ":memory:".');
  const synchronous = options.synchronous ?? "FULL";
  if (!SYNCHRONOUS_LEVELS.includes(synchronous)) {
    throw new InvalidArgumentError(`synchronous must be one of ${SYNCHRONOUS_LEVELS.join(", ")}, got ${JSON.stringify(synchronous)}.`);
  }
  const busyTimeoutMs = checkPositive("busyTimeoutMs", options.busyTimeoutMs, 5000, 0);
  const pollIntervalMs = checkPositive("pollIntervalMs", options.pollIntervalMs, 50, 1);
  const registry = options.registry ?? createDefaultEventRegistry();
  const deltaRetention = resolveDeltaRetention(options.retention);

  if (options.readOnly === true) {
    const opened = openReadOnlyDatabase(path, busyTimeoutMs);
    return openLog(opened.db, registry, pollIntervalMs, busyTimeoutMs, undefined, opened.release);
  }
  let db: Database.Database | undefined;
  try {
    inspectLogFile(path);
    db = new Database(path, { timeout: busyTimeoutMs });
    if (path !== ":memory:") db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${synchronous}`);
    // Always on: a B-tree balance moves cells between pages, and without it the old copies stay in
    // free space, so a deleted session's text would outlive `deleteStream`.
    db.pragma("secure_delete = ON");
    migrate(db, path);
  } catch (error) {
    db?.close();
    if (ArborError.isInstance(error)) throw error;
    const code = (error as { code?: unknown }).code;
    const message = `Could not open "${path}" as an Arbor event log: ${(error as Error).message}.`;
    // SQLite errors (corrupt file, locked past the timeout) are about the file's content; others (ENOENT, EISDIR, EACCES) about the path.
    if (typeof code === "string" && code.startsWith("SQLITE_")) throw new LogSchemaError(message, { cause: error, details: { path } });
    throw new InvalidArgumentError(message, { cause: error, details: { path } });
  }
  return openLog(db, registry, pollIntervalMs, busyTimeoutMs, fileGuard(path), undefined, deltaRetention);
}

/**
 * A check that the log file at `path` is still the one opened (same device and inode), run
 * before every commit (ours). SQLite keeps writing to a deleted file's inode, so without it a
 * run whose log was deleted or replaced would end `done` with everything gone.
 */
function fileGuard(path: string): ((writes: number, events: number) => void) | undefined {
  if (path === ":memory:") return undefined;
  const opened = statSync(path);
  return (writes, events) => {
    const now = statSync(path, { throwIfNoEntry: false });
    if (now && now.dev === opened.dev && now.ino === opened.ino) return;
    const what = now ? "replaced by another file" : "deleted";
    throw new LogFileReplacedError(
      `The event log file "${path}" was ${what} while the log was open. This commit of ${events} event(s) in ${writes} write(s) was NOT written, and nothing more will be; ` +
        `events committed since the file was ${what} are only in the old file, which this process still holds open. Restore the file or open a new log.`,
      { details: { path, reason: now ? "replaced" : "deleted", writes, events } },
    );
  };
}

/**
 * The SQLite event log at `path` with default options, creating parent
 * directories. Same errors as {@link createSqliteEventLog}.
 *
 * @example
 * ```ts
 * const log = openEventLog(".arbor/log.db");
 * ```
 */
export function openEventLog(path: string): EventLog {
  if (typeof path !== "string" || path.length === 0) throw new InvalidArgumentError('openEventLog: path must be a file path or ":memory:".');
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  return createSqliteEventLog({ path });
}

function checkPositive(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
    throw new InvalidArgumentError(`${name} must be a number ≥ ${min} (ms), got ${String(value)}.`);
  }
  return value;
}

function openLog(
  db: Database.Database,
  registry: EventRegistry,
  pollIntervalMs: number,
  busyTimeoutMs: number,
  beforeCommit: ((writes: number, events: number) => void) | undefined,
  /** Set for read-only logs: closes the connection (and removes a snapshot copy); writes are refused. */
  readOnlyRelease?: () => void,
  deltaRetention?: ActiveDeltaRetention,
): EventLog {
  const statements = createLogStatements(db);
  const sessionIndex = createSqliteSessionIndex(db, { writable: !readOnlyRelease });
  const summaryRows = hasSummaryTable(db);
  const listeners = new Set<CommitListener>();
  let closed = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let lastDataVersion = 0;

  const ensureOpen = (operation: string): void => {
    if (closed) throw new LogClosedError(`The SQLite event log is closed; cannot ${operation}.`);
  };
  const ensureWritable = (operation: string): void => {
    if (readOnlyRelease) throw new InvalidStateError(`The SQLite event log was opened read-only (readOnly: true); cannot ${operation}. Nothing was written.`);
  };
  const writer = createGroupCommitWriter({
    db,
    statements,
    busyTimeoutMs,
    beforeCommit,
    ...(deltaRetention ? { deltaRetention } : {}),
    ...(sessionIndex ? { sessionIndex } : {}),
    ...(summaryRows && !readOnlyRelease ? { summaries: createSummaryStatements(db) } : {}),
    onCommitted: () => {
      for (const listener of listeners) listener.wake();
    },
  });
  const enqueue = writer.enqueue;
  const flush = writer.flush;

  const poll = (): void => {
    if (closed) return;
    try {
      const dataVersion = statements.dataVersion.get() as number;
      if (dataVersion !== lastDataVersion) {
        lastDataVersion = dataVersion;
        for (const listener of listeners) listener.wake();
      }
    } catch {
      // The next tick retries; a persistent failure surfaces in the subscription's own read.
    }
  };
  const updatePolling = (): void => {
    if (listeners.size > 0 && pollTimer === undefined && !closed) {
      lastDataVersion = statements.dataVersion.get() as number;
      pollTimer = setInterval(poll, pollIntervalMs);
    } else if (listeners.size === 0 && pollTimer !== undefined) {
      clearInterval(pollTimer);
      pollTimer = undefined;
    }
  };

  const head = (): number => (statements.headPosition.get() as number | null) ?? 0;

  const sessionSummaries: SessionSummaryIndex | undefined = summaryRows
    ? {
        async read() {
          ensureOpen("read session summaries");
          return readSummaryRows(db);
        },
      }
    : undefined;

  const workspaceBlobs = createBlobStore(
    createSqliteBlobRows(db, { read: ensureOpen, write: ensureWritable }),
  );
  return {
    ...(sessionSummaries ? { sessionSummaries } : {}),
    workspaceBlobs,
    memoryIndex: createSqliteMemoryIndex(db, { read: ensureOpen, write: ensureWritable }),
    append(streamId: string, events: readonly NewEvent[], appendOptions: AppendOptions = {}): Promise<AppendResult> {
      try {
        ensureOpen("append");
        ensureWritable("append");
        const expected = appendOptions.expectedVersion ?? "any";
        checkExpectedVersionArgument(expected);
        const prepared = prepareEvents(registry, streamId, events);
        return new Promise<AppendResult>((resolve, reject) => enqueue({ kind: "append", streamId, events: prepared, expected, resolve, reject }));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    async readStream(streamId: string, readOptions: ReadStreamOptions = {}): Promise<StoredEvent[]> {
      ensureOpen("readStream");
      checkStreamId(streamId);
      checkReadStreamOptions(readOptions);
      const limit = readOptions.limit ?? -1;
      const rows =
        readOptions.direction === "backwards"
          ? statements.readStreamBackwards.all(streamId, readOptions.fromVersion ?? Number.MAX_SAFE_INTEGER, limit)
          : statements.readStreamForwards.all(streamId, readOptions.fromVersion ?? 1, limit);
      return (rows as EventRecord[]).map(toStoredEvent);
    },

    async readAll(readOptions: ReadAllOptions = {}): Promise<StoredEvent[]> {
      ensureOpen("readAll");
      checkReadAllOptions(readOptions);
      refuseTenantFilter("readAll", readOptions);
      const rows = statements.readRange(readOptions.fromPosition ?? 0, Number.MAX_SAFE_INTEGER, readOptions.limit ?? -1, { types: readOptions.types });
      return rows.map(toStoredEvent);
    },

    async streamVersion(streamId: string): Promise<number> {
      ensureOpen("streamVersion");
      checkStreamId(streamId);
      return (statements.selectStreamVersion.get(streamId) as number | undefined) ?? 0;
    },

    async listStreams(listOptions?: ListStreamsOptions): Promise<StreamInfo[]> {
      ensureOpen("listStreams");
      refuseTenantFilter("listStreams", listOptions);
      return statements.listStreams.all() as StreamInfo[];
    },

    deleteStream(streamId: string): Promise<number> {
      try {
        ensureOpen("deleteStream");
        ensureWritable("deleteStream");
        checkStreamId(streamId);
        return new Promise<number>((resolve, reject) => enqueue({ kind: "delete", streamId, resolve, reject }));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    subscribe(subscribeOptions?: SubscribeOptions): Observable<StoredEvent> {
      ensureOpen("subscribe");
      refuseTenantFilter("subscribe", subscribeOptions);
      return createCatchUpObservable(
        {
          head,
          read: (after, upTo, limit, filter) => statements.readRange(after, upTo, limit, filter).map(toStoredEvent),
          listen(listener) {
            if (closed) {
              queueMicrotask(() => listener.close());
              return () => {};
            }
            listeners.add(listener);
            updatePolling();
            return () => {
              listeners.delete(listener);
              updatePolling();
            };
          },
        },
        subscribeOptions,
      );
    },

    ...(sessionIndex ? { sessionIndex: guardedIndex(sessionIndex, () => ensureOpen("read the session index")) } : {}),

    async headPosition(): Promise<number> {
      ensureOpen("headPosition");
      return head();
    },

    async close(): Promise<void> {
      if (closed) return;
      flush();
      closed = true;
      for (const listener of [...listeners]) listener.close();
      listeners.clear();
      updatePolling();
      if (readOnlyRelease) readOnlyRelease();
      else db.close();
    },
  };
}

/** The public face of the session index: the reads and `writeHead`, each refused once the log is closed (not the writer's hooks). */
function guardedIndex(index: SessionIndex, check: () => void): SessionIndex {
  const guard =
    <A extends unknown[], R>(method: (...args: A) => R) =>
    (...args: A): R => {
      check();
      return method(...args);
    };
  return {
    ensure: guard(index.ensure),
    byId: guard(index.byId),
    at: guard(index.at),
    lastOf: guard(index.lastOf),
    inRange: guard(index.inRange),
    children: guard(index.children),
    entries: guard(index.entries),
    readStream: guard(index.readStream),
    head: guard(index.head),
    writeHead: guard(index.writeHead),
    ...(index.contextChunks ? { contextChunks: guard(index.contextChunks) } : {}),
  };
}
