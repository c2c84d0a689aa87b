/**
 * The SQLite log's session summary rows in `session_summaries` (ours; semantics in `session-summary-index.ts`). {@link createSummaryStatements}
 * merges an append's summary inside the writer's transaction (extending the row only when it ends right before the append) and removes the row in a
 * delete's; {@link backfillSessionSummaries} builds every row inside the schema-2 migration.
 */
import type Database from "better-sqlite3";
import { SESSION_STREAM_PREFIX, sessionIdOfStream } from "../events/session-events.ts";
import { storedTypeNames } from "../events/upcast.ts";
import type { EventRecord } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-decode.ts";
import {
  SUMMARY_COLUMN_NAMES,
  summarizeEvents,
  summaryColumns,
  summaryMergeSet,
  summaryOfColumns,
  summaryTableColumns,
  type SessionSummaryRecord,
  type SummaryColumns,
} from "../session/session-summary-index.ts";

/** The DDL of schema version 2. */
export const SUMMARY_TABLE_SQL = `CREATE TABLE session_summaries (\n  ${summaryTableColumns("sqlite")}\n);`;

const MERGE_SQL = `INSERT INTO session_summaries AS cur (${SUMMARY_COLUMN_NAMES.join(", ")})
  VALUES (${SUMMARY_COLUMN_NAMES.map((column) => `@${column}`).join(", ")})
  ON CONFLICT (stream_id) DO UPDATE SET
    ${summaryMergeSet("cur", "max")}
  WHERE cur.version = excluded.from_version - 1`;

/** The summary statements of one (migrated, writable) connection. */
export interface SummaryStatements {
  merge(summary: SessionSummaryRecord): void;
  remove(streamId: string): void;
}

/** Prepares the writer's summary statements on `db` (schema ≥ 2). */
export function createSummaryStatements(db: Database.Database): SummaryStatements {
  const merge = db.prepare(MERGE_SQL);
  const remove = db.prepare("DELETE FROM session_summaries WHERE stream_id = ?");
  return {
    merge: (summary) => void merge.run(summaryColumns(summary)),
    remove: (streamId) => void remove.run(streamId),
  };
}

/** True when `db` has the summary table (schema ≥ 2). */
export function hasSummaryTable(db: Database.Database): boolean {
  return db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'session_summaries'").pluck().get() === 1;
}

/** Every stored summary row of `db`. */
export function readSummaryRows(db: Database.Database): SessionSummaryRecord[] {
  return (db.prepare("SELECT * FROM session_summaries").all() as SummaryColumns[]).map(summaryOfColumns);
}

/** Builds the row of every session stream from its events (see the module contract). */
export function backfillSessionSummaries(db: Database.Database): void {
  const streams = db.prepare(`SELECT stream_id AS streamId, version FROM streams WHERE stream_id LIKE '${SESSION_STREAM_PREFIX}%'`).all() as { streamId: string; version: number }[];
  const read = db.prepare(
    `SELECT global_position AS globalPosition, event_id AS eventId, stream_id AS streamId, version, type, schema_version AS schemaVersion, time,
       data AS dataJson, metadata AS metadataJson FROM events WHERE stream_id = ? AND type IN (SELECT value FROM json_each(?)) ORDER BY version`,
  );
  const types = JSON.stringify(storedTypeNames(["session.created", "entry.appended"]));
  const merge = createSummaryStatements(db).merge;
  for (const { streamId, version } of streams) {
    if (sessionIdOfStream(streamId) === undefined) continue;
    const events = (read.all(streamId, types) as EventRecord[]).map(toStoredEvent);
    merge(summarizeEvents(streamId, events, 1, version));
  }
}
