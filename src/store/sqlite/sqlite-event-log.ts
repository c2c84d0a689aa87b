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
import { ArborError, InvalidArgumentError, LogFileReplacedError, LogSchemaError } from "../../core/errors.ts";
import type { EventLog } from "../event-log.ts";
import { createDefaultEventRegistry } from "../events/index.ts";
import type { EventRegistry } from "../events/registry.ts";
import { resolveDeltaRetention, type DeltaRetention } from "../log/delta-retention.ts";
import { openReadOnlyDatabase } from "./sqlite-read-only.ts";
import { openLog } from "./sqlite-open-log.ts";
import { inspectLogFile, migrate } from "./sqlite-schema.ts";
import { createLogCipher, encryptionProvider, type EncryptionOptions, type LogCipher } from "../crypto/log-cipher.ts";
import { streamsOfKey } from "../crypto/session-keys.ts";
import { keyFileBeside, openSqliteDataKeys } from "../crypto/sqlite-data-keys.ts";
import { ignoreError } from "../../core/ignored.ts";

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
   * The key file is created by the first sealed write, never by an open or a read: a log with no key file yet (nothing in it is sealed) opens and
   * reads with any key, read-only too, and is bound to a master key by its first sealed write.
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
    // A key store is created by the first sealed write; never for a log that already holds sealed data (its store was lost or moved away).
    // With a session's key id: its streams only (a destroyed key whose rows remain is never made anew).
    const holdsSealedData = (keyId?: string) =>
      db !== undefined &&
      (keyId === undefined
        ? db.prepare("SELECT 1 FROM events WHERE substr(data, 1, 8) = '{\"$enc\":' LIMIT 1").get()
        : db.prepare("SELECT 1 FROM events WHERE stream_id IN (?, ?, ?) AND substr(data, 1, 8) = '{\"$enc\":' LIMIT 1").get(...streamsOfKey(keyId))) !== undefined;
    const cipher = createLogCipher(encryption, openSqliteDataKeys(encryption.keyFile ?? keyFileBeside(path), { readOnly, busyTimeoutMs }), { log: `"${path}"`, readOnly, holdsSealedData });
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
    // The key check of an existing key store first: with another master key nothing of the log is opened, not even to read. A key store is only
    // created by a sealed write, so beside a file that is a log.
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
