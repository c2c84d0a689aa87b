/**
 * The SQLite event log (ours; the default log), on better-sqlite3; the shared guarantees are in `event-log.ts`.
 * - WAL journal, `BEGIN IMMEDIATE` writes, a busy timeout; the appends of one tick commit in one transaction, each in its own SAVEPOINT
 *   (`log-group-commit.ts`); a failed commit rejects the whole group with `LogCommitError` and writes nothing;
 * - a file deleted or replaced since opening (device and inode) fails every later write with `LogFileReplacedError`;
 * - synchronous: a commit waiting for another process's lock blocks this event loop up to `busyTimeoutMs` (one writer process per file is the
 *   intended shape);
 * - in-process subscribers get the writer's committed events in a microtask without reading them back; other processes' appends are seen by polling
 *   `PRAGMA data_version` every `pollIntervalMs` while a subscription is open;
 * - `deleteStream` removes the events physically (`secure_delete`, then a non-waiting WAL checkpoint); each session append merges its summary row in
 *   the same transaction (`sqlite-summaries.ts`).
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { ArborError, InvalidArgumentError, InvalidStateError, LogClosedError, LogFileReplacedError, LogSchemaError } from "../../core/errors.ts";
import type { AppendOptions, AppendResult, EventLog, ListStreamsOptions, NewEvent, ReadAllOptions, ReadStreamOptions, StoredEvent, StreamInfo } from "../event-log.ts";
import { createDefaultEventRegistry } from "../events/index.ts";
import type { EventRegistry } from "../events/registry.ts";
import { createGroupCommitWriter } from "./log-group-commit.ts";
import { resolveDeltaRetention, type ActiveDeltaRetention, type DeltaRetention } from "../log/delta-retention.ts";
import { createLogStatements } from "./log-statements.ts";
import { checkReadAllOptions, checkStreamId, type EventRecord, toStoredEvent, refuseTenantFilter } from "../log/log-prepare.ts";
import { prepareAppend, rejectOnThrow, streamRange } from "../log/log-requests.ts";
import { closeListeners, type CommitListener, syncSubscriptionMethods } from "../log/log-subscription.ts";
import { openReadOnlyDatabase } from "./sqlite-read-only.ts";
import { createSqliteOwnership } from "./sqlite-ownership.ts";
import { createSqliteSessionIndex } from "./sqlite-session-index.ts";
import type { SessionIndex } from "../session/session-index.ts";
import { inspectLogFile, migrate } from "./sqlite-schema.ts";
import { createBlobStore } from "../workspace/blob-store.ts";
import { createSqliteBlobRows } from "../workspace/sqlite-blob-rows.ts";
import { createSqliteMemoryIndex } from "../memory/sqlite-memory-index.ts";
import type { SessionSummaryIndex } from "../session/session-summary-index.ts";
import { createSummaryStatements, hasSummaryTable, readSummaryRows, type SummaryStatements } from "./sqlite-summaries.ts";
import { createLogCipher, encryptionProvider, type EncryptionOptions, type LogCipher } from "../crypto/log-cipher.ts";
import { keyFileBeside, openSqliteDataKeys } from "../crypto/sqlite-data-keys.ts";
import { encryptedLogParts, sealedAppend } from "../crypto/encrypted-log-parts.ts";
import { ignored, ignoreError } from "../../core/ignored.ts";

/**
 * SQLite's `synchronous` level, in WAL mode (sqlite.org pragma.html#pragma_synchronous):
 * - `"OFF"`: no fsync. Survives a process crash; after power loss or an OS crash recent commits may be lost AND the file may be corrupt;
 * - `"NORMAL"`: fsync at checkpoints only. Survives a process crash; after power loss the last commits may roll back, the file stays consistent;
 * - `"FULL"` (default): the WAL is fsynced on every commit holding a `durable` event (or a delete); such commits survive process crashes and power
 *   loss (if the disk honours flushes), with every commit before them. A commit of `process-crash-safe` events only (`message.delta`,
 *   `message.started`) is not synced: it survives a process crash, and a power loss may drop it and every later commit, never an earlier one
 *   (`docs/event-log.md`);
 * - `"EXTRA"`: as FULL (durability classes included). Its extra directory fsync applies to rollback-journal (DELETE) mode; with WAL it adds nothing.
 *   :memory: logs ignore the level.
 */
