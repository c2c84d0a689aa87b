/**
 * Opening a SQLite event log read-only (ours; the `readOnly` option): Arbor writes nothing to the file or its folder. A missing path or a folder is
 * `InvalidArgumentError`; a non-Arbor, newer or pre-version-1 file is `LogSchemaError` (schema 1 is read as it is). A WAL-mode log in a folder this
 * process cannot write is read from a private snapshot copy, removed by `release()`, which does not see later appends.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { InvalidArgumentError, LogSchemaError } from "../../core/errors.ts";
import { checkSqliteMagic, classifyConnection, LOG_SCHEMA_VERSION } from "./sqlite-schema.ts";

/**
 * The oldest schema version read without migrating: version 2 only adds the session summary rows, which readers do without (they fold the events
 * instead).
 */
const MIN_READABLE_VERSION = 1;

/** A read-only connection and the function that closes it (and removes a snapshot copy). */
export interface ReadOnlyDatabase {
  db: Database.Database;
  /** True when the connection reads a snapshot copy (the folder was not writable). */
  snapshot: boolean;
  release(): void;
}

/** Opens the Arbor log at `path` read-only; see the module contract for what is refused. */
export function openReadOnlyDatabase(path: string, busyTimeoutMs: number): ReadOnlyDatabase {
  if (path === ":memory:") throw new InvalidArgumentError('readOnly needs a log file; ":memory:" starts empty.');
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) throw new InvalidArgumentError(`No event log at "${path}": readOnly opens an existing log only.`, { details: { path } });
  if (stat.isDirectory()) throw new InvalidArgumentError(`"${path}" is a folder, not an event log file.`, { details: { path } });
  if (stat.size === 0) throw new LogSchemaError(`"${path}" is an empty file, not yet an Arbor event log; it was left untouched.`, { details: { path } });
  checkSqliteMagic(path);
  const opened = openInPlaceOrSnapshot(path, busyTimeoutMs);
  try {
    const state = classifyConnection(path, opened.db);
    if (state.kind === "new") throw new LogSchemaError(`"${path}" is an empty SQLite database, not yet an Arbor event log; it was left untouched.`, { details: { path } });
    if (state.version < MIN_READABLE_VERSION) {
      throw new LogSchemaError(
        `"${path}" is an Arbor event log of schema version ${state.version}; this Arbor reads versions ${MIN_READABLE_VERSION} to ${LOG_SCHEMA_VERSION} as they are, and migrating the file writes it, which a read-only open does not do. ` +
          "Open it once for writing (e.g. any arbor command that changes a session) to migrate it; the file was left untouched.",
        { details: { path, fileVersion: state.version, supportedVersion: LOG_SCHEMA_VERSION } },
      );
    }
    return opened;
  } catch (error) {
    opened.release();
    throw error;
  }
}

function openInPlaceOrSnapshot(path: string, busyTimeoutMs: number): ReadOnlyDatabase {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
    db.pragma("schema_version", { simple: true }); // the first read is where SQLite needs the -shm file
    return { db, snapshot: false, release: () => db!.close() };
  } catch (error) {
    db?.close();
    if ((error as { code?: unknown }).code !== "SQLITE_CANTOPEN") {
      throw new LogSchemaError(`"${path}" could not be opened read-only: ${(error as Error).message}. The file was left untouched.`, { cause: error, details: { path } });
    }
  }
  // A WAL-mode file in a folder we cannot write: read a private snapshot copy.
  const folder = mkdtempSync(join(tmpdir(), "arbor-readonly-"));
  const release = (connection?: Database.Database) => {
    connection?.close();
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    const copy = join(folder, "log.db");
    copyFileSync(path, copy);
    if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
    const snapshot = new Database(copy, { fileMustExist: true, timeout: busyTimeoutMs });
    return { db: snapshot, snapshot: true, release: () => release(snapshot) };
  } catch (error) {
    release();
    throw new LogSchemaError(`"${path}" could not be read (its folder is not writable, and a snapshot copy failed): ${(error as Error).message}. The file was left untouched.`, {
      cause: error,
      details: { path },
    });
  }
}
