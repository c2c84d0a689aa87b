/**
 * The `EventLog` over an opened SQLite connection (`sqlite-event-log.ts` opens it and states the log's contract): appends and deletes go through
 * the group-commit writer, reads decode (and, encrypted, open) rows, in-process subscribers are woken by commits and by polling
 * `PRAGMA data_version` while any is open, and every method refuses once the log is closed (`LogClosedError`) or, read-only, a write
 * (`InvalidStateError`).
 */
import type Database from "better-sqlite3";
import { InvalidStateError, LogClosedError } from "../../core/errors.ts";
import type { AppendOptions, AppendResult, EventLog, ListStreamsOptions, NewEvent, ReadAllOptions, ReadStreamOptions, StoredEvent, StreamInfo } from "../event-log.ts";
import type { EventRegistry } from "../events/registry.ts";
import { createGroupCommitWriter } from "./log-group-commit.ts";
import type { ActiveDeltaRetention } from "../log/delta-retention.ts";
import { createLogStatements } from "./log-statements.ts";
import { checkReadAllOptions, checkStreamId, type EventRecord, refuseTenantFilter } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-decode.ts";
import { prepareAppend, rejectOnThrow, streamRange } from "../log/log-requests.ts";
import { closeListeners, type CommitListener, syncSubscriptionMethods } from "../log/log-subscription.ts";
import { createSqliteOwnership } from "./sqlite-ownership.ts";
import { createSqliteSessionIndex } from "./sqlite-session-index.ts";
import { createSqliteSealedBatches } from "./sqlite-sealed-batches.ts";
import type { SessionIndex } from "../session/session-index.ts";
import { createBlobStore } from "../workspace/blob-store.ts";
import { createSqliteBlobRows } from "../workspace/sqlite-blob-rows.ts";
import { createSqliteMemoryIndex } from "../memory/sqlite-memory-index.ts";
import type { SessionSummaryIndex } from "../session/session-summary-index.ts";
import { createSummaryStatements, hasSummaryTable, readSummaryRows, type SummaryStatements } from "./sqlite-summaries.ts";
import type { LogCipher } from "../crypto/log-cipher.ts";
import { encryptedLogParts, sealedAppend } from "../crypto/encrypted-log-parts.ts";
import { ignored } from "../../core/ignored.ts";

/** The log over `db`, migrated or opened read-only (see the module contract); `beforeCommit` runs before every commit (the file guard). */
export function openLog(
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
  // A file reads its batch heads synchronously: an encrypted SQLite log seals the durable events of an append in one operation (`sealed-batch.ts`).
  const sealedBatches = cipher ? createSqliteSealedBatches(db, { writable: !readOnlyRelease }) : undefined;
  if (cipher && sealedBatches) cipher.sealInBatches(sealedBatches.headAt);
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
    ...(sealedBatches ? { sealedBatches } : {}),
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
  /** A stream's stored rows, unopened (`log.encryption.readClear`). */
  const readRecords = async (streamId: string): Promise<EventRecord[]> => {
    ensureOpen("readClear");
    checkStreamId(streamId);
    return statements.readStreamForwards.all(streamId, 1, -1) as EventRecord[];
  };
  return {
    ...(sessionSummaries ? { sessionSummaries } : {}),
    ...(ownership ? { ownership } : {}),
    ...(cipher ? encryptedLogParts(cipher, memoryIndex, blobRows, readRecords) : { workspaceBlobs, memoryIndex }),
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
      return (statements.listStreams.all() as (StreamInfo & { tenant: string | null })[]).map(({ tenant, ...stream }) => (tenant === null ? stream : { ...stream, tenant }));
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