export type SqliteSynchronous = "OFF" | "NORMAL" | "FULL" | "EXTRA";

/** Options of {@link createSqliteEventLog}. Times are in ms. */
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
   * Open an existing log without writing to it (default false): reads and subscriptions work, `append` and `deleteStream` reject with
   * `InvalidStateError`. A missing file or folder is refused (`InvalidArgumentError`), as is a log that would need a migration (`LogSchemaError`).
   */
  readOnly?: boolean;
  /**
   * Retention (ours; contract in `delta-retention.ts`), applied once a message's `message.ended` (with an `entryId`: the message was kept) commits,
   * in the same transaction: `endedMessageDeltas: "delete"` deletes that message's `message.delta` events (the stream's versions then have a gap
   * inside the message), `"drop"` empties their `delta` (versions stay contiguous); the entry keeps the full text and `secure_delete` zeroes the old
   * bytes. Deltas of messages still streaming, and of discarded attempts, are kept. `onDropped` receives what each message's pass saved (events,
   * UTF-8 bytes of text). Default `"keep"`.
   */
  retention?: DeltaRetention;
  /**
   * Encryption at rest (opt-in; `crypto/log-cipher.ts`, `docs/privacy.md`): each session's event data, stored head and memory values sealed with its
   * own data key (AES-256-GCM), the keys wrapped by the master key in a key file beside the log (`keyFile`, default `arbor.keys.db` for `arbor.db`).
   * Deleting a session destroys its key. The log then keeps no session summary rows (they would hold plaintext), seals its context chunks, and seals
   * its workspace blobs with a key per tenant. Another master key than the log was written with is `EncryptionKeyMismatchError` at open (the key check).
   */
  encryption?: EncryptionOptions;
}


const SYNCHRONOUS_LEVELS: readonly SqliteSynchronous[] = ["OFF", "NORMAL", "FULL", "EXTRA"];

