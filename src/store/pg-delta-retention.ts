/**
 * The PostgreSQL log's `endedMessageDeltas: "delete"` retention (ours; the contract
 * is `delta-retention.ts`).
 *
 * Contract:
 * - {@link deletionsOf} lists, per append of a flush, the messages it ends and keeps
 *   (`message.ended` with an `entryId`) with the version each `message.ended` will get;
 * - {@link appendAndDeleteDeltas} runs `append_batch` and the deletes in ONE transaction on one
 *   pooled connection (`BEGIN` … `COMMIT`): for each such message of an append that succeeded
 *   (not a conflict, a fenced write or an idempotent retry), the `message.delta` rows of that
 *   message between its latest `message.started` and its `message.ended` are deleted (the
 *   `(stream_id, version)` index walked back from the `message.ended`). Any error rolls the whole
 *   flush back and is rethrown (the writer rejects every write of it); the savings are reported
 *   after the commit. The `streams` row and every other row stay as they were.
 *
 * @example
 * ```ts
 * const deleting = deletionsOf(writes);
 * const outcomes = await appendAndDeleteDeltas(pool, '"arbor"', batchJson, commitTime, deleting, console.log);
 * ```
 */
import type pg from "pg";
import type { DroppedDeltas } from "./delta-retention.ts";
import { isEventOfType } from "./events/catalogue.ts";
import type { PgWrite } from "./pg-writer.ts";

/**
 * One kept message ended by write `write` of a flush: its `message.ended` is the `offset`-th
 * event from the append's end (0: the last).
 */
export interface DeltaDeletion {
  write: number;
  streamId: string;
  messageId: string;
  offset: number;
}

/**
 * The kept messages each append of `writes` ends (see the module contract).
 *
 * @example
 * ```ts
 * deletionsOf(writes); // [{ write: 0, streamId: "session-1", messageId: "m1", offset: 0 }]
 * ```
 */
export function deletionsOf(writes: readonly PgWrite[]): DeltaDeletion[] {
  const found: DeltaDeletion[] = [];
  writes.forEach((write, index) => {
    if (write.kind !== "append") return;
    write.events.forEach((event, at) => {
      if (isEventOfType(event, "message.ended") && event.data.entryId !== undefined) {
        found.push({ write: index, streamId: write.streamId, messageId: event.data.messageId, offset: write.events.length - 1 - at });
      }
    });
  });
  return found;
}

/**
 * `append_batch` and the deletes of `deleting` in one transaction; returns the outcomes.
 *
 * @throws the pg error of any statement (after a `ROLLBACK`: nothing of the flush is written).
 * @example
 * ```ts
 * const outcomes = await appendAndDeleteDeltas(pool, '"arbor"', batchJson, new Date().toISOString(), deleting, report);
 * ```
 */
export async function appendAndDeleteDeltas(
  pool: pg.Pool,
  schema: string,
  batchJson: string,
  commitTime: string,
  deleting: readonly DeltaDeletion[],
  report: (saved: DroppedDeltas) => void,
): Promise<unknown[]> {
  const client = await pool.connect();
  const saved: DroppedDeltas[] = [];
  let outcomes: { ok?: boolean; version?: number | string }[];
  try {
    await client.query("BEGIN");
    outcomes = (await client.query<{ outcomes: typeof outcomes }>(`SELECT ${schema}.append_batch($1::json, $2) AS outcomes`, [batchJson, commitTime])).rows[0].outcomes;
    for (const item of deleting) {
      const outcome = outcomes[item.write];
      if (outcome?.ok !== true || outcome.version === undefined) continue;
      const endedVersion = Number(outcome.version) - item.offset;
      const rows = (
        await client.query<{ bytes: number | null }>(
          `DELETE FROM ${schema}.events WHERE stream_id = $1 AND version < $3
             AND version > (SELECT version FROM ${schema}.events WHERE stream_id = $1 AND version < $3 AND type = 'message.started'
                              AND data->>'messageId' = $2 ORDER BY version DESC LIMIT 1)
             AND type = 'message.delta' AND data->>'messageId' = $2
           RETURNING octet_length(data->>'delta') AS bytes`,
          [item.streamId, item.messageId, endedVersion],
        )
      ).rows;
      if (rows.length > 0) saved.push({ messageId: item.messageId, events: rows.length, bytes: rows.reduce((sum, row) => sum + Number(row.bytes ?? 0), 0) });
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    client.release();
    throw error;
  }
  client.release();
  for (const item of saved) {
    try {
      report(item);
    } catch {
      // An observer's error does not undo a commit.
    }
  }
  return outcomes;
}
