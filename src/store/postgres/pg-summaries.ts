/**
 * The PostgreSQL log's session summary rows (ours; semantics in `session-summary-index.ts`, merged by `append_rows`): {@link summaryJson} is an
 * append's `sm` field, {@link backfillPgSessionSummaries} builds every row inside the migration, {@link readPgSummaries} reads them.
 */
import type { ClientBase, Pool } from "pg";
import { SESSION_STREAM_PREFIX, sessionIdOfStream } from "../events/session-events.ts";
import { storedTypeNames } from "../events/upcast.ts";
import type { EventRecord, PreparedEvent } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-decode.ts";
import { summarizeEvents, summaryColumns, summaryOfColumns, type SessionSummaryRecord, type SummaryColumns } from "../session/session-summary-index.ts";

/** `columns` with the booleans PostgreSQL's columns take. */
function pgValues(columns: SummaryColumns): Record<string, unknown> {
  return { ...columns, starts: columns.starts === 1, name_set: columns.name_set === 1 };
}

/** The JSON text of an append's summary for `append_rows`, or undefined when `streamId` is not a session's. */
export function summaryJson(streamId: string, events: readonly PreparedEvent[]): string | undefined {
  if (sessionIdOfStream(streamId) === undefined || events.length === 0) return undefined;
  return JSON.stringify(pgValues(summaryColumns(summarizeEvents(streamId, events, 1))));
}

const INSERT = (s: string): string => `INSERT INTO ${s}.session_summaries SELECT * FROM json_populate_record(NULL::${s}.session_summaries, $1::json) ON CONFLICT (stream_id) DO NOTHING`;

/** Builds the row of every session stream from its events, with `client` inside the migration's transaction. */
export async function backfillPgSessionSummaries(client: ClientBase, schema: string): Promise<void> {
  const streams = await client.query<{ stream_id: string; version: string }>(`SELECT stream_id, version FROM ${schema}.streams WHERE stream_id LIKE '${SESSION_STREAM_PREFIX}%'`);
  const types = storedTypeNames(["session.created", "entry.appended"]);
  for (const { stream_id: streamId, version } of streams.rows) {
    const rows = await client.query<EventRecord>(
      `SELECT global_position AS "globalPosition", event_id AS "eventId", stream_id AS "streamId", version, type, schema_version AS "schemaVersion", time,
         data::text AS "dataJson", metadata::text AS "metadataJson" FROM ${schema}.events WHERE stream_id = $1 AND type = ANY($2) ORDER BY version`,
      [streamId, types],
    );
    const events = rows.rows.map((row) => toStoredEvent({ ...row, globalPosition: Number(row.globalPosition), version: Number(row.version) }));
    await client.query(INSERT(schema), [JSON.stringify(pgValues(summaryColumns(summarizeEvents(streamId, events, 1, Number(version)))))]);
  }
}

/** The stored rows (of `tenant`'s streams when given). */
export async function readPgSummaries(pool: Pool, schema: string, tenant: string | undefined): Promise<SessionSummaryRecord[]> {
  const rows = await pool.query<SummaryColumns>(
    `SELECT r.* FROM ${schema}.session_summaries r JOIN ${schema}.streams st ON st.stream_id = r.stream_id WHERE ($1::text IS NULL OR st.tenant = $1)`,
    [tenant ?? null],
  );
  return rows.rows.map(summaryOfColumns);
}
