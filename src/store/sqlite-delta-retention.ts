/**
 * The SQLite log's retention of streamed deltas (ours; the contract is
 * `delta-retention.ts`), run by the group commit right after it inserts each event.
 *
 * Contract:
 * - {@link createSqliteDeltaRetention} prepares its statements once per connection; the function
 *   it returns acts only on a `message.ended` with an `entryId`, inside the caller's transaction
 *   (the write's savepoint: a rolled-back write rolls its retention back with it);
 * - `"delete"` deletes the `message.delta` rows of that message between its latest
 *   `message.started` before the `message.ended` and the `message.ended` (found by walking the
 *   `(stream_id, version)` index back from the `message.ended`: the cost is the message's span,
 *   not the stream's length); no `message.started`, nothing deleted. The `streams` row is not
 *   touched, so the stream's version and every other row stay as they were;
 * - `"drop"` empties the `delta` text of that message's deltas (the rows stay);
 * - returns what was deleted or emptied (events, UTF-8 bytes of text), or undefined for nothing.
 *
 * @example
 * ```ts
 * const retain = createSqliteDeltaRetention(db, "delete");
 * const saved = retain("session-1", preparedEvent, 42); // { messageId, events, bytes } | undefined
 * ```
 */
import type Database from "better-sqlite3";
import type { DroppedDeltas } from "./delta-retention.ts";
import { isEventOfType } from "./events/catalogue.ts";

/** One event just inserted: its type and validated data. */
interface InsertedEvent {
  type: string;
  data: unknown;
}

/**
 * The retention step of one connection (see the module contract).
 *
 * @example
 * ```ts
 * const retain = createSqliteDeltaRetention(db, "drop");
 * ```
 */
export function createSqliteDeltaRetention(
  db: Database.Database,
  mode: "drop" | "delete",
): (streamId: string, event: InsertedEvent, version: number) => DroppedDeltas | undefined {
  if (mode === "delete") {
    const deleteDeltas = db.prepare(
      `DELETE FROM events WHERE stream_id = @stream AND version < @ended
         AND version > (SELECT version FROM events WHERE stream_id = @stream AND version < @ended AND type = 'message.started'
                          AND json_extract(data, '$.messageId') = @message ORDER BY version DESC LIMIT 1)
         AND type = 'message.delta' AND json_extract(data, '$.messageId') = @message
       RETURNING length(CAST(json_extract(data, '$.delta') AS BLOB)) AS bytes`,
    );
    return (streamId, event, version) => {
      if (!isEventOfType(event, "message.ended") || event.data.entryId === undefined) return undefined;
      const rows = deleteDeltas.all({ stream: streamId, message: event.data.messageId, ended: version }) as { bytes: number | null }[];
      if (rows.length === 0) return undefined;
      let bytes = 0;
      for (const row of rows) bytes += row.bytes ?? 0;
      return { messageId: event.data.messageId, events: rows.length, bytes };
    };
  }
  const measureDeltas = db.prepare(
    "SELECT count(*) AS events, coalesce(sum(length(CAST(json_extract(data, '$.delta') AS BLOB))), 0) AS bytes FROM events WHERE stream_id = ? AND type = 'message.delta' AND json_extract(data, '$.messageId') = ? AND json_extract(data, '$.delta') <> ''",
  );
  const emptyDeltas = db.prepare(
    "UPDATE events SET data = json_set(data, '$.delta', '') WHERE stream_id = ? AND type = 'message.delta' AND json_extract(data, '$.messageId') = ? AND json_extract(data, '$.delta') <> ''",
  );
  return (streamId, event) => {
    if (!isEventOfType(event, "message.ended") || event.data.entryId === undefined) return undefined;
    const saved = measureDeltas.get(streamId, event.data.messageId) as { events: number; bytes: number };
    if (saved.events === 0) return undefined;
    emptyDeltas.run(streamId, event.data.messageId);
    return { messageId: event.data.messageId, events: saved.events, bytes: saved.bytes };
  };
}
