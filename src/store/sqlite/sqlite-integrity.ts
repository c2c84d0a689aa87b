/**
 * `checkSqliteLogFile`, for `arbor doctor` (ours): opens the file read-only, runs `PRAGMA integrity_check`, then decodes every stored event as a
 * read would (sealed data checked as JSON only). It returns every problem (at most `maxProblems`, default 50) naming the file and the event's position; a
 * changed letter inside a valid JSON string is not found (SQLite keeps no row checksum).
 */
import Database from "better-sqlite3";
import type { EventRecord } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-prepare.ts";
import { isSealedData } from "../crypto/sealed-record.ts";

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

/** Checks the file (see the module contract). Never throws for a damaged file: it reports it. */
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
        // Sealed data (an encrypted log) cannot be opened without its key here: its envelope is checked as JSON, the rest of the row as usual.
        toStoredEvent(isSealedData(row.dataJson) ? { ...row, dataJson: row.dataJson.replace('{"$enc":', '{"sealed":') } : row);
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
