/**
 * The SQLite event log's prepared statements (ours), once per connection; rows come back with {@link EventRecord} field names. `readRange` returns
 * events in (after, upTo] in position order, filtered by stream, types (widened by `storedTypeNames`) and version; the cursor's version is found by a
 * binary search over the `(stream_id, version)` index, so a replay page costs O(log n). Transactions belong to the caller.
 */
import type Database from "better-sqlite3";
import type { EventRecord } from "../log/log-prepare.ts";
import type { SubscriptionFilter } from "../log/log-subscription.ts";
import { storedTypeNames } from "../events/upcast.ts";

const COLUMNS = `global_position AS globalPosition, event_id AS eventId, stream_id AS streamId, version, type,
  schema_version AS schemaVersion, time, data AS dataJson, metadata AS metadataJson`;

/** A prepared statement, named here so that declaration emit can name the statements. */
export interface Statement extends Database.Statement<unknown[], unknown> {}

/** The statements of one connection. */
export type LogStatements = ReturnType<typeof createLogStatements>;

/** Prepares every statement the log uses on `db` (which must be migrated). */
export function createLogStatements(db: Database.Database) {
  const prepare = (sql: string): Statement => db.prepare(sql);
  const rangeAll = prepare(
    `SELECT ${COLUMNS} FROM events WHERE global_position > ? AND global_position <= ? AND version > ? ORDER BY global_position LIMIT ?`,
  );
  const rangeTypes = prepare(
    `SELECT ${COLUMNS} FROM events WHERE global_position > ? AND global_position <= ? AND version > ?
      AND type IN (SELECT value FROM json_each(?)) ORDER BY global_position LIMIT ?`,
  );
  // Stream reads seek the (stream_id, version) index: first the last version at or before the position cursor (a binary search, see the contract),
  // then forwards.
  const selectStreamVersion = prepare("SELECT version FROM streams WHERE stream_id = ?").pluck();
  // The first stored version ≥ ? and its position (robust to a gap in the versions, which the writer never leaves).
  const positionFrom = prepare("SELECT version, global_position AS position FROM events WHERE stream_id = ? AND version >= ? ORDER BY version LIMIT 1");
  const streamVersionAt = (streamId: string, position: number): number => {
    // Invariant: every version ≤ low is at or before `position`; every version > high is after it.
    let low = 0;
    let high = (selectStreamVersion.get(streamId) as number | undefined) ?? 0;
    while (low < high) {
      const middle = low + Math.ceil((high - low) / 2);
      const row = positionFrom.get(streamId, middle) as { version: number; position: number } | undefined;
      if (row === undefined || row.position > position) high = middle - 1;
      else low = row.version;
    }
    return low;
  };
  const rangeStream = prepare(
    `SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND version > ? AND global_position > ? AND global_position <= ?
      ORDER BY version LIMIT ?`,
  );
  const rangeStreamTypes = prepare(
    `SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND version > ? AND global_position > ? AND global_position <= ?
      AND type IN (SELECT value FROM json_each(?)) ORDER BY version LIMIT ?`,
  );
  return {
    insertEvent: prepare(
      "INSERT INTO events (event_id, stream_id, version, type, schema_version, time, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    insertStream: prepare("INSERT INTO streams (stream_id, version, first_position, created_at, updated_at) VALUES (?, ?, ?, ?, ?)"),
    updateStream: prepare("UPDATE streams SET version = ?, updated_at = ? WHERE stream_id = ?"),
    selectStreamVersion,
    selectStreamPosition: prepare("SELECT global_position FROM events WHERE stream_id = ? AND version = ?").pluck(),
    selectByEventId: prepare(`SELECT ${COLUMNS} FROM events WHERE event_id = ?`),
    readStreamForwards: prepare(`SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND version >= ? ORDER BY version LIMIT ?`),
    readStreamBackwards: prepare(`SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND version <= ? ORDER BY version DESC LIMIT ?`),
    // The tenant as `StreamInfo.tenant` states it, from the first event's clear JSON (NULL when that JSON is damaged or its tenant not a string).
    listStreams: prepare(
      `SELECT s.stream_id AS streamId, s.version, s.created_at AS createdAt, s.updated_at AS updatedAt, (
        SELECT CASE WHEN e.type NOT IN ('session.created', 'session.deleted') THEN 'default' WHEN NOT json_valid(e.data) THEN NULL
          WHEN json_type(e.data, '$.tenant') IS NULL THEN 'default' WHEN json_type(e.data, '$.tenant') = 'text' THEN json_extract(e.data, '$.tenant') END
        FROM events e WHERE e.stream_id = s.stream_id AND e.version = 1) AS tenant
      FROM streams s ORDER BY s.first_position`,
    ),
    deleteEvents: prepare("DELETE FROM events WHERE stream_id = ?"),
    deleteStream: prepare("DELETE FROM streams WHERE stream_id = ?"),
    headPosition: prepare("SELECT max(global_position) FROM events").pluck(),
    dataVersion: prepare("PRAGMA data_version").pluck(),
    readRange(after: number, upTo: number, limit: number, filter: SubscriptionFilter): EventRecord[] {
      const afterVersion = filter.afterVersion ?? 0;
      const types = filter.types === undefined ? undefined : JSON.stringify(storedTypeNames(filter.types));
      if (filter.streamId !== undefined) {
        const seen = after === 0 ? 0 : streamVersionAt(filter.streamId, after);
        const fromVersion = Math.max(afterVersion, seen);
        return (
          types === undefined
            ? rangeStream.all(filter.streamId, fromVersion, after, upTo, limit)
            : rangeStreamTypes.all(filter.streamId, fromVersion, after, upTo, types, limit)
        ) as EventRecord[];
      }
      return (
        types === undefined ? rangeAll.all(after, upTo, afterVersion, limit) : rangeTypes.all(after, upTo, afterVersion, types, limit)
      ) as EventRecord[];
    },
  };
}
