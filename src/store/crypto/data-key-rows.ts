/**
 * Where wrapped data keys are kept (ours): rows `(keyId, masterKeyId, wrapped)`, one per session, beside (never inside) the content they unlock.
 * The store (a file, a table) is created by the first `insert`, never by an open or a read: until then it reads as empty. `insert` keeps the first row stored for a key id (the race's winner); `destroy` leaves no copy in the store's files (SQLite: `secure_delete` and a
 * WAL truncate; PostgreSQL: `VACUUM FULL`); `rewrap` applies only while the row is wrapped by `fromMasterKeyId`. SQLite rows answer synchronously,
 * PostgreSQL rows asynchronously ({@link MaybePromise}).
 */
import type { MaybePromise } from "./master-key.ts";

/** One stored data key. */
export interface DataKeyRow {
  /** The session id whose content the key encrypts. */
  keyId: string;
  /** `KeyProvider.id` of the master key that wrapped it. */
  masterKeyId: string;
  wrapped: Buffer;
}

/** The key store of one log (see the module contract). */
export interface DataKeyRows {
  /** Where the rows are, for messages: the key file's path, or `<key schema>.data_keys`. */
  readonly name: string;
  /** True once the store exists (another process may have created it since the open). */
  exists(): MaybePromise<boolean>;
  get(keyId: string): MaybePromise<DataKeyRow | undefined>;
  /** Stores the row unless one of its key id is stored, creating the store when it does not exist yet; returns the stored row. */
  insert(row: DataKeyRow): MaybePromise<DataKeyRow>;
  /** Deletes the row; true when there was one. */
  destroy(keyId: string): MaybePromise<boolean>;
  rewrap(row: DataKeyRow, fromMasterKeyId: string): MaybePromise<boolean>;
  /** Every row's key id and master key id. */
  list(): MaybePromise<{ keyId: string; masterKeyId: string }[]>;
  /** Removes the old copies of destroyed or re-wrapped rows from the store's files (after a rotation). */
  compact(): MaybePromise<void>;
  close(): MaybePromise<void>;
}

/** `fn(value)` at once for a value, after it for a promise: synchronous key stores and providers stay synchronous. */
export function chain<T, R>(value: MaybePromise<T>, fn: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}
