/**
 * `checkSqliteLogFile`, for `arbor doctor` (ours): opens the file read-only, runs `PRAGMA integrity_check`, then decodes every stored event as a
 * read would (sealed data checked as JSON only; a sealed batch's head must have its ciphertext row) and audits each stream's versions for lost events (`version-gaps.ts`: a missing version the delete
 * retention of deltas cannot have removed, or versions missing after the last stored event). It returns every problem (at most `maxProblems`,
 * default 50) naming the file and the event's position, or the stream and versions; a changed letter inside a valid JSON string is not found (SQLite
 * keeps no row checksum). A path that is not an Arbor event log is thrown, not reported: it is not damage, and nothing is checked.
 */
import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { InvalidArgumentError, LogSchemaError } from "../../core/errors.ts";
import { checkSqliteMagic, classifyConnection } from "./sqlite-schema.ts";
import { createSqliteSealedBatches } from "./sqlite-sealed-batches.ts";
import type { EventRecord } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-decode.ts";
import { isSealedData } from "../crypto/sealed-record.ts";
import { createStreamGapAudit, type LostVersions } from "../session/version-gaps.ts";

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
 * Checks the file (see the module contract), writing nothing. Never throws for a damaged file: it reports it, a file whose SQLite header reads but
 * whose schema does not included.
 *
 * @throws InvalidArgumentError for a missing path or a folder; LogSchemaError for a file that is not an Arbor event log: an empty file, a file that
 * is not a SQLite database, another application's database, an empty SQLite database, or a log of a newer schema version. Nothing was checked.
 */
export function checkSqliteLogFile(path: string, options: { maxProblems?: number } = {}): LogFileCheck {
  const max = options.maxProblems ?? 50;
  const problems: string[] = [];
  let events = 0;
  refuseNonLogFile(path);
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    refuseNonLogDatabase(path, db);
    const integrity = db.prepare("PRAGMA integrity_check").pluck().all() as string[];
    for (const line of integrity) if (line !== "ok" && problems.length < max) problems.push(`${path}: SQLite integrity check: ${line}`);
    const rows = db.prepare(
      `SELECT global_position AS globalPosition, event_id AS eventId, stream_id AS streamId, version, type, schema_version AS schemaVersion, time, data AS dataJson, metadata AS metadataJson FROM events ORDER BY global_position`,
    );
    const audit = createStreamGapAudit();
    const report = (found: LostVersions[]) => {
      for (const gap of found) if (problems.length < max) problems.push(`${path}: ${describeLost(gap)}`);
    };
    for (const row of rows.iterate() as Iterable<EventRecord>) {
      events += 1;
      const sealed = isSealedData(row.dataJson);
      let data: unknown;
      try {
        // Sealed data (an encrypted log) cannot be opened without its key here: its envelope is checked as JSON, the rest of the row as usual.
        const event = toStoredEvent(sealed ? { ...row, dataJson: row.dataJson.replace('{"$enc":', '{"sealed":') } : row);
        if (!sealed) data = event.data;
      } catch (error) {
        if (problems.length < max) problems.push(`${path}: ${(error as Error).message}`);
      }
      report(audit.next({ streamId: row.streamId, version: row.version, type: row.type, data }));
    }
    const recorded = db.prepare("SELECT stream_id AS streamId, version FROM streams").all() as { streamId: string; version: number }[];
    report(audit.end(new Map(recorded.map((stream) => [stream.streamId, stream.version]))));
    // An encrypted log's sealed batches: a head whose ciphertext row is gone leaves every event of its batch unreadable.
    for (const orphan of createSqliteSealedBatches(db, { writable: false }).headsWithoutCiphertext()) {
      if (problems.length < max) problems.push(`${path}: stream "${orphan.streamId}" version ${orphan.version} heads a sealed batch whose ciphertext is missing: the events of that batch cannot be read.`);
    }
  } catch (error) {
    if (LogSchemaError.isInstance(error) && typeof error.details.reason === "string") throw error;
    if (problems.length < max) problems.push(`${path}: cannot be read as an Arbor event log: ${(error as Error).message}`);
  } finally {
    db?.close();
  }
  return { path, ok: problems.length === 0, events, problems };
}

/** One line naming a lost event's stream and versions. */
function describeLost(gap: LostVersions): string {
  const versions = gap.from === gap.to ? `version ${gap.from}` : `versions ${gap.from}-${gap.to}`;
  return `stream "${gap.streamId}" is missing ${versions} (${gap.reason}): an event was lost; the delete retention removes only the deltas of kept messages.`;
}

/** Throws for a path that is no event log file at all (see {@link checkSqliteLogFile}); reads at most the header's first 16 bytes. */
function refuseNonLogFile(path: string): void {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) throw new InvalidArgumentError(`No file at "${path}": there is no event log to check.`, { details: { path } });
  if (stat.isDirectory()) throw new InvalidArgumentError(`"${path}" is a folder, not an event log file.`, { details: { path } });
  if (stat.size === 0) throw new LogSchemaError(`"${path}" is an empty file, not an Arbor event log.`, { details: { path, reason: "empty" } });
  checkSqliteMagic(path);
}

/**
 * Throws `LogSchemaError` (with `details.reason`) for a SQLite database that is not an Arbor log; a header or schema that cannot be read is thrown
 * without a reason (damage, reported by the caller).
 */
function refuseNonLogDatabase(path: string, db: Database.Database): void {
  if (classifyConnection(path, db).kind === "new") {
    throw new LogSchemaError(`"${path}" is an empty SQLite database, not yet an Arbor event log.`, { details: { path, reason: "empty" } });
  }
}
