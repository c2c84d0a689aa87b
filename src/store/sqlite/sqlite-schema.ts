/**
 * The SQLite event log's file format and its migrations (ours): `PRAGMA application_id` and `user_version` in the header, one `arbor_migrations`
 * row per migration. {@link inspectLogFile} refuses a non-SQLite file, a foreign database or a newer schema with `LogSchemaError` (`details.reason`
 * `"not_sqlite"`, `"foreign"`, `"newer"`; a header that cannot be read has none), without writing;
 * {@link migrate} re-checks the version under the write lock and applies the missing migrations in one transaction.
 * Version 1: `events` (AUTOINCREMENT positions, never reused) and `streams`; version 2: `session_summaries` (`sqlite-summaries.ts`), backfilled.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import { LogSchemaError } from "../../core/errors.ts";
import { backfillSessionSummaries, SUMMARY_TABLE_SQL } from "./sqlite-summaries.ts";

/** "ARBR" as a big-endian 32-bit integer: the SQLite header's application id of an Arbor log. */
export const ARBOR_APPLICATION_ID = 0x41524252;

/** One schema migration. */
export interface LogMigration {
  version: number;
  name: string;
  sql: string;
  /** Runs after `sql`, in the same transaction (a backfill of what `sql` created). */
  run?(db: Database.Database): void;
}

/** Every migration, in version order. The last one's version is {@link LOG_SCHEMA_VERSION}. */
export const LOG_MIGRATIONS: readonly LogMigration[] = [
  {
    version: 1,
    name: "events-and-streams",
    sql: `
      CREATE TABLE arbor_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TEXT NOT NULL
      );
      CREATE TABLE events (
        global_position INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL UNIQUE,
        stream_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        type TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        time TEXT NOT NULL,
        data TEXT NOT NULL,
        metadata TEXT NOT NULL,
        UNIQUE (stream_id, version)
      );
      CREATE TABLE streams (
        stream_id TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        first_position INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    // Schema 2: per-session summary rows kept by the writer; built from the events once.
    version: 2,
    name: "session-summaries",
    sql: SUMMARY_TABLE_SQL,
    run: backfillSessionSummaries,
  },
];

/** The schema version this build reads and writes. */
export const LOG_SCHEMA_VERSION = LOG_MIGRATIONS[LOG_MIGRATIONS.length - 1].version;

/** What {@link inspectLogFile} found. */
export type LogFileState = { kind: "new" } | { kind: "arbor"; version: number };

const SQLITE_MAGIC = "SQLite format 3\u0000";

/** Classifies `path` without writing it. Throws `LogSchemaError` for a file that must not be opened as an event log (see the module contract). */
export function inspectLogFile(path: string, supportedVersion: number = LOG_SCHEMA_VERSION): LogFileState {
  if (path === ":memory:" || path === "") return { kind: "new" };
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return { kind: "new" };
  }
  if (size === 0) return { kind: "new" };
  checkSqliteMagic(path);
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return classifyConnection(path, db, supportedVersion);
  } finally {
    db.close();
  }
}

/** Throws `LogSchemaError` unless the non-empty file at `path` starts with SQLite's header magic (reads 16 bytes, writes nothing). */
export function checkSqliteMagic(path: string): void {
  const header = Buffer.alloc(16);
  const fd = openSync(path, "r");
  try {
    readSync(fd, header, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString("latin1") !== SQLITE_MAGIC) {
    throw new LogSchemaError(`"${path}" is not a SQLite database, so it is not an Arbor event log. The file was left untouched.`, {
      details: { path, reason: "not_sqlite" },
    });
  }
}

/** Classifies the database behind an open (read-only) connection to `path`; same refusals as {@link inspectLogFile}. */
export function classifyConnection(path: string, db: Database.Database, supportedVersion: number = LOG_SCHEMA_VERSION): LogFileState {
  try {
    return classify(path, readHeader(db), supportedVersion);
  } catch (error) {
    if (LogSchemaError.isInstance(error)) throw error;
    throw new LogSchemaError(`"${path}" could not be read as an Arbor event log: ${(error as Error).message}. The file was left untouched.`, {
      cause: error,
      details: { path },
    });
  }
}

interface HeaderState {
  applicationId: number;
  userVersion: number;
  objects: number;
}

/**
 * Reads the header fields and the schema's size in one read transaction: as three separate statements, a reader could see the header of a log
 * another process was still creating and the tables of its committed schema (application_id 0 beside 9 objects) and refuse a good log.
 */
function readHeader(db: Database.Database): HeaderState {
  const read = (): HeaderState => ({
    applicationId: db.pragma("application_id", { simple: true }) as number,
    userVersion: db.pragma("user_version", { simple: true }) as number,
    objects: db.prepare("SELECT count(*) FROM sqlite_schema").pluck().get() as number,
  });
  return db.inTransaction ? read() : db.transaction(read).deferred();
}

function classify(path: string, state: HeaderState, supportedVersion: number): LogFileState {
  if (state.applicationId === ARBOR_APPLICATION_ID) {
    if (state.userVersion > supportedVersion) {
      throw new LogSchemaError(
        `"${path}" is an Arbor event log of schema version ${state.userVersion}, newer than this Arbor's ${supportedVersion}. Upgrade Arbor to open it; the file was left untouched.`,
        { details: { path, reason: "newer", fileVersion: state.userVersion, supportedVersion } },
      );
    }
    return state.userVersion === 0 && state.objects === 0 ? { kind: "new" } : { kind: "arbor", version: state.userVersion };
  }
  if (state.applicationId === 0 && state.objects === 0) return { kind: "new" };
  throw new LogSchemaError(
    `"${path}" is a SQLite database but not an Arbor event log (application_id ${state.applicationId}, ${state.objects} schema objects). Refusing to open it; the file was left untouched.`,
    { details: { path, reason: "foreign", applicationId: state.applicationId } },
  );
}

/**
 * Brings an open, writable connection to the last of `migrations` (default {@link LOG_MIGRATIONS}, i.e. {@link LOG_SCHEMA_VERSION}) in one `BEGIN
 * IMMEDIATE` transaction: all missing migrations apply, or none (a failing one rolls back the lot and its error is rethrown). Throws `LogSchemaError`
 * if, under the write lock, the file turns out to be newer or foreign. Returns the versions applied.
 */
export function migrate(db: Database.Database, path: string, migrations: readonly LogMigration[] = LOG_MIGRATIONS): number[] {
  const latest = migrations[migrations.length - 1].version;
  const run = db.transaction((): number[] => {
    const state = classify(path, readHeader(db), latest);
    const from = state.kind === "new" ? 0 : state.version;
    const applied: number[] = [];
    const now = new Date().toISOString();
    for (const migration of migrations) {
      if (migration.version <= from) continue;
      db.exec(migration.sql);
      migration.run?.(db);
      db.prepare("INSERT INTO arbor_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(migration.version, migration.name, now);
      applied.push(migration.version);
    }
    if (applied.length > 0) {
      db.pragma(`application_id = ${ARBOR_APPLICATION_ID}`);
      db.pragma(`user_version = ${latest}`);
    }
    return applied;
  });
  return run.immediate();
}
