/**
 * The SQLite key store (ours; `data-key-rows.ts`): wrapped data keys in their own file beside the log (`arbor.db` → `arbor.keys.db`), WAL,
 * `synchronous = FULL`, `secure_delete = ON`, and a non-waiting `wal_checkpoint(TRUNCATE)` after a destroy. The file is created by the first
 * `insert` (the first sealed write), never by an open or a read: until then `exists()` is false and the store reads as empty. Another SQLite
 * database is `LogSchemaError`. Synchronous.
 */
import { existsSync, realpathSync } from "node:fs";
import Database from "better-sqlite3";
import { LogSchemaError } from "../../core/errors.ts";
import type { DataKeyRow, DataKeyRows } from "./data-key-rows.ts";
import { ignored } from "../../core/ignored.ts";
import { KEY_CHECK_ID } from "./session-keys.ts";

const APPLICATION_ID = 0x41524b59; // "ARKY"

/**
 * The default key file of a log file: `x.db` → `x.keys.db`, any other name → `<name>.keys`; `:memory:` stays in memory. A log reached through a
 * symbolic link has its key file beside the file the link points to (the same log has one key file, whichever path opens it).
 */
export function keyFileBeside(path: string): string {
  if (path === ":memory:") return path;
  const real = existsSync(path) ? realpathSync(path) : path;
  return real.endsWith(".db") ? `${real.slice(0, -3)}.keys.db` : `${real}.keys`;
}

/**
 * How many keys the key file at `path` holds besides the key check (a session's or a tenant's workspace key each; none when every sealed session
 * was deleted), read without writing it; undefined when it cannot be read as a key file.
 */
export function countStoredKeys(path: string): number | undefined {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    return db.prepare("SELECT count(*) FROM arbor_data_keys WHERE key_id <> ?").pluck().get(KEY_CHECK_ID) as number;
  } catch (error) {
    ignored("a key file that cannot be read is described without its count", error);
    return undefined;
  } finally {
    db?.close();
  }
}

/**
 * The key store at `path`: opened at once when the file exists (or is `:memory:`), else when it appears or at the first `insert`, which creates it
 * (a read-only store creates nothing: its `insert` fails).
 *
 * @throws LogSchemaError for a SQLite file that is not a key store.
 */
export function openSqliteDataKeys(path: string, options: { readOnly: boolean; busyTimeoutMs?: number }): DataKeyRows {
  let opened = path === ":memory:" || existsSync(path) ? openKeyFile(path, options) : undefined;
  let closed = false;
  /** The open store, opening the file when it has appeared since (never after `close`). */
  const present = (): DataKeyRows | undefined => (opened ??= !closed && existsSync(path) ? openKeyFile(path, options) : undefined);
  return {
    name: `"${path}"`,
    exists: () => present() !== undefined,
    get: (keyId) => present()?.get(keyId),
    insert: (row) => (opened ??= openKeyFile(path, options)).insert(row),
    destroy: (keyId) => present()?.destroy(keyId) ?? false,
    compact: () => present()?.compact(),
    rewrap: (row, from) => present()?.rewrap(row, from) ?? false,
    list: () => present()?.list() ?? [],
    close: () => {
      closed = true;
      return opened?.close();
    },
  };
}

/** Opens (creating when writable) the key file. */
function openKeyFile(path: string, options: { readOnly: boolean; busyTimeoutMs?: number }): DataKeyRows {
  const db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000, readonly: options.readOnly && path !== ":memory:", fileMustExist: options.readOnly && path !== ":memory:" });
  try {
    const appId = db.pragma("application_id", { simple: true }) as number;
    const tables = db.prepare("SELECT count(*) FROM sqlite_master").pluck().get() as number;
    if (appId !== APPLICATION_ID && !(appId === 0 && tables === 0)) {
      throw new LogSchemaError(`"${path}" is a SQLite database but not an Arbor key file; it was left untouched.`, { details: { path } });
    }
    if (!options.readOnly || path === ":memory:") {
      if (path !== ":memory:") db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      db.pragma("secure_delete = ON");
      db.exec(`CREATE TABLE IF NOT EXISTS arbor_data_keys (key_id TEXT PRIMARY KEY, master_key_id TEXT NOT NULL, wrapped BLOB NOT NULL, created_at TEXT NOT NULL)`);
      // Set once: setting it is a write, and an open with the wrong master key must leave the file as it was.
      if (appId !== APPLICATION_ID) db.pragma(`application_id = ${APPLICATION_ID}`);
    }
  } catch (error) {
    db.close();
    throw error;
  }
  /** Moves zeroed pages into the file and empties the WAL, without waiting for other connections. */
  const checkpoint = (): void => {
    if (path === ":memory:" || options.readOnly) return;
    try {
      db.pragma("busy_timeout = 0");
      db.pragma("wal_checkpoint(TRUNCATE)");
    } catch (error) {
      ignored("another connection holds the WAL: its copies of the zeroed page go at the next checkpoint", error);
    } finally {
      db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    }
  };
  const select = db.prepare("SELECT key_id AS keyId, master_key_id AS masterKeyId, wrapped FROM arbor_data_keys WHERE key_id = ?");
  const insert = db.prepare("INSERT INTO arbor_data_keys (key_id, master_key_id, wrapped, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (key_id) DO NOTHING");
  const remove = db.prepare("DELETE FROM arbor_data_keys WHERE key_id = ?");
  const update = db.prepare("UPDATE arbor_data_keys SET master_key_id = ?, wrapped = ? WHERE key_id = ? AND master_key_id = ?");
  const list = db.prepare("SELECT key_id AS keyId, master_key_id AS masterKeyId FROM arbor_data_keys ORDER BY key_id");
  return {
    name: `"${path}"`,
    exists: () => true,
    get: (keyId) => select.get(keyId) as DataKeyRow | undefined,
    insert(row) {
      insert.run(row.keyId, row.masterKeyId, row.wrapped, new Date().toISOString());
      return select.get(row.keyId) as DataKeyRow;
    },
    destroy(keyId) {
      const removed = remove.run(keyId).changes > 0;
      if (removed) checkpoint();
      return removed;
    },
    compact: checkpoint,
    rewrap: (row, from) => update.run(row.masterKeyId, row.wrapped, row.keyId, from).changes > 0,
    list: () => list.all() as { keyId: string; masterKeyId: string }[],
    close: () => {
      db.close();
    },
  };
}
