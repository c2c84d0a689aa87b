/**
 * The PostgreSQL log's `endedMessageDeltas: "delete"` retention (ours; the contract is `delta-retention.ts`): {@link deletionsOf} lists the
 * messages each append ends and keeps, and {@link appendAndDeleteDeltas} runs `append_rows` and their delta deletes in ONE transaction (any error
 * rolls the flush back); savings are reported after the commit.
 */
import type pg from "pg";
import type { QueryConfig } from "pg";
import type { DroppedDeltas } from "../log/delta-retention.ts";
import { isEventOfType } from "../events/catalogue.ts";
import type { PgWrite } from "./pg-writer.ts";
import { ignoreError, ignored } from "../../core/ignored.ts";

/** One kept message ended by write `write` of a flush: its `message.ended` is the `offset`-th event from the append's end (0: the last). */
export interface DeltaDeletion {
  write: number;
  streamId: string;
  messageId: string;
  offset: number;
}

/** The kept messages each append of `writes` ends (see the module contract). */
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
 * The `append_rows` call `append` and the deletes of `deleting` in one transaction; returns the outcomes.
 *
 * @throws the pg error of any statement (after a `ROLLBACK`: nothing of the flush is written).
 */
export async function appendAndDeleteDeltas(
  pool: pg.Pool,
  schema: string,
  append: QueryConfig,
  deleting: readonly DeltaDeletion[],
  report: (saved: DroppedDeltas) => void,
): Promise<unknown[]> {
  const client = await pool.connect();
  const saved: DroppedDeltas[] = [];
  let outcomes: { ok?: boolean; version?: number | string }[];
  try {
    await client.query("BEGIN");
    outcomes = (await client.query<{ outcomes: typeof outcomes }>(append)).rows[0].outcomes;
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
    await client.query("ROLLBACK").catch(ignoreError("a failed ROLLBACK after a failed transaction; the transaction's error is thrown"));
    client.release();
    throw error;
  }
  client.release();
  for (const item of saved) {
    try {
      report(item);
    } catch (error) {
      ignored("a delta-retention observer threw; it cannot undo a commit", error);
    }
  }
  return outcomes;
}