/**
 * Opens (creating and migrating if needed) a SQLite event log.
 *
 * Throws `InvalidArgumentError` for bad options and `LogSchemaError` for a file that is not an Arbor log or is from a newer schema version (left
 * untouched); with `encryption`, `EncryptionKeyMismatchError` for another master key than the log was written with (nothing read or written). Its
 * methods reject as documented on {@link EventLog}, plus `LogCommitError`.
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
  const encryption = options.encryption;
  if (encryption !== undefined) encryptionProvider(encryption);
  /** The cipher over the key file, its key check done (`EncryptionKeyMismatchError` for another master key; an asynchronous provider's check is awaited by every key operation and write). */
  const openCipher = (): LogCipher | undefined => {
    if (!encryption) return undefined;
    const readOnly = options.readOnly === true;
    const cipher = createLogCipher(encryption, openSqliteDataKeys(encryption.keyFile ?? keyFileBeside(path), { readOnly, busyTimeoutMs }), { log: `"${path}"`, readOnly });
    try {
      const checked = cipher.verify();
      if (checked instanceof Promise) checked.catch(ignoreError("every key operation and write of the log waits for the key check and rejects with its error"));
    } catch (error) {
      closeAfterFailure(cipher, error);
      throw error;
    }
    return cipher;
  };

  if (options.readOnly === true) {
    // The key check first: with another master key the log's file is not opened.
    const cipher = openCipher();
    let opened: ReturnType<typeof openReadOnlyDatabase>;
    try {
      opened = openReadOnlyDatabase(path, busyTimeoutMs);
    } catch (error) {
      if (cipher) closeAfterFailure(cipher, error);
      throw error;
    }
    return openLog(opened.db, registry, pollIntervalMs, busyTimeoutMs, undefined, opened.release, undefined, cipher);
  }
  let db: Database.Database | undefined;
  let cipher: LogCipher | undefined;
  try {
    // The key check of an existing key store first: with another master key nothing of the log is opened, not even to read. A new key store is only
    // created beside a file that is a log.
    const keyStoreExists = encryption !== undefined && path !== ":memory:" && existsSync(encryption.keyFile ?? keyFileBeside(path));
    if (keyStoreExists) cipher = openCipher();
    inspectLogFile(path);
    if (!keyStoreExists) cipher = openCipher();
    db = new Database(path, { timeout: busyTimeoutMs });
    if (path !== ":memory:") db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${synchronous}`);
    // Always on: a B-tree balance moves cells between pages, and without it the old copies stay in free space, so a deleted session's text would
    // outlive `deleteStream`.
    db.pragma("secure_delete = ON");
    migrate(db, path);
  } catch (error) {
    db?.close();
    if (cipher) closeAfterFailure(cipher, error);
    if (ArborError.isInstance(error)) throw error;
    const code = (error as { code?: unknown }).code;
    const message = `Could not open "${path}" as an Arbor event log: ${(error as Error).message}.`;
    // SQLite errors (corrupt file, locked past the timeout) are about the file's content; others (ENOENT, EISDIR, EACCES) about the path.
    if (typeof code === "string" && code.startsWith("SQLITE_")) throw new LogSchemaError(message, { cause: error, details: { path } });
    throw new InvalidArgumentError(message, { cause: error, details: { path } });
  }
  // A level that syncs every commit lets commits of process-crash-safe events only skip the sync.
  const relaxedSync = path !== ":memory:" && (synchronous === "FULL" || synchronous === "EXTRA") ? synchronous : undefined;
  return openLog(db, registry, pollIntervalMs, busyTimeoutMs, fileGuard(path), undefined, deltaRetention, cipher, relaxedSync);
}

/** Closes the key store of a log whose open failed with `cause` (a SQLite key store closes synchronously). */
function closeAfterFailure(cipher: LogCipher, cause: unknown): void {
  try {
    const closing = cipher.close();
    if (closing instanceof Promise) closing.catch(ignoreError("the open already failed with its own error; the key store is being closed"));
  } catch (error) {
    throw new AggregateError([cause, error], "the log's open failed, and so did closing its key store");
  }
}

/**
 * A check that the log file at `path` is still the one opened (same device and inode), run before every commit (ours). SQLite keeps writing to a
 * deleted file's inode, so without it a run whose log was deleted or replaced would end `done` with everything gone.
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
 * The SQLite event log at `path` with default options, creating parent directories. Same errors as {@link createSqliteEventLog}.
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
  /** Set for encrypted logs (`crypto/log-cipher.ts`). */
  cipher?: LogCipher,
  /** The level of durable commits when `process-crash-safe` ones may commit at NORMAL (`log-group-commit.ts`). */
  relaxedSync?: "FULL" | "EXTRA",
): EventLog {
  const statements = createLogStatements(db);
  const sessionIndex = createSqliteSessionIndex(db, { writable: !readOnlyRelease, ...(cipher ? { cipher } : {}) });
  // Summary rows hold titles and first messages: an encrypted log keeps none (the list folds).
  const summaryTable = hasSummaryTable(db);
  const summaryRows = !cipher && summaryTable;
  const decode = cipher ? (record: EventRecord) => toStoredEvent(cipher.open(record)) : toStoredEvent;
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
    ...(summaryTable && !readOnlyRelease ? { summaries: cipher ? removeOnly(createSummaryStatements(db)) : createSummaryStatements(db) } : {}),
    ...(cipher ? { openRecord: cipher.open } : {}),
    ...(relaxedSync ? { relaxedSync } : {}),
    onCommitted: (batch) => {
      for (const listener of listeners) {
        if (batch && listener.committed) listener.committed(batch);
        else listener.wake();
      }
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
    } catch (error) {
      ignored("a failed data-version poll: the next tick retries; a persistent failure surfaces in the subscription's own read", error);
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

  const blobRows = createSqliteBlobRows(db, { read: ensureOpen, write: ensureWritable });
  const workspaceBlobs = createBlobStore(blobRows);
  const memoryIndex = createSqliteMemoryIndex(db, { read: ensureOpen, write: ensureWritable });
  // One writer per stream among the processes sharing the file (`sqlite-ownership.ts`).
  const ownership = readOnlyRelease ? undefined : createSqliteOwnership(db);
  return {
    ...(sessionSummaries ? { sessionSummaries } : {}),
    ...(ownership ? { ownership } : {}),
    ...(cipher ? encryptedLogParts(cipher, memoryIndex, blobRows) : { workspaceBlobs, memoryIndex }),
    append(streamId: string, events: readonly NewEvent[], appendOptions: AppendOptions = {}): Promise<AppendResult> {
      return rejectOnThrow(() => {
        ensureOpen("append");
        ensureWritable("append");
        const { expected, prepared } = prepareAppend(registry, streamId, events, appendOptions);
        const fence = ownership?.appendFence(streamId);
        if (cipher) return sealedAppend(cipher, streamId, prepared, (sealed, resolve, reject) => enqueue({ kind: "append", streamId, events: sealed, expected, ...(fence ? { fence } : {}), resolve, reject }));
        return new Promise<AppendResult>((resolve, reject) => enqueue({ kind: "append", streamId, events: prepared, expected, ...(fence ? { fence } : {}), resolve, reject }));
      });
    },

    async readStream(streamId: string, readOptions: ReadStreamOptions = {}): Promise<StoredEvent[]> {
      ensureOpen("readStream");
      const range = streamRange(streamId, readOptions);
      const limit = range.limit ?? -1;
      const rows = range.backwards ? statements.readStreamBackwards.all(streamId, range.fromVersion, limit) : statements.readStreamForwards.all(streamId, range.fromVersion, limit);
      if (cipher) await cipher.prepareRead(rows as EventRecord[]);
      return (rows as EventRecord[]).map(decode);
    },

    async readAll(readOptions: ReadAllOptions = {}): Promise<StoredEvent[]> {
      ensureOpen("readAll");
      checkReadAllOptions(readOptions);
      refuseTenantFilter("readAll", readOptions);
      const rows = statements.readRange(readOptions.fromPosition ?? 0, Number.MAX_SAFE_INTEGER, readOptions.limit ?? -1, { types: readOptions.types });
      if (cipher) await cipher.prepareRead(rows);
      return rows.map(decode);
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
      return rejectOnThrow(() => {
        ensureOpen("deleteStream");
        ensureWritable("deleteStream");
        checkStreamId(streamId);
        // The session's key goes first (`crypto/log-cipher.ts`): a delete that fails after it leaves unreadable rows.
        const destroyed = cipher?.destroy(streamId);
        const remove = () => new Promise<number>((resolve, reject) => enqueue({ kind: "delete", streamId, resolve, reject }));
        return destroyed instanceof Promise ? destroyed.then(remove) : remove();
      });
    },

    ...syncSubscriptionMethods({
      listeners,
      head,
      read: (after, upTo, limit, filter) => statements.readRange(after, upTo, limit, filter).map(decode),
      ensureOpen,
      isClosed: () => closed,
      listenersChanged: updatePolling,
    }),

    ...(sessionIndex ? { sessionIndex: guardedIndex(sessionIndex, () => ensureOpen("read the session index")) } : {}),

    async close(): Promise<void> {
      if (closed) return;
      flush();
      closed = true;
      closeListeners(listeners);
      updatePolling();
      if (readOnlyRelease) readOnlyRelease();
      else {
        ownership?.close();
        db.close();
      }
      await cipher?.close();
    },
  };
}

/** An encrypted log's summary statements: no row is written, and a delete still removes a row written before encryption was on. */
function removeOnly(statements: SummaryStatements): SummaryStatements {
  return { merge: () => undefined, remove: statements.remove };
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
