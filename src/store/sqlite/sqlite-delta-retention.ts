/**
 * The SQLite log's retention of streamed deltas (ours; the contract is `delta-retention.ts`), run by the group commit in each write's savepoint on a
 * `message.ended` with an `entryId`: `"delete"` removes the message's `message.delta` rows since its latest `message.started` (walking the
 * `(stream_id, version)` index back: the cost is the message's span), `"drop"` empties their text; it returns what went, or undefined.
 */
import type Database from "better-sqlite3";
import type { DroppedDeltas } from "../log/delta-retention.ts";
import { isEventOfType } from "../events/catalogue.ts";
import type { DeltaRetentionMode } from "../../core/vocabulary.ts";

/** One event just inserted: its type and validated data. */
interface InsertedEvent {
  type: string;
  data: unknown;
}

/** The retention step of one connection (see the module contract). */
export function createSqliteDeltaRetention(
  db: Database.Database,
  mode: Exclude<DeltaRetentionMode, "keep">,
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
