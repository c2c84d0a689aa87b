/**
 * `checkSqliteLogFile`: a full check of a SQLite event log file, for `arbor doctor`.
 *
 * Contract (ours):
 * - opens the file read-only (never writes, never creates it) and runs SQLite's own
 *   `PRAGMA integrity_check` (b-tree structure, page and cell layout, index entries against their
 *   rows, `NOT NULL` and `UNIQUE` constraints), then decodes every stored event in log order as a
 *   read would (`toStoredEvent`: its data and metadata JSON, its schema version);
 * - returns every problem found (at most `maxProblems`, default 50), each naming the file and,
 *   for an event, its stream, version and global position; `ok` only when there are none;
 * - limits: SQLite keeps no checksum of a row's content, so garbage that leaves a row's JSON
 *   valid (a changed letter inside a string) is not found by any check; a damaged file can make
 *   SQLite itself refuse to open it, reported as one problem.
 *
 * @example
 * ```ts
 * const report = checkSqliteLogFile(".arbor/arbor.db");
 * if (!report.ok) console.error(report.problems.join("\n"));
 * ```
 */
import Database from "better-sqlite3";
import type { EventRecord } from "./log-prepare.ts";
import { toStoredEvent } from "./log-prepare.ts";

/** The outcome of {@link checkSqliteLogFile}. */
export interface LogFileCheck {
  /** The file checked. */
  path: string;
  ok: boolean;
  /** Events decoded (0 when the file could not be read). */
  events: number;
  /** What is wrong, each naming the file. */
  problems: string[];
}

/**
 * Checks the file (see the module contract). Never throws for a damaged file: it reports it.
 *
 * @example
 * ```ts
 * checkSqliteLogFile("/tmp/arbor.db").ok; // true for an intact log
 * ```
 */
export function checkSqliteLogFile(path: string, options: { maxProblems?: number } = {}): LogFileCheck {
  const max = options.maxProblems ?? 50;
  const problems: string[] = [];
  let events = 0;
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const integrity = db.prepare("PRAGMA integrity_check").pluck().all() as string[];
    for (const line of integrity) if (line !== "ok" && problems.length < max) problems.push(`${path}: SQLite integrity check: ${line}`);
    const rows = db.prepare(
      `SELECT global_position AS globalPosition, event_id AS eventId, stream_id AS streamId, version, type, schema_version AS schemaVersion, time, data AS dataJson, metadata AS metadataJson FROM events ORDER BY global_position`,
    );
    for (const row of rows.iterate() as Iterable<EventRecord>) {
      events += 1;
      try {
        toStoredEvent(row);
      } catch (error) {
        if (problems.length < max) problems.push(`${path}: ${(error as Error).message}`);
      }
    }
  } catch (error) {
    if (problems.length < max) problems.push(`${path}: cannot be read as an Arbor event log: ${(error as Error).message}`);
  } finally {
    db?.close();
  }
  return { path, ok: problems.length === 0, events, problems };
}
